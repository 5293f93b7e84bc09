"""The state an ICS session's parts share (:class:`SessionState`), and how they send hub
commands.

Each part of a session (:mod:`~server.transport.ics.lobby`, :mod:`~server.transport.ics.play`,
:mod:`~server.transport.ics.people`, :mod:`~server.transport.ics.stored`,
:mod:`~server.transport.ics.settings`, :mod:`~server.transport.ics.render`) holds one
:class:`SessionState` and imports no other part: what two parts both need lives here."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from server.hub.commands import Command, Envelope, command_of
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.fields import MAX_CHAT_LENGTH
from server.hub.identity import PlayerInfo
from server.hub.lobby import MAX_SEEKS_PER_PLAYER
from server.hub.messages import MessageKind
from server.hub.payloads import ChallengeView, PlayerView
from server.hub.review_payloads import MyGameView
from server.hub.user_text import text_problem
from server.jsontypes import JsonObject
from server.transport.ics.args import number
from server.transport.ics.games import GameNumbers, GameView
from server.transport.ics.online import ListedPlayer
from server.transport.ics.parse import CommandLine
from server.transport.ics.review import Examination, ReviewStore, StoreViews
from server.transport.review_reads import ReviewReads
from server.transport.tournament_service import TournamentService

__all__ = [
    "CommandHandler",
    "IcsHost",
    "Json",
    "ListedPlayer",
    "ReplyHandler",
    "SessionPart",
    "SessionState",
    "error_text",
    "number",
]

Json = JsonObject
"""A hub message's payload as a session reads it: a command's answer is an ``ack``, an
``error`` or the command's own message, so its handler reads the fields of the kind it got."""
ReplyHandler = Callable[[str, Json], list[str]]
"""Answers a command's reply: (message type ``ack``/``error``/…, payload) -> lines."""
CommandHandler = Callable[[CommandLine], Awaitable[None] | None]
"""Runs one typed command (a part's ``on_<word>`` method; an awaitable when it reads the
store)."""


class IcsHost(Protocol):
    """What an ICS session needs from its server process besides the hub."""

    @property
    def numbers(self) -> GameNumbers: ...

    @property
    def store(self) -> ReviewStore | None: ...

    @property
    def reads(self) -> ReviewReads | None:
        """The stored-game reads' gate and limits (:mod:`server.transport.review_reads`)."""
        ...

    def requester(self, name: str) -> str:
        """Whose stored-game reads ``name``'s count as (an account or an address key)."""
        ...

    def online(self) -> list[ListedPlayer]: ...

    def tell(self, sender: str, name: str, text: str) -> bool:
        """Deliver a private message to an ICS connection of ``name``; False if none."""
        ...

    def later(self, delay_s: float, call: Callable[[], None]) -> None:
        """Call ``call`` in ``delay_s`` seconds (on the event loop)."""
        ...

    @property
    def tournaments(self) -> TournamentService | None:
        """The tournament director, or None: no tournament commands here."""
        ...

    def hub_player(self, player_id: str) -> PlayerInfo | None:
        """The hub's copy of an online player (its ratings follow the games played since the
        login), or None when not online."""
        ...

    async def my_games(self, player_id: str) -> list[MyGameView] | None:
        """A registered player's running games as the store lists them (the "your turn"
        list's one read), or None: a guest, no store, or the store did not answer."""
        ...


_FICS_WORDS: dict[str, str] = {
    ErrorCode.NOT_YOUR_TURN: "It is not your move.",
    ErrorCode.STALE_MOVE: "It is not your move.",
    ErrorCode.GAME_OVER: "The game is over.",
    ErrorCode.BUSY: "Your previous action is being saved; try again in a moment.",
    ErrorCode.NO_SUCH_SEEK: "That seek is not available.",
    ErrorCode.OWN_SEEK: "You cannot respond to your own seek.",
    ErrorCode.SELF_CHALLENGE: "You can't match yourself.",
    ErrorCode.ALREADY_PLAYING: "You are already playing a game.",
    ErrorCode.CORRESPONDENCE_LIMIT: "You play as many correspondence games as allowed.",
    ErrorCode.SEEK_LIMIT: f"You can only have {MAX_SEEKS_PER_PLAYER} active seeks.",
    ErrorCode.NO_SUCH_CHALLENGE: "There is no such offer.",
    ErrorCode.ABORT_TOO_LATE: 'It is too late to abort this game; use "resign".',
    ErrorCode.DRAW_OFFERS_UNAVAILABLE: "Draw offers are not part of this variant.",
    ErrorCode.NOT_A_PLAYER: "You are not playing a game.",
    ErrorCode.NO_MOVE_TO_TAKE_BACK: "There are no moves in your game.",
    ErrorCode.TAKEBACK_RATED: "Takebacks are for unrated games only.",
    ErrorCode.GUESTS_CASUAL_ONLY: "Guests may only play unrated games.",
    ErrorCode.NO_SUCH_TOURNAMENT: "There is no such tournament.",
}
"""Where FICS has its own words for a refusal (the codes are :class:`ErrorCode`'s)."""


def error_text(code: str, message: str) -> str:
    """A hub error in FICS words where FICS has them, else the hub's message."""
    if code == ErrorCode.SEEK_LIMIT and "correspondence" in message:
        return message  # the stored seeks' own limit: FICS's words name the real-time one
    return _FICS_WORDS.get(code, message)


