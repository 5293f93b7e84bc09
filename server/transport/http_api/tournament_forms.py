"""The create forms of the tournament API (docs/tournaments-api.md), read into the core's
:class:`~server.hub.tournament.values.TournamentSettings` and the entry password.

lichess's field names where lichess has the field (arena: ``name``, ``clockTime`` in minutes,
``clockIncrement``, ``minutes``, ``waitMinutes``, ``startDate``, ``variant``, ``rated``,
``berserkable``, ``password``, ``conditions.minRating.rating``, ``conditions.bots``; Swiss:
``name``, ``clock.limit``, ``clock.increment``, ``nbRounds``, ``startsAt``, ``variant``,
``rated``, ``password``, ``conditions.minRating.rating``), lishogi's for a byoyomi clock
(arena ``clockByoyomi`` and ``periods``; Swiss ``clock.byoyomi`` and ``clock.periods``, as
the challenge form), and ours for what lichess lacks: ``startWhenJoined``, ``maxPlayers``,
``conditions.computer``, ``double`` (round robin). Fields lichess has and we do not use
(``description``, ``roundInterval``, ``chatFor``, ``streakable`` …) are ignored, as unknown
fields are. Every bad value is a 400 naming the field; nothing is created.
"""

from __future__ import annotations

import re
import time

from server.hub.commands import time_control_from_json
from server.hub.errors import ProtocolError
from server.hub.fields import MAX_RATING
from server.hub.tournament.values import Format, TournamentSettings
from server.hub.tournament_requests import (
    MAX_PASSWORD,
    MAX_TOURNAMENT_DURATION_S,
    MAX_TOURNAMENT_NAME,
    MAX_TOURNAMENT_PLAYERS,
    MAX_TOURNAMENT_ROUNDS,
)
from server.hub.user_text import text_problem
from server.jsontypes import JsonObject
from server.rules import VARIANT_NAMES, get_variant
from server.rules.time_control import TimeControl
from server.transport.http_api.context import api_error
from server.transport.http_api.forms import flag, whole_number

__all__ = ["CreateForm", "arena_form", "swiss_form"]

MAX_WAIT_MINUTES = 7 * 24 * 60
"""The longest ``waitMinutes`` (a week)."""
DEFAULT_ARENA_WAIT_MIN = 5
"""An arena without ``startDate`` or ``waitMinutes`` starts in 5 minutes (lichess's)."""
DEFAULT_SWISS_WAIT_MIN = 10
"""A Swiss or round robin without ``startsAt`` starts in 10 minutes (lichess's Swiss)."""
_MINUTES = re.compile(r"\d{1,3}(\.\d{1,4})?")
_TEAM = re.compile(r"[A-Za-z0-9_-]{1,64}")

