"""Tournaments in lichess's shapes (docs/tournaments-api.md): pure functions from the
director's views (``server.hub.tournament_payloads``) to the JSON lichess's API answers, so that a lichess
client (berserk) reads them unchanged.

Arena (``/api/tournament``): ``status`` 10 / 20 / 30 (created / started / finished), times in
epoch ms, ``clock`` in seconds (``byoyomi`` and ``periods`` added under a byoyomi clock, as
lishogi does). Swiss and round robin (``/api/swiss``, ``/api/roundrobin``): ``status`` as a
word, ``startsAt`` an ISO 8601 text, as lichess's Swiss. Results (NDJSON lines): ``rank``,
``score`` (arena) or ``points`` and ``tieBreak`` (Swiss, round robin), ``rating``,
``username``, ``performance``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NotRequired, TypedDict

from server.hub.glicko2 import speed_class
from server.hub.payloads import TimeControlView
from server.hub.tournament.round_robin import round_count
from server.hub.tournament_payloads import (
    TournamentSettingsView,
    TournamentStandingView,
    TournamentSummaryView,
    TournamentView,
)
from server.jsontypes import JsonObject
from server.rules import get_variant
from server.rules.game import Side
from server.rules.record import GameRecord
from server.rules.time_control import Byoyomi, Fischer
from server.transport.http_api import lichess
from server.transport.tournament_service import TournamentGameLine

__all__ = [
    "ArenaResultLine",
    "SwissResultLine",
    "arena_result",
    "arena_summary",
    "arena_view",
    "event_name",
    "full_name",
    "game_line",
    "performances",
    "swiss_result",
    "swiss_view",
    "tournament_clock",
]

STATUS_CODE = {"created": 10, "started": 20, "finished": 30}
"""lichess's arena status numbers."""
STANDING_PAGE = 10
"""Players per page of an arena's ``standing`` (lichess's)."""


class ArenaResultLine(TypedDict):
    """One line of ``GET /api/tournament/{id}/results``."""

    rank: int
    score: int
    rating: int
    username: str
    performance: int
    sheet: NotRequired[JsonObject]


class SwissResultLine(TypedDict):
    """One line of ``GET /api/swiss/{id}/results`` (and the round robin's): ``tieBreak`` is the
    format's first tie-break (Swiss: Buchholz cut 1; round robin: Sonneborn–Berger),
    ``tieBreaks`` all of them by name."""

    rank: int
    points: float
    tieBreak: float
    tieBreaks: dict[str, float]
    rating: int
    username: str
    performance: int


def tournament_clock(tc: TimeControlView) -> JsonObject:
    """lichess's tournament ``clock``: ``limit`` and ``increment`` in seconds (byoyomi:
    ``byoyomi`` and ``periods`` too, ``increment`` 0)."""
    if tc["kind"] == "byoyomi":
        return {
            "limit": tc["main_s"],
            "increment": 0,
            "byoyomi": tc["period_s"],
            "periods": tc["periods"],
        }
    if tc["kind"] == "fischer":
        return {"limit": tc["base_s"], "increment": tc["inc_s"]}
    raise ValueError(f"a tournament has no {tc['kind']} clock")  # TournamentSettings refuses it


def _speed(tc: TimeControlView) -> str:
    if tc["kind"] == "byoyomi":
        return speed_class(tc["main_s"] * 1000, 0, tc["period_s"] * 1000, tc["periods"])
    if tc["kind"] == "fischer":
        return speed_class(tc["base_s"] * 1000, tc["inc_s"] * 1000)
    return "correspondence"  # not a tournament's (TournamentSettings refuses it)


def _variant(key: str) -> JsonObject:
    title = get_variant(key).title
    return {"key": key, "name": title, "short": title}


def event_name(name: str, fmt: str) -> str:
    """A tournament's name as its games' PGN ``Event`` and an arena's ``fullName`` say it: an
    arena's name and "Arena" (as lichess writes it, unless the name ends with it); another
    format's name as it is."""
    if fmt != "arena" or name.lower().endswith("arena"):
        return name
    return f"{name} Arena"


def full_name(settings: TournamentSettingsView) -> str:
    """An arena's ``fullName`` (:func:`event_name`)."""
    return event_name(settings["name"], settings["format"])


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat().replace("+00:00", "Z")


