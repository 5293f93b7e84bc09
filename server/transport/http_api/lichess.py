"""Our hub's messages in lichess's Bot API shapes (docs/bots.md has the mapping).

Sides: the first player (who moves first: White, sente, the Persians) is lichess's ``white``,
the second ``black``. Moves are our coordinate strings (the websocket ``legal`` list's), joined by
spaces. Clocks in milliseconds; under byoyomi ``wtime``/``btime`` are the main time left and
``wbyoyomi``/``bbyoyomi``, ``wperiods``/``bperiods`` the current period's time and the periods left.

Each object the API sends has a ``TypedDict`` here, with lichess's field names (camelCase, as
lichess spells them) and as much of lichess's object as we fill. A key's place in the JSON is
the order the builder writes it in, not the order it is declared in.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from server.hub.payloads import (
    ChallengeView,
    GameSnapshot,
    PlayerView,
    SideName,
    TimeControlView,
)
from server.rules import get_variant

__all__ = [
    "OK",
    "AiChallengeAnswer",
    "ChallengeEvent",
    "ChallengeObject",
    "ChatLineEvent",
    "ErrorAnswer",
    "EventStreamLine",
    "GameEvent",
    "GameEventInfo",
    "GameFullEvent",
    "GameStateEvent",
    "GameStreamLine",
    "NowPlayingAnswer",
    "OkAnswer",
    "OpponentGoneEvent",
    "PendingChallengeAnswer",
    "StreamLine",
    "challenge_view",
    "colour_of",
    "decline_reason",
    "game_event",
    "game_full",
    "game_state",
    "status_of",
]


# ------------------------------------------------------------------------- shared parts


class VariantObject(TypedDict):
    key: str
    name: str
    short: str


class PerfObject(TypedDict):
    name: str


class StatusObject(TypedDict):
    name: str


class ClockObject(TypedDict):
    """A game's clock in ms (``gameFull``'s ``clock``): ``byoyomi``, ``periods`` under byoyomi."""

    initial: int
    increment: int
    byoyomi: NotRequired[int]
    periods: NotRequired[int]


class ClockTimeControl(TypedDict):
    """A challenge's Fischer clock, in seconds."""

    type: Literal["clock"]
    limit: int
    increment: int
    show: str


class ByoyomiTimeControl(TypedDict):
    """A challenge's byoyomi clock, in seconds (not lichess's: its shape follows ``clock``)."""

    type: Literal["byoyomi"]
    limit: int
    byoyomi: int
    periods: int
    show: str


class CorrespondenceTimeControl(TypedDict):
    """A challenge's correspondence clock (lichess's)."""

    type: Literal["correspondence"]
    daysPerTurn: int


class UnlimitedTimeControl(TypedDict):
    """A challenge without a clock (lichess's)."""

    type: Literal["unlimited"]


TimeControlObject = (
    ClockTimeControl | ByoyomiTimeControl | CorrespondenceTimeControl | UnlimitedTimeControl
)
"""A challenge's ``timeControl``."""


class UserObject(TypedDict):
    """A player of a game or challenge (``white``, ``black``, ``challenger``, ``destUser``)."""

    id: str
    name: str
    title: str | None
    rating: int | None
    provisional: bool


class NoUser(TypedDict):
    """A player not known to the snapshot or challenge: ``{}``."""


class OpponentObject(TypedDict):
    id: str
    username: str
    rating: int | None


class CompatObject(TypedDict):
    bot: bool
    board: bool


# ------------------------------------------------------------ the game stream's lines


class GameStateEvent(TypedDict):
    """``gameState``: the moves, clocks and offers; ``winner`` once there is one."""

    type: Literal["gameState"]
    moves: str
    status: str
    wtime: int
    winc: int
    wbyoyomi: NotRequired[int]
    wperiods: NotRequired[int]
    btime: int
    binc: int
    bbyoyomi: NotRequired[int]
    bperiods: NotRequired[int]
    wdraw: bool
    bdraw: bool
    wtakeback: bool
    btakeback: bool
    winner: NotRequired[str]


class GameFullEvent(TypedDict):
    """``gameFull``: a game stream's first line."""

    type: Literal["gameFull"]
    id: str
    variant: VariantObject
    clock: ClockObject | None
    """``None`` for a correspondence or unlimited game (lichess's ``null``)."""
    daysPerTurn: NotRequired[int]
    """A correspondence game's days per move (lichess's)."""
    speed: str
    perf: PerfObject
    rated: bool
    createdAt: NotRequired[int]
    """When the game was created (ms since the epoch), as stored; left out if not known."""
    white: UserObject | NoUser
    black: UserObject | NoUser
    initialFen: str
    state: GameStateEvent


