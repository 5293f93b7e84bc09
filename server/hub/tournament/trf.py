"""The FIDE TRF export of a Swiss (TRF-16, with the TRFx lines ``XXR``/``XXC`` that pairing
programs read), as lichess's ``/swiss/{id}.trf``.

Header lines (tag, a space, the value): ``012`` name, ``022`` city (here: the tournament's
address), ``032`` federation, ``042`` / ``052`` start and end dates (``YYYY/MM/DD``), ``062``
players, ``072`` rated players, ``092`` type, ``122`` time control, ``XXR`` rounds, ``XXC``
initial colour (``white1``: pairing number 1 had white in round 1).

One ``001`` line per player, fixed columns (1-based, inclusive): 1–3 ``001``; 5–8 pairing
number; 15–47 name; 49–52 rating; 81–84 points (``" 2.5"``); 86–89 rank; then per round *k* a
block at column 92 + 10(k−1): 4 columns the opponent's number (``0000`` none), a space, the
colour ``w``/``b`` (``-`` none), a space, the result: ``1`` ``=`` ``0`` for a game, ``U`` the
pairing-allocated bye, ``Z`` a round missed; a game without result yet leaves it blank (and a line never ends in spaces).
"""

from __future__ import annotations

from datetime import UTC, datetime

from server.hub.tournament.state import TournamentState
from server.hub.tournament.swiss import CardRound, cards, pairing_numbers, swiss_standings
from server.hub.tournament.values import TournamentSettings
from server.rules.time_control import Byoyomi, Fischer

__all__ = ["trf"]


def _date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y/%m/%d")


def _round_block(r: CardRound, numbers: dict[str, int]) -> str:
    if r.kind == "game" and r.opponent is not None:
        points = {1.0: "1", 0.5: "=", 0.0: "0"}.get(r.points, " ") if r.points is not None else " "
        return f"{numbers[r.opponent]:4d} {'w' if r.color == 'white' else 'b'} {points}"
    return f"0000 - {'U' if r.kind == 'pab' else 'Z'}"


def _control_text(settings: TournamentSettings) -> str:
    """``"180+2"`` (Fischer, seconds) or ``"600+3x30"`` (byoyomi: main + periods × period)."""
    control = settings.control
    if isinstance(control, Fischer):
        return f"{control.base_ms // 1000}+{control.increment_ms // 1000}"
    assert isinstance(control, Byoyomi)  # tournaments refuse correspondence controls
    return f"{control.base_ms // 1000}+{control.periods}x{control.period_ms // 1000}"


def trf(
    settings: TournamentSettings,
    state: TournamentState,
    *,
    address: str,
    federation: str = "",
    ended_at_ms: int | None = None,
) -> str:
    """The TRF of the Swiss ``state`` (see the module docstring); lines end with ``\\n``."""
    numbers = pairing_numbers(state.entries)
    all_cards = cards(state)
    ranks = {row.player: row.rank for row in swiss_standings(state)}
    start = state.started_at_ms if state.started_at_ms is not None else settings.start_at_ms
    header = [
        ("012", settings.name),
        ("022", address),
        ("032", federation),
        ("042", _date(start) if start is not None else ""),
        ("052", _date(ended_at_ms) if ended_at_ms is not None else ""),
        ("062", str(len(state.entries))),
        ("072", str(len(state.entries) if settings.rated else 0)),
        ("092", "Individual: Swiss-System"),
        ("122", _control_text(settings)),
        ("XXR", str(settings.rounds or state.rounds_paired)),
        ("XXC", "white1"),
    ]
    lines = [f"{tag} {value}" for tag, value in header if value]
    for player, number in sorted(numbers.items(), key=lambda item: item[1]):
        entry = state.entries[player]
        card = all_cards[player]
        score = sum(r.points or 0.0 for r in card)
        head = (
            f"001 {number:4d}      {entry.name[:33]:<33} {entry.rating:4d}"
            f"{'':28}{score:4.1f} {ranks[player]:4d}"
        )
        lines.append((head + "".join(f"  {_round_block(r, numbers)}" for r in card)).rstrip())
    return "\n".join(lines) + "\n"