def arena_summary(summary: TournamentSummaryView, now_ms: int) -> JsonObject:
    """An arena in a listing (``GET /api/tournament``) or the head of its own view."""
    settings = summary["settings"]
    tc = settings["tc"]
    speed = _speed(tc)
    out: JsonObject = {
        "id": summary["id"],
        "createdBy": summary["created_by"] or "variant-hub",
        "system": "arena",
        "minutes": (settings["duration_ms"] or 0) // 60_000,
        "clock": tournament_clock(tc),
        "rated": settings["rated"],
        "fullName": full_name(settings),
        "variant": _variant(settings["variant"]),
        "status": STATUS_CODE[summary["status"]],
        "perf": {"key": speed, "name": speed.capitalize()},
        "berserkable": settings["berserk"],
        "private": settings["password"],
        "bots": settings["bots"],
        "maxPlayers": settings["max_players"],
    }
    start = settings["start_at_ms"]
    if start is not None:
        out["startsAt"] = start
        if summary["status"] == "created":
            out["secondsToStart"] = max(0, (start - now_ms) // 1000)
    if settings["start_when_joined"] is not None:
        out["startWhenJoined"] = settings["start_when_joined"]
    if settings["min_rating"] is not None:
        out["minRating"] = {"rating": settings["min_rating"]}
    return out


def _sheet(row: TournamentStandingView) -> JsonObject:
    return {"scores": "".join(str(points) for points in row["sheet"]), "fire": row["fire"]}


def _standing_player(row: TournamentStandingView) -> JsonObject:
    player: JsonObject = {
        "name": row["name"],
        "rank": row["rank"],
        "rating": row["rating"],
        "score": int(row["score"]),
        "sheet": _sheet(row),
    }
    if row["status"] != "active":
        player["withdraw"] = True
    if row["berserks"]:
        player["berserks"] = row["berserks"]
    return player


def arena_view(view: TournamentView, now_ms: int, page: int) -> JsonObject:
    """``GET /api/tournament/{id}``: the summary, the players, one page of the standing (10
    players a page, as lichess), the podium once finished, the games being played (``duels``:
    the view's, the best placed players' first, at most 30; lichess sends its top games)."""
    out = arena_summary(view, now_ms)
    standings = view["standings"]
    out["nbPlayers"] = len(standings)
    out["isStarted"] = view["status"] != "created"
    out["isFinished"] = view["status"] == "finished"
    ends = view["countdown_ms"] if view["status"] == "started" else None
    if ends is not None:
        out["finishesAt"] = ends
        out["secondsToFinish"] = max(0, (ends - now_ms) // 1000)
        duration = view["settings"]["duration_ms"]
        if duration is not None and "startsAt" not in out:
            out["startsAt"] = ends - duration
    first = (page - 1) * STANDING_PAGE
    out["standing"] = {
        "page": page,
        "players": [_standing_player(row) for row in standings[first : first + STANDING_PAGE]],
    }
    names = {row["player"]: row["name"] for row in standings}
    ratings = {row["player"]: row["rating"] for row in standings}
    playing = set(view["playing"])
    out["duels"] = [
        {
            "id": pairing["game"],
            "p": [
                {"n": names.get(pairing[side], pairing[side]), "r": ratings.get(pairing[side], 0)}
                for side in ("white", "black")
            ],
        }
        for pairing in view["pairings"]
        if pairing["game"] in playing
    ]
    if view["status"] == "finished" and view["podium"]:
        out["podium"] = [_standing_player(row) for row in view["podium"]]
        out["winner"] = {"name": view["podium"][0]["name"]}
    return out


def swiss_view(view: TournamentView, team: str | None) -> JsonObject:
    """``GET /api/swiss/{id}`` (and ``/api/roundrobin/{id}``): lichess's Swiss info; a round
    robin says ``system`` ``roundRobin`` and ``double``."""
    settings = view["settings"]
    fmt = settings["format"]
    players = len(view["standings"])
    if fmt == "swiss":
        rounds = settings["rounds"] or 0
    else:
        rounds = round_count(players, fmt == "double_round_robin") if players >= 2 else 0
    out: JsonObject = {
        "id": view["id"],
        "createdBy": view["created_by"] or "variant-hub",
        "name": settings["name"],
        "system": "swiss" if fmt == "swiss" else "roundRobin",
        "clock": tournament_clock(settings["tc"]),
        "variant": settings["variant"],
        "round": view["round"],
        "nbRounds": rounds,
        "nbPlayers": players,
        "nbOngoing": view["playing_count"],
        "status": view["status"],
        "rated": settings["rated"],
        "private": settings["password"],
        "bots": settings["bots"],
        "maxPlayers": settings["max_players"],
    }
    if fmt != "swiss":
        out["double"] = fmt == "double_round_robin"
    if team is not None:
        out["teamId"] = team
    if settings["start_at_ms"] is not None:
        out["startsAt"] = _iso(settings["start_at_ms"])
    if settings["start_when_joined"] is not None:
        out["startWhenJoined"] = settings["start_when_joined"]
    if settings["min_rating"] is not None:
        out["minRating"] = {"rating": settings["min_rating"]}
    return out


def performances(ratings: dict[str, int], games: Sequence[TournamentGameLine]) -> dict[str, int]:
    """Each player's performance rating over their finished games: the opponents' average
    rating + 400 × (wins − losses) / games (the arena's formula); players without a finished
    game: their rating."""
    totals: dict[str, list[int]] = {}
    for game in games:
        if game.result not in ("1-0", "0-1", "1/2-1/2"):
            continue
        for me, other, won in (
            (game.white, game.black, game.result == "1-0"),
            (game.black, game.white, game.result == "0-1"),
        ):
            lost = game.result not in ("1/2-1/2",) and not won
            total = totals.setdefault(me, [0, 0, 0])
            total[0] += ratings.get(other, 1500)
            total[1] += int(won) - int(lost)
            total[2] += 1
    return {
        player: (
            round((totals[player][0] + 400 * totals[player][1]) / totals[player][2])
            if player in totals
            else rating
        )
        for player, rating in ratings.items()
    }


def arena_result(row: TournamentStandingView, performance: int, *, sheet: bool) -> ArenaResultLine:
    line: ArenaResultLine = {
        "rank": row["rank"],
        "score": int(row["score"]),
        "rating": row["rating"],
        "username": row["name"],
        "performance": performance,
    }
    if sheet:
        line["sheet"] = _sheet(row)
    return line


def swiss_result(row: TournamentStandingView, performance: int) -> SwissResultLine:
    tiebreaks = row["tiebreaks"]
    return {
        "rank": row["rank"],
        "points": row["score"],
        "tieBreak": next(iter(tiebreaks.values()), 0.0),
        "tieBreaks": dict(tiebreaks),
        "rating": row["rating"],
        "username": row["name"],
        "performance": performance,
    }


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def game_line(record: GameRecord, fmt: str, tournament_id: str) -> JsonObject:
    """One game of ``GET …/games`` asked as NDJSON (``Accept: application/x-ndjson``, berserk's
    default): lichess's game export JSON — ``id``, ``rated``, ``variant`` (the key), ``speed``,
    ``perf``, ``createdAt`` / ``lastMoveAt`` (epoch ms), ``status``, ``players`` (``user``
    ``name`` and ``id``, ``rating`` before the game, ``berserk``), ``winner``, ``moves`` (UCI,
    space-separated), ``clock`` (ms), ``tournament`` (an arena's id) or ``swiss`` (a Swiss's or a
    round robin's), and ours: ``round``."""
    players: JsonObject = {}
    for colour, name, rating, berserk in (
        ("white", record.first_name, record.first_rating_before, record.first_berserk),
        ("black", record.second_name, record.second_rating_before, record.second_berserk),
    ):
        player: JsonObject = {"user": {"name": name, "id": name.lower()}}
        if rating is not None:
            player["rating"] = rating
        if berserk:
            player["berserk"] = True
        players[colour] = player
    control = record.time_control
    clock: JsonObject | None = None
    if isinstance(control, Fischer):
        clock = {"initial": control.base_ms, "increment": control.increment_ms}
    elif isinstance(control, Byoyomi):
        clock = {
            "initial": control.base_ms,
            "increment": 0,
            "byoyomi": control.period_ms,
            "periods": control.periods,
        }
    line: JsonObject = {
        "id": record.id,
        "rated": record.rated,
        "variant": record.variant,
        "speed": record.speed,
        "perf": record.speed,
        "createdAt": _ms(record.created_at),
        "lastMoveAt": _ms(record.finished_at or record.started_at or record.created_at),
        "status": lichess.status_of(record.status, record.termination),
        "players": players,
        "moves": " ".join(move.uci for move in record.moves),
        "clock": clock,
        "tournament" if fmt == "arena" else "swiss": tournament_id,
        "round": record.tournament_round,
    }
    winner = record.winner
    if winner is not None:
        line["winner"] = "white" if winner is Side.FIRST else "black"
    return line