class ChatLineEvent(TypedDict):
    type: Literal["chatLine"]
    room: Literal["player", "spectator"]
    username: str
    text: str


class OpponentGoneEvent(TypedDict):
    """The opponent left (``claimWinInSeconds`` until the bot may claim the win) or is back."""

    type: Literal["opponentGone"]
    gone: bool
    claimWinInSeconds: NotRequired[int]


# ----------------------------------------------------------- the event stream's lines


class GameEventInfo(TypedDict):
    """A game as the event stream (``gameStart``, ``gameFinish``) and ``nowPlaying`` show it,
    from the bot's side."""

    gameId: str
    fullId: str
    id: str
    color: str
    fen: str
    hasMoved: bool
    isMyTurn: bool
    lastMove: str
    opponent: OpponentObject
    rated: bool
    speed: str
    perf: str
    source: str
    status: StatusObject
    variant: VariantObject
    winner: str | None
    compat: CompatObject
    tournamentId: NotRequired[str]
    """A tournament's game: its tournament (``source`` is then ``arena``)."""
    secondsLeft: NotRequired[int | None]
    """Time left to the player to move in a correspondence game (lichess's); ``None`` without
    a clock."""


class GameEvent(TypedDict):
    type: Literal["gameStart", "gameFinish"]
    game: GameEventInfo


class ChallengeObject(TypedDict):
    """A challenge (``challenge`` events, ``POST /api/challenge/{user}``'s answer)."""

    id: str
    url: str
    status: str
    challenger: UserObject | NoUser
    destUser: UserObject | NoUser
    variant: VariantObject
    rated: bool
    speed: str
    timeControl: TimeControlObject
    color: str
    perf: PerfObject
    declineReason: NotRequired[str]
    """``challengeDeclined``: the reason as text (lichess's sentence for one of its keys)."""
    declineReasonKey: NotRequired[str]
    """``challengeDeclined``: lichess's key (``generic``, ``later``, ``tooFast`` ...)."""


class ChallengeEvent(TypedDict):
    type: Literal["challenge", "challengeDeclined", "challengeCanceled"]
    challenge: ChallengeObject


EventStreamLine = GameEvent | ChallengeEvent
"""A line of the event stream (``GET /api/stream/event``)."""

GameStreamLine = GameFullEvent | GameStateEvent | ChatLineEvent | OpponentGoneEvent
"""A line of a game stream (``GET /api/bot/game/stream/{id}``)."""

StreamLine = EventStreamLine | GameStreamLine


# ------------------------------------------------------------------- plain answers


class OkAnswer(TypedDict):
    """An action done (a move, a chat line, an answer to a challenge ...)."""

    ok: bool


OK: OkAnswer = {"ok": True}


class ErrorAnswer(TypedDict):
    """Every refusal, with its HTTP status."""

    error: str


class NowPlayingAnswer(TypedDict):
    """``GET /api/account/playing``."""

    nowPlaying: list[GameEventInfo]


class StartedStatus(StatusObject):
    id: int


class AiChallengeAnswer(TypedDict):
    """``POST /api/challenge/ai``: the game, started at once."""

    id: str
    rated: bool
    source: str
    level: int
    variant: VariantObject
    clock: ClockObject | None
    status: StartedStatus


class PendingChallengeAnswer(TypedDict):
    """``POST /api/challenge/{user}`` when the challenge is not known to the link (yet)."""

    id: str
    status: str


# ------------------------------------------------------------------------ builders

COLOUR = {"first": "white", "second": "black"}
SIDE = {"white": "first", "black": "second", "random": "random"}

STATUS = {
    "checkmate": "mate",
    "stalemate": "stalemate",
    "royal_capture": "variantEnd",
    "perpetual_check": "variantEnd",
    "repetition": "draw",
    "fifty_moves": "draw",
    "seventy_five_moves": "draw",
    "dead_position": "draw",
    "agreement": "draw",
    "resignation": "resign",
    "time": "outoftime",
    "abort": "aborted",
    "abandonment": "timeout",
}
"""Our terminations as lichess's game statuses."""


def colour_of(side: str | None) -> str | None:
    return None if side is None else COLOUR.get(side)


