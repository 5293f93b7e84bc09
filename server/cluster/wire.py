"""What nodes send each other besides the envelopes themselves (:mod:`server.cluster.envelopes`):
commands as frames, player identities.

Commands travel as the client frames they came from (:func:`command_to_frame` is the inverse of
:func:`server.hub.commands.parse_command`), so the receiving node validates them like any frame.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

from server.hub.clock import time_control_view
from server.hub.commands import (
    AbandonClaimCommand,
    AbortCommand,
    AcceptCommand,
    BerserkCommand,
    ChallengeAiCommand,
    ChatCommand,
    ClaimDrawCommand,
    Command,
    DeclineCommand,
    JoinCommand,
    LeaveCommand,
    MatchCommand,
    MoveCommand,
    OfferCommand,
    PlayCommand,
    PremoveLineCommand,
    PremovesClearCommand,
    PremovesCommand,
    ResignCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WhoCommand,
    WithdrawCommand,
)
from server.hub.identity import PlayerInfo, Rating, RatingKey
from server.hub.payloads import TimeControlView
from server.jsontypes import JsonObject
from server.rules.time_control import TimeControl

__all__ = [
    "PlayerIdentity",
    "command_game",
    "command_to_frame",
    "player_from_json",
    "player_to_json",
]


# --- players ---------------------------------------------------------------------------------

RatingEntry = tuple[str, str | None, float, float, float]
"""One rating of a player: ``[variant, speed|null, rating, deviation, volatility]``."""


class PlayerIdentity(TypedDict):
    """A player's identity and every rating, as nodes pass it (attach, forwarded commands)."""

    id: str
    name: str
    guest: bool
    ratings: list[RatingEntry]
    bot: NotRequired[bool]
    computer: NotRequired[bool]


def player_to_json(player: PlayerInfo) -> PlayerIdentity:
    """A player's identity and ratings as JSON."""
    ratings: list[RatingEntry] = []
    for key, rating in player.ratings.items():
        variant, speed = (key, None) if isinstance(key, str) else key
        ratings.append((variant, speed, rating.rating, rating.deviation, rating.volatility))
    obj: PlayerIdentity = {
        "id": player.id,
        "name": player.name,
        "guest": player.guest,
        "ratings": ratings,
    }
    if player.bot:
        obj["bot"] = True
    if player.computer:
        obj["computer"] = True
    return obj


def player_from_json(obj: Any) -> PlayerInfo:
    """The inverse of :func:`player_to_json`.

    :raises ValueError: for anything else.
    """
    try:
        ratings: dict[RatingKey, Rating] = {}
        for variant, speed, rating, deviation, volatility in obj["ratings"]:
            key: RatingKey = str(variant) if speed is None else (str(variant), str(speed))
            ratings[key] = Rating(float(rating), float(deviation), float(volatility))
        player_id, name, guest = obj["id"], obj["name"], obj["guest"]
    except (KeyError, TypeError, ValueError, OverflowError) as error:  # (an int past float's)
        raise ValueError(f"not a player identity: {error}") from None
    if not (isinstance(player_id, str) and isinstance(name, str) and isinstance(guest, bool)):
        raise ValueError("not a player identity: id and name must be strings, guest a bool")
    bot = obj.get("bot", False)
    computer = obj.get("computer", False)
    if not isinstance(bot, bool) or not isinstance(computer, bool):
        raise ValueError("not a player identity: bot and computer must be bools")
    return PlayerInfo(player_id, name, guest, ratings, bot=bot, computer=computer)


# --- commands --------------------------------------------------------------------------------


def _tc(control: TimeControl) -> TimeControlView:
    return time_control_view(control)


def _payload(command: Command) -> tuple[str, JsonObject]:
    """The frame type and payload of a command (``None`` fields left out)."""
    match command:
        case SeekCommand():
            return "seek", {
                "variant": command.variant,
                "tc": _tc(command.control),
                "rated": command.rated,
                "colour": command.colour,
                "range": None if command.rating_range is None else list(command.rating_range),
                "manual": command.manual,
            }
        case UnseekCommand():
            return "unseek", {"id": command.seek_id}
        case SoughtCommand():
            return "sought", {"watch": command.watch}
        case WhoCommand():
            return "who", {}
        case PlayCommand():
            return "play", {"id": command.seek_id}
        case MatchCommand():
            return "match", {
                "to": command.to,
                "variant": command.variant,
                "tc": _tc(command.control),
                "rated": command.rated,
                "colour": command.colour,
            }
        case ChallengeAiCommand():
            return "challenge_ai", {
                "variant": command.variant,
                "level": command.level,
                "tc": _tc(command.control),
                "colour": command.colour,
            }
        case AcceptCommand():
            return "accept", {"id": command.challenge_id}
        case DeclineCommand():
            return "decline", {"id": command.challenge_id, "reason": command.reason}
        case WithdrawCommand():
            return "withdraw", {"id": command.challenge_id}
        case JoinCommand():
            return "join", {"game": command.game_id, "v": command.since}
        case LeaveCommand():
            return "leave", {"game": command.game_id}
        case MoveCommand():
            return "move", {"game": command.game_id, "ply": command.ply, "move": command.move}
        case ResignCommand():
            return "resign", {"game": command.game_id}
        case AbortCommand():
            return "abort", {"game": command.game_id}
        case ClaimDrawCommand():
            return "claim_draw", {"game": command.game_id}
        case OfferCommand():
            return f"{command.kind}_{command.action}", {"game": command.game_id}
        case AbandonClaimCommand():
            return "abandon_claim", {"game": command.game_id, "outcome": command.outcome}
        case ChatCommand():
            return "chat", {"game": command.game_id, "text": command.text}
        case BerserkCommand():
            return "berserk", {"game": command.game_id}
        case PremovesCommand():
            return "premoves", {"game": command.game_id, "lines": [list(x) for x in command.lines]}
        case PremovesClearCommand():
            return "premoves_clear", {"game": command.game_id}
        case PremoveLineCommand():
            return "premove_line", {"game": command.game_id, "moves": list(command.moves)}
    raise TypeError(f"not a hub command: {command!r}")


def command_to_frame(command: Command, ack: str | int | None = None) -> JsonObject:
    """The client frame of ``command`` with ack id ``ack`` (``parse_command`` reads it back).

    >>> from server.hub.commands import parse_command
    >>> cmd = parse_command({"t": "move", "d": {"game": "g1", "ply": 3, "move": "c4c5+"}})
    >>> command_to_frame(cmd, ack="~7")
    {'t': 'move', 'd': {'game': 'g1', 'ply': 3, 'move': 'c4c5+'}, 'a': '~7'}
    """
    kind, payload = _payload(command)
    frame: JsonObject = {"t": kind, "d": {k: v for k, v in payload.items() if v is not None}}
    if ack is not None:
        frame["a"] = ack
    return frame


def command_game(command: Command) -> str | None:
    """The game a command acts on, if it has a ``game`` field."""
    game_id = getattr(command, "game_id", None)
    return game_id if isinstance(game_id, str) else None
