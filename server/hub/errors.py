"""Errors of the hub core, and the one list of error codes every door answers with.

:class:`ErrorCode` names every ``code`` an ``error`` message (websocket), an HTTP error body
(review API) or an ICS error line can carry, each with its default text; docs/protocol.md's
"Error codes" table lists the same codes (``tests/test_vocabulary.py`` checks both ways).
:class:`ProtocolError` means a client frame is malformed (unknown type, missing or wrong-typed field).
:class:`CommandError` means a well-formed command was refused (not your turn, seek limit reached, ...);
the hub turns it into an ``error`` message for the client and changes nothing.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # payloads imports ErrorCode from here
    from server.hub.payloads import RoomStateView


class ErrorCode(StrEnum):
    """A stable, machine-readable reason for refusing a frame, command or request.

    The value is the wire spelling; :attr:`text` the default sentence a player reads (call sites
    may pass a more precise one, e.g. naming the seek or the field).

    >>> ErrorCode.NOT_YOUR_TURN == "not_your_turn", ErrorCode.NOT_YOUR_TURN.text
    (True, 'It is not your turn.')
    """

    text: str

    def __new__(cls, value: str, text: str) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.text = text
        return member

    @classmethod
    def of(cls, value: object) -> ErrorCode | None:
        """The member spelled ``value`` on the wire, or None (a door reading a hub error back).

        >>> ErrorCode.of("busy") is ErrorCode.BUSY, ErrorCode.of("no such code")
        (True, None)
        """
        member = cls._value2member_map_.get(value) if isinstance(value, str) else None
        return cast("ErrorCode | None", member)

    # --- frames and sessions (transport)
    BAD_REQUEST = "bad_request", "The frame does not follow the protocol."
    BAD_JSON = "bad_json", "The frame is not valid JSON."
    BAD_FRAME = "bad_frame", "Binary frames are not supported; send JSON text frames."
    RATE_LIMITED = "rate_limited", "Too many messages; this one was ignored."
    NOT_AUTHENTICATED = "not_authenticated", "Log in first: register, login, guest or resume."
    ALREADY_AUTHENTICATED = "already_authenticated", "This connection is already logged in."
    INTERNAL_ERROR = "internal_error", "The server failed on this command."
    TIMEOUT = "timeout", "The hub did not answer in time; retry."
    INVALID_NAME = (
        "invalid_name",
        ("A name has 3 to 20 characters: a letter, then letters, digits, '_' or '-'."),
    )
    INVALID_PASSWORD = "invalid_password", "The password is too short or too long."
    NAME_TAKEN = "name_taken", "That name is taken."
    BAD_CREDENTIALS = "bad_credentials", "Wrong name or password."
    BAD_SESSION = "bad_session", "This session has ended; please log in again."
    TOO_MANY_ATTEMPTS = (
        "too_many_attempts",
        "Too many failed logins or registrations; wait before trying again.",
    )
    UNAVAILABLE = "unavailable", "The database is unavailable; please try again soon."
    # --- review and export
    NOT_FOUND = "not_found", "No such game or resource."
    UNSUPPORTED_FORMAT = "unsupported_format", "This export format is for shogi variants only."
    CORRUPT_RECORD = "corrupt_record", "The stored game cannot be read back."
    ANALYSIS_EXISTS = "analysis_exists", "This game already has a computer analysis."
    NO_ANALYSIS = "no_analysis", "This game has no computer analysis yet."
    REGISTERED_ONLY = (
        "registered_only",
        "Only registered players can do this; log in with an account.",
    )
    ANALYSIS_QUOTA = (
        "analysis_quota",
        "You have requested as many analyses as a day allows; try again later.",
    )
    ANALYSIS_RUNNING = (
        "analysis_running",
        "Your previous analysis is not finished yet; one at a time.",
    )
    ANALYSIS_TOO_LONG = (
        "analysis_too_long",
        "This analysis would take the computer too long; ask for less time a position.",
    )
    # --- lobby
    UNKNOWN_VARIANT = "unknown_variant", "Unknown variant."
    GUESTS_CASUAL_ONLY = "guests_casual_only", "Guests play casual games only."
    BYOYOMI_UNAVAILABLE = "byoyomi_unavailable", "Byoyomi is for shogi variants."
    ALREADY_PLAYING = "already_playing", "Finish your current game first."
    CORRESPONDENCE_LIMIT = (
        "correspondence_limit",
        "You play as many correspondence games as allowed; finish one first.",
    )
    PLAYER_BUSY = "player_busy", "That player is playing a game."
    SEEK_LIMIT = "seek_limit", "You have too many open seeks; withdraw one first."
    CHALLENGE_LIMIT = "challenge_limit", "You have too many open challenges; withdraw one first."
    CHALLENGE_EXISTS = "challenge_exists", "You already have an open challenge to this player."
    NO_SUCH_SEEK = "no_such_seek", "That seek is no longer open."
    OWN_SEEK = "own_seek", "That is your own seek."
    RATING_OUT_OF_RANGE = "rating_out_of_range", "Your rating is outside the seek's range."
    NO_SUCH_PLAYER = "no_such_player", "No such player is online."
    SELF_CHALLENGE = "self_challenge", "You cannot challenge yourself."
    NO_SUCH_CHALLENGE = "no_such_challenge", "There is no such open challenge."
    COMPUTER_UNAVAILABLE = (
        "computer_unavailable",
        "The computer is not available on this server now.",
    )
    COMPUTER_GUEST_LIMIT = (
        "computer_guest_limit",
        "Too many guests are playing the computer now; log in, or try again later.",
    )
    # --- rooms
    NO_SUCH_GAME = "no_such_game", "There is no such game here."
    NOT_A_PLAYER = "not_a_player", "Only the game's players can do that."
    NOT_JOINED = "not_joined", "Join the game before chatting in it."
    BUSY = "busy", "The previous action is being saved; try again."
    GAME_OVER = "game_over", "The game is over."
    STALE_MOVE = "stale_move", "That move was meant for another move number."
    NOT_YOUR_TURN = "not_your_turn", "It is not your turn."
    ILLEGAL_MOVE = "illegal_move", "Illegal move."
    MOVE_NOT_SAVED = "move_not_saved", "The move could not be saved; play it again."
    TAKEBACK_NOT_SAVED = "takeback_not_saved", "The takeback could not be saved; the game goes on."
    GAME_NOT_CREATED = "game_not_created", "The game could not be created; please try again."
    RESIGN_NOT_SAVED = "resign_not_saved", "The resignation could not be saved; the game goes on."
    DRAW_NOT_SAVED = "draw_not_saved", "The draw could not be saved; the game goes on."
    BERSERK_NOT_SAVED = "berserk_not_saved", "The berserk could not be saved; nothing changed."
    ABORT_NOT_SAVED = "abort_not_saved", "The abort could not be saved; the game goes on."
    ABANDON_NOT_SAVED = "abandon_not_saved", "The claim could not be saved; the game goes on."
    ABORT_TOO_LATE = "abort_too_late", "A game can be aborted only before both players have moved."
    NO_DRAW_CLAIM = "no_draw_claim", "There is no draw to claim in this position."
    DRAW_OFFERS_UNAVAILABLE = "draw_offers_unavailable", "This variant has no draw offers."
    OFFER_PENDING = "offer_pending", "Your offer is already pending."
    NO_OFFER = "no_offer", "There is no offer to answer."
    TAKEBACK_RATED = "takeback_rated", "Takebacks are for casual games only."
    TAKEBACK_CORRESPONDENCE = (
        "takeback_correspondence",
        "Takebacks are for real-time games only.",
    )
    TAKEBACK_TOURNAMENT = (
        "takeback_tournament",
        "Takebacks are not allowed in tournament games.",
    )
    REMATCH_TOURNAMENT = (
        "rematch_tournament",
        "Tournament games are not rematched: the tournament pairs the next game.",
    )
    PREMOVES_CORRESPONDENCE = (
        "premoves_correspondence",
        "Conditional premoves are for correspondence games only.",
    )
    PREMOVES_NOT_NOW = (
        "premoves_not_now",
        "Conditional premoves are set while your opponent is to move.",
    )
    ILLEGAL_PREMOVE = "illegal_premove", "A move of a conditional line is illegal."
    PREMOVES_CONFLICT = (
        "premoves_conflict",
        "Two conditional lines answer the same moves differently.",
    )
    PREMOVES_NOT_SAVED = (
        "premoves_not_saved",
        "The conditional premoves could not be saved; the previous ones stay.",
    )
    OFFER_NOT_SAVED = (
        "offer_not_saved",
        "The correspondence seek or challenge could not be saved; it is not open.",
    )
    NO_MOVE_TO_TAKE_BACK = "no_move_to_take_back", "You have no move to take back."
    GAME_NOT_FINISHED = "game_not_finished", "A rematch can be offered after the game."
    OPPONENT_OFFLINE = "opponent_offline", "Your opponent is not online."
    OPPONENT_PRESENT = "opponent_present", "Your opponent is connected."
    TOO_EARLY = "too_early", "Your opponent may still come back; wait."
    ABORT_INSTEAD = "abort_instead", "Before both players have moved, abort the game instead."
    EMPTY_MESSAGE = "empty_message", "A chat line needs some text."
    # --- tournaments (server.hub.tournament.state's refusals)
    NO_SUCH_TOURNAMENT = "no_such_tournament", "There is no such tournament."
    TOURNAMENT_LIMIT = "tournament_limit", "You created as many tournaments as a day allows."
    TOURNAMENT_ENTRY_LIMIT = (
        "tournament_entry_limit",
        "Too many tournament joins, withdrawals and pauses in a minute; wait a little.",
    )
    NOT_BERSERKABLE = (
        "not_berserkable",
        "No berserk here: only before your first move, once, in a tournament game that allows it.",
    )
    TOURNAMENT_FINISHED = "tournament_finished", "This tournament is over or closed to entries."
    ALREADY_ENTERED = "already_entered", "You are already in this tournament."
    NOT_ENTERED = "not_entered", "You are not in this tournament."
    TOURNAMENT_FULL = "tournament_full", "This tournament is full."
    WRONG_TOURNAMENT_PASSWORD = "wrong_tournament_password", "Wrong tournament password."
    RATING_TOO_LOW = "rating_too_low", "Your rating is below this tournament's minimum."
    BOTS_NOT_ALLOWED = "bots_not_allowed", "Bots may not enter this tournament."
    COMPUTER_NOT_ALLOWED = "computer_not_allowed", "The computer may not enter this tournament."
    NOT_ARENA = "not_arena", "Only an arena can be paused."
    ALREADY_PAUSED = "already_paused", "Your entry is already paused."
    NOT_PAUSED = "not_paused", "Your entry is not paused."
    # --- several servers
    CLUSTER_UNAVAILABLE = (
        "cluster_unavailable",
        (
            "This needs another server of the cluster, which cannot be reached right now; "
            "your games on this server go on. Please retry shortly."
        ),
    )
    NODE_UNAVAILABLE = (
        "node_unavailable",
        (
            "The server running this is not reachable right now (another server takes its games "
            "over within seconds). Please retry shortly."
        ),
    )


class ProtocolError(ValueError):
    """A decoded client frame does not follow docs/protocol.md.

    ``code`` is always :attr:`ErrorCode.BAD_REQUEST`; the message names the offending field;
    ``ack`` is the frame's ack id, when valid, for the answer to echo (set by
    ``server.hub.incoming.read_frame``).
    """

    code = ErrorCode.BAD_REQUEST
    ack: int | str | None = None


class CommandError(Exception):
    """A command that the hub refuses.

    :param code: stable machine-readable reason (documented in docs/protocol.md).
    :param message: a sentence a player can read; the code's default text when omitted.
    :param state: the room's state, sent with the refusal of a room command (``d.state``).
    """

    def __init__(
        self, code: ErrorCode, message: str | None = None, state: RoomStateView | None = None
    ) -> None:
        text = code.text if message is None else message
        super().__init__(text)
        self.code = code
        self.message = text
        self.state = state