def status_of(status: str, termination: str | None) -> str:
    if status != "finished" or termination is None:
        return "started"
    return STATUS.get(termination, "unknownFinish")


def variant_view(variant: str) -> VariantObject:
    title = get_variant(variant).title
    return {"key": variant, "name": title, "short": title}


NO_CLOCK_MS = 2**31 - 1
"""``wtime``/``btime`` of a game without a clock (lichess sends its ``Int.MaxValue``)."""


def clock_view(tc: TimeControlView) -> ClockObject | None:
    """A real-time clock in ms (``gameFull``'s ``clock``); ``None`` for correspondence and
    unlimited games, as lichess."""
    if tc["kind"] == "correspondence" or tc["kind"] == "unlimited":
        return None
    if tc["kind"] == "byoyomi":
        return {
            "initial": tc["main_s"] * 1000,
            "increment": 0,
            "byoyomi": tc["period_s"] * 1000,
            "periods": tc["periods"],
        }
    return {"initial": tc["base_s"] * 1000, "increment": tc["inc_s"] * 1000}


def time_control_view(tc: TimeControlView) -> TimeControlObject:
    if tc["kind"] == "correspondence":
        return {"type": "correspondence", "daysPerTurn": tc["days"]}
    if tc["kind"] == "unlimited":
        return {"type": "unlimited"}
    if tc["kind"] == "byoyomi":
        return {
            "type": "byoyomi",
            "limit": tc["main_s"],
            "byoyomi": tc["period_s"],
            "periods": tc["periods"],
            "show": f"{tc['main_s'] // 60}|{tc['period_s']}({tc['periods']})",
        }
    return {
        "type": "clock",
        "limit": tc["base_s"],
        "increment": tc["inc_s"],
        "show": f"{tc['base_s'] // 60}+{tc['inc_s']}",
    }


def player_view(player: PlayerView | None) -> UserObject | NoUser:
    if player is None:
        return {}
    view: UserObject = {
        "id": str(player.get("name", "")).lower(),
        "name": player.get("name"),
        "title": "BOT" if player.get("bot") else None,
        "rating": player.get("rating"),
        "provisional": player.get("provisional", False),
    }
    return view


def game_state(game: GameSnapshot) -> GameStateEvent:
    """A tracked game (a websocket snapshot kept up to date) as a ``gameState`` line."""
    first, second = game["clocks"]["first"], game["clocks"]["second"]
    moves = " ".join(game.get("moves", []))
    status = status_of(game.get("status", "started"), game.get("termination"))
    offers = game["offers"]
    draw, takeback = offers.get("draw"), offers.get("takeback")
    tc = game["tc"]
    state: GameStateEvent
    if tc["kind"] == "byoyomi":
        state = {
            "type": "gameState",
            "moves": moves,
            "status": status,
            "wtime": first["ms"],
            "winc": 0,
            "wbyoyomi": first.get("period_ms", 0),
            "wperiods": first.get("periods", 0),
            "btime": second["ms"],
            "binc": 0,
            "bbyoyomi": second.get("period_ms", 0),
            "bperiods": second.get("periods", 0),
            "wdraw": draw == "first",
            "bdraw": draw == "second",
            "wtakeback": takeback == "first",
            "btakeback": takeback == "second",
        }
    else:
        inc_ms = tc["inc_s"] * 1000 if tc["kind"] == "fischer" else 0
        no_clock = tc["kind"] == "unlimited"
        state = {
            "type": "gameState",
            "moves": moves,
            "status": status,
            "wtime": NO_CLOCK_MS if no_clock else first["ms"],
            "winc": inc_ms,
            "btime": NO_CLOCK_MS if no_clock else second["ms"],
            "binc": inc_ms,
            "wdraw": draw == "first",
            "bdraw": draw == "second",
            "wtakeback": takeback == "first",
            "btakeback": takeback == "second",
        }
    winner = colour_of(game.get("winner"))
    if winner is not None:
        state["winner"] = winner
    return state


def game_full(game: GameSnapshot, created_at_ms: int | None = None) -> GameFullEvent:
    """A game stream's first line; ``created_at_ms`` the game's creation (the snapshot has
    none: it is the store's)."""
    players = game["players"]
    start_fen = game.get("start_fen")
    full: GameFullEvent = {
        "type": "gameFull",
        "id": game["game"],
        "variant": variant_view(game["variant"]),
        "clock": clock_view(game["tc"]),
        "speed": game.get("speed"),
        "perf": {"name": game.get("speed")},
        "rated": bool(game.get("rated")),
        "white": player_view(players.get("first")),
        "black": player_view(players.get("second")),
        "initialFen": start_fen if start_fen else "startpos",
        "state": game_state(game),
    }
    tc = game["tc"]
    if tc["kind"] == "correspondence":
        full["daysPerTurn"] = tc["days"]
    if created_at_ms is not None:
        full["createdAt"] = created_at_ms
    return full


