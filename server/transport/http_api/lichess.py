"""Our hub's messages in lichess's Bot API shapes (docs/bots.md has the mapping).

Sides: the first player (who moves first: White, sente, the Persians) is lichess's ``white``,
the second ``black``. Moves are our coordinate strings (the websocket ``legal`` list's), joined by
spaces. Clocks in milliseconds; under byoyomi ``wtime``/``btime`` are the main time left and
``wbyoyomi``/``bbyoyomi``, ``wperiods``/``bperiods`` the current period's time and the periods left.
"""

from __future__ import annotations

from server.hub.payloads import (
    ChallengeView,
    GameSnapshot,
    PlayerView,
    SideName,
    TimeControlView,
)
from server.jsontypes import JsonObject
from server.rules import get_variant

__all__ = [
    "LichessJson",
    "challenge_view",
    "colour_of",
    "game_event",
    "game_full",
    "game_state",
    "status_of",
]

LichessJson = JsonObject
"""An object of lichess's Bot API (an event line, a game or challenge object): lichess's format,
documented by lichess (docs/bots.md), not a schema of ours; built here from our typed payloads
and written out at once."""

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


def variant_view(variant: str) -> dict[str, str]:
    title = get_variant(variant).title
    return {"key": variant, "name": title, "short": title}


def clock_view(tc: TimeControlView) -> LichessJson:
    if tc["kind"] == "byoyomi":
        return {
            "initial": tc["main_s"] * 1000,
            "increment": 0,
            "byoyomi": tc["period_s"] * 1000,
            "periods": tc["periods"],
        }
    return {"initial": tc["base_s"] * 1000, "increment": tc["inc_s"] * 1000}


def time_control_view(tc: TimeControlView) -> LichessJson:
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


def player_view(player: PlayerView | None) -> LichessJson:
    if player is None:
        return {}
    view = {
        "id": str(player.get("name", "")).lower(),
        "name": player.get("name"),
        "title": "BOT" if player.get("bot") else None,
        "rating": player.get("rating"),
        "provisional": player.get("provisional", False),
    }
    return view


def game_state(game: GameSnapshot) -> LichessJson:
    """A tracked game (a websocket snapshot kept up to date) as a ``gameState`` line."""
    clocks = game["clocks"]
    state: LichessJson = {
        "type": "gameState",
        "moves": " ".join(game.get("moves", [])),
        "status": status_of(game.get("status", "started"), game.get("termination")),
    }
    tc = game["tc"]
    sides: tuple[tuple[SideName, str], ...] = (("first", "w"), ("second", "b"))
    for side, prefix in sides:
        clock = clocks[side]
        state[f"{prefix}time"] = clock["ms"]
        if tc["kind"] == "byoyomi":
            state[f"{prefix}inc"] = 0
            state[f"{prefix}byoyomi"] = clock.get("period_ms", 0)
            state[f"{prefix}periods"] = clock.get("periods", 0)
        else:
            state[f"{prefix}inc"] = tc["inc_s"] * 1000
    offers = game["offers"]
    state["wdraw"] = offers.get("draw") == "first"
    state["bdraw"] = offers.get("draw") == "second"
    state["wtakeback"] = offers.get("takeback") == "first"
    state["btakeback"] = offers.get("takeback") == "second"
    winner = colour_of(game.get("winner"))
    if winner is not None:
        state["winner"] = winner
    return state


def game_full(game: GameSnapshot) -> LichessJson:
    players = game["players"]
    start_fen = game.get("start_fen")
    return {
        "type": "gameFull",
        "id": game["game"],
        "variant": variant_view(game["variant"]),
        "clock": clock_view(game["tc"]),
        "speed": game.get("speed"),
        "perf": {"name": game.get("speed")},
        "rated": bool(game.get("rated")),
        "createdAt": 0,  # a snapshot has no creation time
        "white": player_view(players.get("first")),
        "black": player_view(players.get("second")),
        "initialFen": start_fen if start_fen else "startpos",
        "state": game_state(game),
    }


def game_event(kind: str, game: GameSnapshot, me: SideName) -> LichessJson:
    """``gameStart`` / ``gameFinish`` for the event stream; ``me`` is our side."""
    opponent = game["players"]["second" if me == "first" else "first"]
    moves = game.get("moves", [])
    finished = game.get("status") == "finished"
    return {
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
            "source": "friend",
            "status": {"name": status_of(game.get("status", "started"), game.get("termination"))},
            "variant": variant_view(game["variant"]),
            "winner": colour_of(game.get("winner")),
            "compat": {"bot": True, "board": False},
        },
    }


def challenge_view(challenge: ChallengeView, status: str = "created") -> LichessJson:
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