CreateForm = tuple[TournamentSettings, str | None]
"""The settings of a tournament to create and its entry password (None: none)."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _whole(form: dict[str, str], name: str, low: int, high: int) -> int | None:
    raw = form.get(name)
    if raw is None or raw == "":
        return None
    value = whole_number(raw, len(str(high)))
    if value is None or not low <= value <= high:
        api_error(400, f"{name}: must be a whole number from {low} to {high}")
    return value


def _required(form: dict[str, str], name: str, low: int, high: int) -> int:
    value = _whole(form, name, low, high)
    if value is None:
        api_error(400, f"{name}: required")
    return value


def _variant(form: dict[str, str]) -> str:
    variant = form.get("variant", "")
    if variant not in VARIANT_NAMES:
        api_error(400, f"variant: required, one of {', '.join(VARIANT_NAMES)}")
    return variant


def _name(form: dict[str, str], default: str) -> str:
    name = form.get("name") or default
    problem = text_problem(name)
    if problem is not None:
        api_error(400, f"name: {problem}")
    if not 2 <= len(name.strip()) <= MAX_TOURNAMENT_NAME:
        api_error(400, f"name: 2 to {MAX_TOURNAMENT_NAME} characters")
    return name.strip()


def _password(form: dict[str, str]) -> str | None:
    password = form.get("password") or None
    if password is not None and len(password) > MAX_PASSWORD:
        api_error(400, f"password: at most {MAX_PASSWORD} characters")
    return password


def _control(view: JsonObject, variant: str, where: str) -> TimeControl:
    if view["kind"] == "byoyomi" and get_variant(variant).family != "shogi":
        api_error(400, f"{where}: a byoyomi clock is for the shogi variants")
    try:
        return time_control_from_json(view, where)
    except ProtocolError as error:
        api_error(400, str(error))


def _start(
    form: dict[str, str], date_field: str, default_wait: int
) -> tuple[int | None, int | None]:
    """``(start_at_ms, start_when_joined)``: a date (epoch ms), a wait (minutes from now), a
    number of players, or the default wait."""
    now = _now_ms()
    date = _whole(form, date_field, 0, 2**53)
    wait = _whole(form, "waitMinutes", 0, MAX_WAIT_MINUTES) if date_field == "startDate" else None
    joined = _whole(form, "startWhenJoined", 2, MAX_TOURNAMENT_PLAYERS)
    if date is not None:  # a time past: the tournament starts at once
        return date, joined
    if wait is not None:
        return now + wait * 60_000, joined
    if joined is not None:
        return None, joined
    return now + default_wait * 60_000, None


def _common(form: dict[str, str], variant: str) -> dict[str, object]:
    return {
        "rated": flag(form, "rated", True),
        "min_rating": _whole(form, "conditions.minRating.rating", 0, MAX_RATING),
        "bots": flag(form, "conditions.bots", True),
        "computer": flag(form, "conditions.computer", False),
        "variant": variant,
    }


def _settings(**fields: object) -> TournamentSettings:
    try:
        return TournamentSettings(**fields)  # type: ignore[arg-type]  # checked by the readers
    except ValueError as error:
        api_error(400, str(error))


def arena_form(form: dict[str, str], max_players: int) -> CreateForm:
    """``POST /api/tournament``'s form."""
    variant = _variant(form)
    raw = form.get("clockTime", "")
    if not _MINUTES.fullmatch(raw):
        api_error(400, "clockTime: required, the initial time in minutes (0.25, 3, 7.5 …)")
    base_s = float(raw) * 60
    if base_s != int(base_s):
        api_error(400, "clockTime: must be a whole number of seconds")
    byoyomi = _whole(form, "clockByoyomi", 0, 10_000)
    view: JsonObject
    if byoyomi:
        view = {
            "kind": "byoyomi",
            "main_s": int(base_s),
            "period_s": byoyomi,
            "periods": _whole(form, "periods", 0, 100) or 1,
        }
    else:
        view = {
            "kind": "fischer",
            "base_s": int(base_s),
            "inc_s": _required(form, "clockIncrement", 0, 10_000),
        }
    control = _control(view, variant, "clockTime")
    minutes = _required(form, "minutes", 1, MAX_TOURNAMENT_DURATION_S // 60)
    start_at, joined = _start(form, "startDate", DEFAULT_ARENA_WAIT_MIN)
    settings = _settings(
        name=_name(form, f"{get_variant(variant).title} Arena"),
        format="arena",
        control=control,
        start_at_ms=start_at,
        start_when_joined=joined,
        duration_ms=minutes * 60_000,
        max_players=_whole(form, "maxPlayers", 2, MAX_TOURNAMENT_PLAYERS) or max_players,
        berserk=flag(form, "berserkable", True),
        **_common(form, variant),
    )
    return settings, _password(form)


def team_label(team: str) -> str:
    """The team id of ``/api/swiss/new/{teamId}``: a free label (letters, digits, ``_``,
    ``-``; 1–64)."""
    if not _TEAM.fullmatch(team):
        api_error(400, "teamId: 1 to 64 letters, digits, '_' or '-'")
    return team


def swiss_form(
    form: dict[str, str], max_players: int, fmt: Format, team: str | None = None
) -> CreateForm:
    """``POST /api/swiss/new/{teamId}``'s form (``fmt`` ``swiss``), or ``POST
    /api/roundrobin``'s (``round_robin``; ``double=true``: a double round robin)."""
    variant = _variant(form)
    limit = _required(form, "clock.limit", 0, 100_000)
    view: JsonObject
    if form.get("clock.byoyomi"):
        view = {
            "kind": "byoyomi",
            "main_s": limit,
            "period_s": _required(form, "clock.byoyomi", 0, 10_000),
            "periods": _whole(form, "clock.periods", 0, 100) or 1,
        }
    else:
        view = {
            "kind": "fischer",
            "base_s": limit,
            "inc_s": _required(form, "clock.increment", 0, 10_000),
        }
    control = _control(view, variant, "clock.limit")
    rounds = None
    kind = "Swiss"
    if fmt == "swiss":
        rounds = _required(form, "nbRounds", 1, MAX_TOURNAMENT_ROUNDS)
    else:
        kind = "Round Robin"
        if flag(form, "double", False):
            fmt = "double_round_robin"
    start_at, joined = _start(form, "startsAt", DEFAULT_SWISS_WAIT_MIN)
    settings = _settings(
        name=_name(form, f"{get_variant(variant).title} {kind}"),
        format=fmt,
        control=control,
        start_at_ms=start_at,
        start_when_joined=joined,
        rounds=rounds,
        max_players=_whole(form, "maxPlayers", 2, MAX_TOURNAMENT_PLAYERS) or max_players,
        team=team,
        **_common(form, variant),
    )
    return settings, _password(form)