def game_event(
    kind: Literal["gameStart", "gameFinish"], game: GameSnapshot, me: SideName
) -> GameEvent:
    """``gameStart`` / ``gameFinish`` for the event stream; ``me`` is our side."""
    opponent = game["players"]["second" if me == "first" else "first"]
    moves = game.get("moves", [])
    finished = game.get("status") == "finished"
    tournament = game.get("tournament")
    event: GameEvent = {
        "type": kind,
        "game": {
            "gameId": game["game"],
            "fullId": game["game"],
            "id": game["game"],
            "color": COLOUR[me],
            "fen": game.get("fen"),
            "hasMoved": any(i % 2 == (0 if me == "first" else 1) for i in range(len(moves))),
            "isMyTurn": not finished and game.get("turn") == me,
            "lastMove": moves[-1] if moves else "",
            "opponent": {
                "id": str(opponent.get("name", "")).lower(),
                "username": opponent.get("name"),
                "rating": opponent.get("rating"),
            },
            "rated": bool(game.get("rated")),
            "speed": game.get("speed"),
            "perf": game.get("speed"),
            "source": "friend" if tournament is None else "arena",
            "status": {"name": status_of(game.get("status", "started"), game.get("termination"))},
            "variant": variant_view(game["variant"]),
            "winner": colour_of(game.get("winner")),
            "compat": {"bot": True, "board": False},
        },
    }
    if tournament is not None:
        event["game"]["tournamentId"] = tournament["id"]
    kind_of_clock = game["tc"]["kind"]
    if kind_of_clock == "correspondence" or kind_of_clock == "unlimited":
        running = game["clocks"]["running"]
        left = None if running is None else game["clocks"][running]["ms"] // 1000
        event["game"]["secondsLeft"] = None if kind_of_clock == "unlimited" else left
    return event


DECLINE_REASONS = {
    "generic": "I'm not accepting challenges at the moment.",
    "later": "This is not the right time for me, please ask again later.",
    "tooFast": "This time control is too fast for me, please challenge again with a slower game.",
    "tooSlow": "This time control is too slow for me, please challenge again with a faster game.",
    "timeControl": "I'm not accepting challenges with this time control.",
    "rated": "Please send me a rated challenge instead.",
    "casual": "Please send me a casual challenge instead.",
    "standard": "I'm not accepting variant challenges right now.",
    "variant": "I'm not willing to play this variant right now.",
    "noBot": "I'm not accepting challenges from bots.",
    "onlyBot": "I'm only accepting challenges from bots.",
}
"""lichess's decline reason keys (what berserk and lichess-bot send) and lichess's English text."""

_DECLINE_KEYS = {key.lower(): key for key in DECLINE_REASONS}


def decline_reason(reason: str | None) -> tuple[str, str]:
    """``(declineReasonKey, declineReason)`` of a decline's reason as the hub passed it on: one
    of lichess's keys (any case) gets lichess's text; free text (a websocket or ICS player's)
    is shown as given under the key ``generic``; none is lichess's generic reason."""
    if not reason:
        return "generic", DECLINE_REASONS["generic"]
    key = _DECLINE_KEYS.get(reason.lower())
    if key is None:
        return "generic", reason
    return key, DECLINE_REASONS[key]


def challenge_view(challenge: ChallengeView, status: str = "created") -> ChallengeObject:
    """A hub challenge (``{"id", "from", "to", "variant", "tc", "speed", "rated", "colour"}``)."""
    colour = challenge.get("colour", "random")
    return {
        "id": str(challenge["id"]),
        "url": "",
        "status": status,
        "challenger": player_view(challenge.get("from")),
        "destUser": player_view(challenge.get("to")),
        "variant": variant_view(challenge["variant"]),
        "rated": bool(challenge.get("rated")),
        "speed": challenge.get("speed"),
        "timeControl": time_control_view(challenge["tc"]),
        "color": COLOUR.get(colour, "random"),
        "perf": {"name": challenge.get("speed")},
    }