class SessionState:
    """What every part of a session shares: who, the followed games, pending answers, the
    variables; how a command is sent and its answer awaited."""

    def __init__(
        self,
        player: PlayerView,
        send: Callable[[Command], None],
        write: Callable[[list[str]], None],
        host: IcsHost,
    ) -> None:
        self.player = player
        self.name: str = player["name"]
        self._send = send
        self.write = write
        """Lines of text for the client."""
        self.host = host
        self._acks = 0
        self.pending: dict[int, ReplyHandler] = {}
        """Commands sent and not answered yet: ack id -> what to show of the reply."""
        self.games: dict[str, GameView] = {}
        self.playing: str | None = None
        """The primary game: the game of the player's that typed moves, resign, draw …
        act on (its real-time game, else the correspondence game last made primary)."""
        self.correspondence: list[str] = []
        """The player's running correspondence games (joined at login, in the order told)."""
        self.quiet: set[str] = set()
        """Correspondence games joined at login: their first snapshot shows no board."""
        self.last_game: str | None = None
        self.starting: set[str] = set()
        self.resume: str | None = None
        """The running game ``hello`` named, until it is joined (after the client's setup)."""
        self.resuming: set[str] = set()
        """Games joined again after login: their snapshot says ``Continuing``."""
        self.observing_asked: set[str] = set()
        self.challenges: dict[int, ChallengeView] = {}
        self.offers: dict[str, str] = {}  # game id -> kind offered to me
        self.vars: dict[str, int] = {
            "style": 12,
            "seek": 1,
            "seekinfo": 0,
            "seekremove": 0,
            "ms": 0,
            "startpos": 0,
            "nowrap": 0,
            "lock": 0,
            "wide12": 0,
        }
        self.examination: Examination | None = None
        self.views = StoreViews(host.store, host.numbers, host.reads)
        self.quit = False
        self.change_password: Callable[[str, str], Awaitable[list[str]]] | None = None
        """Set by the connection: give the player a new password (old, new); the lines to
        write."""

    @property
    def ms(self) -> bool:
        """Clocks in milliseconds (``iset ms 1``)."""
        return bool(self.vars["ms"])

    @property
    def wide(self) -> bool:
        """Style 12 even for boards too wide for XBoard (``iset wide12 1``)."""
        return bool(self.vars["wide12"])

    # ================================================================ sending

    def command(
        self, kind: str, fields: Mapping[str, object], handler: ReplyHandler | None = None
    ) -> None:
        """Send the hub command ``kind`` with the payload ``fields`` (the websocket frame's
        ``d``) and the next ack id; the reply carrying that id goes to ``handler`` (none: the
        reply is not shown).

        The command is read by :func:`~server.hub.commands.command_of`, the one reading of
        every door's frames (the websocket's through ``read_frame``), so its fields pass the
        websocket's checks; a refusal is answered through ``handler`` as the hub's ``error``
        (``bad_request``) would be, and nothing is sent."""
        self._acks += 1
        ack = self._acks
        try:
            command = command_of(Envelope(kind, fields, ack))
        except ProtocolError as error:
            if handler is not None:
                self.write(handler(MessageKind.ERROR, {"code": error.code, "message": str(error)}))
            return
        if handler is not None:
            self.pending[ack] = handler
        self._send(command)

    def plain(self, done: str = "") -> ReplyHandler:
        """A handler printing ``done`` on success and the error otherwise."""

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR:
                return [error_text(data.get("code", ""), data.get("message", ""))]
            return [done] if done else []

        return answer

    def current(self) -> GameView | None:
        """The unfinished game this player plays, if any."""
        game = self.games.get(self.playing or "")
        return game if game is not None and not game.finished else None

    def answered(self, challenge_id: int, done: str = "") -> ReplyHandler:
        """The answer to accept/decline/withdraw: the challenge is over either way (an error
        means it was gone already)."""

        def answer(kind: str, data: Json) -> list[str]:
            challenge = self.challenges.pop(challenge_id, None)
            if kind == MessageKind.ERROR:
                return [error_text(data.get("code", ""), data.get("message", ""))]
            if done and challenge is not None:
                return [f"Challenge {challenge_id} {done}."]
            return []

        return answer

    def in_game(self, act: Callable[[GameView], None]) -> None:
        """``act`` on the game being played, or say there is none."""
        game = self.current()
        if game is None:
            self.write(["You are not playing a game."])
            return
        act(game)

    def refused_text(self, text: str) -> bool:
        """Whether ``text`` is not user text (:mod:`server.hub.user_text`), saying so. The line
        reader refuses such lines already; this holds for text that reaches others without a
        hub command's check (an ICS tell) or in a command built here (a chat line)."""
        problem = text_problem(text)
        if problem is not None:
            self.write([f"Not sent: your text {problem}."])
        return problem is not None

    def chat(self, game: GameView | None, text: str, done: str) -> None:
        """Say ``text`` in ``game``'s chat (``done``: the line shown once it is sent)."""
        if game is None:
            self.write(["You are not playing or observing a game."])
            return
        if not text.strip():
            self.write(["Say what?"])
            return
        if self.refused_text(text):
            return
        self.command(
            "chat", {"game": game.game_id, "text": text[:MAX_CHAT_LENGTH]}, self.plain(done)
        )


class SessionPart:
    """A part of an ICS session (:class:`~server.transport.ics.session.IcsSession`): it holds
    the session's one :class:`SessionState` and nothing else. A part that answers command words
    names them in its ``commands()`` (word -> handler); the session merges those tables into
    the one it dispatches through."""

    __slots__ = ("state",)

    def __init__(self, state: SessionState) -> None:
        self.state = state
