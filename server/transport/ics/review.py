"""ICS views of the store: ``games``, ``moves``, ``history``, ``smoves``, ``examine``, ``finger``.

Running and finished games alike are read from the store (every move shown to anyone is
stored first), so these lists cover the whole cluster, not just this process. Replaying a
stored game goes through the rules engine in a worker thread, as the review API does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Generator
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, cast

from server.hub.clock import time_control_view
from server.hub.payloads import TimeControlView
from server.rules import Position, RulesError, Termination
from server.rules.record import UNFINISHED_STATUSES, GameRecord
from server.transport.ics.args import NO_SUCH_GAME, bad_handle, game_id_arg, handle_arg, number
from server.transport.ics.boards import MAX_STYLE12_FILES, board_lines
from server.transport.ics.lines import clock_words, end_reason
from server.transport.ics.style12 import Board12, style12_line, verbose_move
from server.transport.ics.variants import IcsVariant, ics_variant
from server.transport.review import ReviewStore
from server.transport.review_reads import ReplayQueueFull, ReviewReads, run_sliced

if TYPE_CHECKING:
    from server.transport.ics.games import GameNumbers
    from server.transport.ics.online import ListedPlayer

__all__ = ["Examination", "ReviewStore", "StoreViews"]

HISTORY_LENGTH = 10
GAMES_LISTED = 100
_END_CODES: dict[str, str] = {
    Termination.CHECKMATE: "Mat",
    Termination.RESIGNATION: "Res",
    Termination.TIME: "Fla",
    Termination.AGREEMENT: "Agr",
    Termination.REPETITION: "Rep",
    Termination.PERPETUAL_CHECK: "PCh",
    Termination.STALEMATE: "Sta",
    Termination.FIFTY_MOVES: "50",
    Termination.SEVENTY_FIVE_MOVES: "75",
    Termination.DEAD_POSITION: "NM",
    Termination.ABORT: "Abo",
    Termination.ABANDONMENT: "Dis",
    Termination.ROYAL_CAPTURE: "KCa",
}


def _minutes_increment(tc: TimeControlView) -> tuple[int, int]:
    return clock_words(tc)


def _rating(value: int | None) -> str:
    return "++++" if value is None else str(value)


def _date(moment: datetime | None) -> str:
    return "" if moment is None else f"{moment:%a %b %d, %H:%M UTC %Y}"


@dataclass
class Examination:
    """A stored game being stepped through (``examine``)."""

    number: int
    ics: IcsVariant
    white: str
    black: str
    tc: TimeControlView
    moves: list[str]
    displays: list[str]
    clocks: list[int]
    positions: list[Position]
    ply: int = 0

    def board_lines(self, ms: bool, wide: bool = False) -> list[str]:
        position = self.positions[self.ply]
        verbose = pretty = "none"
        if self.ply:
            verbose, pretty = verbose_move(
                self.positions[self.ply - 1], self.moves[self.ply - 1], self.ics
            )
            if self.ics.variant.family == "chess":
                pretty = self.displays[self.ply - 1]
        minutes, increment = _minutes_increment(self.tc)
        base = minutes * 60_000
        times = [base, base]
        for index in range(self.ply):
            times[index % 2] = self.clocks[index]
        info = Board12(
            self.number,
            self.white,
            self.black,
            2,
            minutes,
            increment,
            times[0],
            times[1],
            verbose,
            0,
            pretty,
            ms=ms,
        )
        return board_lines(position, self.ics, info, wide)

    def step(self, plies: int, ms: bool, wide: bool = False) -> list[str]:
        target = max(0, min(len(self.moves), self.ply + plies))
        if target == self.ply:
            return [
                "You're at the beginning of the game."
                if plies < 0
                else "You're at the end of the game."
            ]
        self.ply = target
        return [
            f"Game {self.number}: now at move {self.ply} of {len(self.moves)}.",
            *self.board_lines(ms, wide),
        ]


class StoreViews:
    """Text of the store-backed commands; without a store each says so."""

    def __init__(
        self, store: ReviewStore | None, numbers: GameNumbers, reads: ReviewReads | None = None
    ) -> None:
        self._store = store
        self._numbers = numbers
        self._reads = reads

    async def running_game_of(self, name: str) -> str | None:
        if self._store is None:
            return None
        page = await self._store.list_games(player_name=name, status="started", limit=1)
        return page.games[0].id if page.games else None

    async def games(self) -> list[str]:
        if self._store is None:
            return ["Game lists are not available."]
        page = await self._store.list_games(status="started", limit=GAMES_LISTED)
        lines = []
        for game in page.games:
            tc = time_control_view(game.time_control)
            minutes, increment = _minutes_increment(tc)
            kind = ics_variant(game.variant).kind
            lines.append(
                f"{self._numbers.number(game.id):>3} {_rating(game.first_rating_before):>4} "
                f"{game.first_name:<12} {_rating(game.second_rating_before):>4} "
                f"{game.second_name:<12} [{kind} {'r' if game.rated else 'u'} {minutes:>3} "
                f"{increment:>3}]"
            )
        return [*lines, "", f"  {len(lines)} game{'' if len(lines) == 1 else 's'} displayed."]

    async def history(self, name: str) -> list[str]:
        if self._store is None:
            return ["Histories are not available."]
        page = await self._store.list_games(player_name=name, limit=HISTORY_LENGTH)
        games = list(reversed(page.games))
        if not games:
            return [f"{name} has no history games."]
        lines = [f"History for {name}:", "                  Opponent      Type          End Date"]
        for index, game in enumerate(games):
            first = game.first_name.lower() == name.lower()
            mine = game.first_rating_before if first else game.second_rating_before
            theirs = game.second_rating_before if first else game.first_rating_before
            opponent = game.second_name if first else game.first_name
            won = {"1-0": first, "0-1": not first}.get(game.result or "")
            outcome = (
                "=" if game.result == "1/2-1/2" else "+" if won else "-" if won is False else "*"
            )
            tc = time_control_view(game.time_control)
            minutes, increment = _minutes_increment(tc)
            end = _END_CODES.get(game.termination or "", "---")
            lines.append(
                f"{index:>2}: {outcome} {_rating(mine):>4} {'W' if first else 'B'} "
                f"{_rating(theirs):>4} {opponent:<13} [{ics_variant(game.variant).kind} "
                f"{'r' if game.rated else 'u'} {minutes:>3} {increment:>3}] {end:<3} "
                f"{_date(game.finished_at or game.created_at)} #{game.id}"
            )
        return lines

    async def stored_game_id(self, words: list[str], command: str) -> tuple[str | None, str]:
        """The stored game ``<name> <index>`` (a history index) or ``<game id>`` names; a
        malformed argument is answered here and never reaches the store."""
        usage = f"Usage: {command} <name> <history index> | {command} <game id>"
        if self._store is None:
            return None, "Stored games are not available."
        if len(words) == 1:
            found = game_id_arg(words[0])
            return (found, "") if found is not None else (None, NO_SUCH_GAME)
        if len(words) != 2:
            return None, usage
        name, index = handle_arg(words[0]), number(words[1])
        if name is None:
            return None, bad_handle(words[0])
        if index is None:
            return None, usage
        page = await self._store.list_games(player_name=name, limit=HISTORY_LENGTH)
        games = list(reversed(page.games))
        if index >= len(games):
            return None, f"{name} has no history game {index}."
        return games[index].id, ""

    async def _load(self, game_id: str) -> GameRecord | None:
        if self._store is None:
            return None
        try:
            return await self._store.get_game(game_id)
        except ValueError:
            # The store's own check (its ids may be shorter than the hub's): no such game.
            return None

    async def examine(self, game_id: str, requester: str = "") -> Examination | str:
        """Replay a stored game to step through: in a thread, behind the gate of the
        process's stored-game reads, counted against ``requester``'s replay limit."""
        reads = self._reads
        if reads is not None and requester:
            wait = reads.admit(requester, time.monotonic(), "replay")
            if wait is not None:
                return f"Too many stored games examined; try again in {wait} s."
        stored = await self._load(game_id)
        if stored is None:
            return NO_SUCH_GAME
        ics = ics_variant(stored.variant)
        moves = [m.uci for m in stored.moves]
        try:
            if reads is None:
                positions = await asyncio.to_thread(_replay, ics, stored.start_fen, moves)
            else:
                async with reads.turn():
                    positions = await run_sliced(_replay_steps(ics, stored.start_fen, moves))
        except RulesError as error:
            return f"The stored game does not replay: {error}"
        except ReplayQueueFull:
            return "The server is busy replaying stored games; try again in a moment."
        return Examination(
            number=self._numbers.number(stored.id),
            ics=ics,
            white=stored.first_name,
            black=stored.second_name,
            tc=time_control_view(stored.time_control),
            moves=moves,
            displays=[m.display for m in stored.moves],
            clocks=[m.clock_ms for m in stored.moves],
            positions=positions,
        )

    async def move_list(
        self, game_id: str, startpos: bool, ms: bool, wide: bool = False
    ) -> list[str]:
        """FICS ``moves``: the header XBoard recognises, the moves, the result."""
        stored = await self._load(game_id)
        if stored is None:
            return [NO_SUCH_GAME]
        number = self._numbers.number(stored.id)
        ics = ics_variant(stored.variant)
        tc = time_control_view(stored.time_control)
        minutes, increment = _minutes_increment(tc)
        white, black = stored.first_name, stored.second_name
        lines = [
            f"Movelist for game {number}:",
            "",
            f"{white} ({_rating(stored.first_rating_before)}) vs. {black} "
            f"({_rating(stored.second_rating_before)}) --- {_date(stored.created_at)}",
            f"{'Rated' if stored.rated else 'Unrated'} {ics.kind} match, initial time: "
            f"{minutes} minutes, increment: {increment} seconds.",
            "",
        ]
        # The start position as style 12 (iset startpos): not for a board too wide for it.
        if startpos and (wide or ics.variant.geometry.files <= MAX_STYLE12_FILES):
            start = Position.from_fen(ics.variant, stored.start_fen)
            info = Board12(
                number,
                white,
                black,
                -4,
                minutes,
                increment,
                minutes * 60_000,
                minutes * 60_000,
                ms=ms,
            )
            lines.append(style12_line(start, ics, info))
        lines += [
            f"Move  {white:<23} {black}",
            "----  ---------------------   ---------------------",
        ]
        row = ""
        chess = ics.variant.family == "chess"
        for index, move in enumerate(stored.moves):
            text = move.display if chess else move.uci
            cell = f"{text:<7} ({move.spent_ms // 60000}:{move.spent_ms // 1000 % 60:02d}"
            cell += f".{move.spent_ms % 1000:03d})" if ms else ")"
            if index % 2 == 0:
                row = f"{index // 2 + 1:>3}.  {cell:<22}"
            else:
                lines.append(f"{row}  {cell}")
                row = ""
        if row:
            lines.append(row.rstrip())
        if stored.status not in UNFINISHED_STATUSES:
            reason = end_reason(
                stored.termination or "", stored.result, white, black, len(stored.moves)
            )
            lines.append(f"      {{{reason}}} {stored.result or '*'}")
        else:
            lines.append("      {Still in progress} *")
        return lines

    async def finger(self, name: str, online: ListedPlayer | None) -> list[str]:
        lines = [f"Finger of {online.name if online else name}:", ""]
        if online is not None:
            lines.append(
                f"{online.name} is online{' (guest)' if online.guest else ''}"
                f"{', playing a game' if online.playing else ''}."
            )
        else:
            lines.append(f"{name} is not logged in.")
        if self._store is not None:
            page = await self._store.list_games(player_name=name, limit=HISTORY_LENGTH)
            if page.games:
                lines.append(f'Recent games: {len(page.games)} (see "history {name}").')
        return lines


def _replay(ics: IcsVariant, start_fen: str, moves: list[str]) -> list[Position]:
    steps = _replay_steps(ics, start_fen, moves)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return cast(list[Position], done.value)


def _replay_steps(
    ics: IcsVariant, start_fen: str, moves: list[str]
) -> Generator[None, None, list[Position]]:
    """The positions of a stored game, a move at a time (yields after each; ``run_sliced``)."""
    position = Position.from_fen(ics.variant, start_fen)
    positions = [position]
    for uci in moves:
        position = position.play(position.move_from_uci(uci))
        positions.append(position)
        yield
    return positions
