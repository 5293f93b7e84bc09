"""The ICS tournament commands (the session's ``tournaments`` part; docs/ics.md): FICS had its
tournament director bots (``tell mamer join 12``); here the commands are the server's own:

* ``tourneys [created|started|finished]`` — the tournaments (newest first), one line each;
* ``tjoin <id> [password]`` — enter (a paused arena entry is resumed);
* ``twithdraw <id>`` — take one's entry out (points kept; ``tjoin`` again to come back);
* ``tpause <id>`` — an arena: not paired until ``tjoin``;
* ``tstandings <id> [page]`` — the tournament's head and one page of its standings as text
  (:data:`SHOWN_ROWS` rows a page; no page: the one holding one's own row, else the first).

Each pairing reaches the player as any game does: ``Creating: …`` and the style 12 board (the
hub's ``game_start``), so XBoard and zippy play tournament games unchanged. A refusal (a wrong
password, a finished tournament …) is one line and changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import PlayerInfo
from server.hub.tournament_payloads import (
    TournamentStatusName,
    TournamentSummaryView,
    TournamentView,
)
from server.transport.ics.args import bad_arg, game_id_arg
from server.transport.ics.lines import clock_words, kind_words
from server.transport.ics.parse import CommandLine
from server.transport.ics.state import CommandHandler, SessionPart, error_text
from server.transport.tournament_service import TournamentService, entry_status

__all__ = ["TournamentCommands"]

LISTED = 20
"""Tournaments ``tourneys`` lists."""
STATUSES: tuple[TournamentStatusName, ...] = ("created", "started", "finished")
FORMAT_WORDS = {
    "arena": "arena",
    "swiss": "swiss",
    "round_robin": "round-robin",
    "double_round_robin": "double-rr",
}
NO_SUCH_TOURNAMENT = "There is no such tournament."
TIEBREAK_WORDS = {"buchholz_cut1": "BuchCut1", "sonneborn_berger": "SB", "performance": "Perf"}
"""The tie-breaks' column heads."""
SHOWN_ROWS = 100
"""Standings rows on one page of ``tstandings`` (the rest are counted)."""


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _terms(summary: TournamentSummaryView) -> str:
    settings = summary["settings"]
    tc = settings["tc"]
    minutes, seconds = clock_words(tc)
    return f"{minutes} {seconds} {kind_words(settings['variant'], settings['rated'], tc)}"


def summary_line(summary: TournamentSummaryView) -> str:
    """One ``tourneys`` line: id, format, status, terms, name (and the marks: ``P`` a
    password, ``B`` no bots)."""
    settings = summary["settings"]
    marks = ("P" if settings["password"] else "") + ("" if settings["bots"] else "B")
    return (
        f"{summary['id']:<10} {FORMAT_WORDS[settings['format']]:<11} {summary['status']:<8} "
        f"{_terms(summary):<28} {marks:<2} {settings['name']}"
    )


def page_count(view: TournamentView) -> int:
    """The pages of ``tstandings`` (one, empty, before anyone joined)."""
    return max(1, -(-len(view["standings"]) // SHOWN_ROWS))


def own_page(view: TournamentView, player: str | None) -> int:
    """The ``tstandings`` page holding ``player``'s row (1 when none)."""
    for at, row in enumerate(view["standings"]):
        if row["player"] == player:
            return at // SHOWN_ROWS + 1
    return 1


def standings_lines(view: TournamentView, page: int = 1) -> list[str]:
    """``tstandings``: the head (name, format, terms, status, round, start or end), then one
    line per player of ``page`` (:data:`SHOWN_ROWS` a page): rank, name, score, games,
    tie-breaks, marks (``*`` on fire, ``Bn`` n berserks, ``(paused)``, ``(withdrawn)``)."""
    settings = view["settings"]
    fmt = settings["format"]
    lines = [
        f"Tournament {view['id']}: {settings['name']}",
        f"{FORMAT_WORDS[fmt]}, {_terms(view)}, {view['status']}, round {view['round']}"
        + (f" of {settings['rounds']}" if settings["rounds"] else ""),
    ]
    if view["status"] == "created":
        joined, at = settings["start_when_joined"], settings["start_at_ms"]
        if at is None:
            lines.append(f"Starts when {joined} have joined.")
        else:
            lines.append(
                f"Starts: {_when(at)}" + (f" (or when {joined} have joined)" if joined else "")
            )
    elif view["status"] == "started" and view["countdown_ms"] is not None:  # an arena
        lines.append(f"Ends: {_when(view['countdown_ms'])}")
    lines.append("")
    rows = view["standings"]
    if not rows:
        return [*lines, "No players yet."]
    names = list(rows[0]["tiebreaks"])
    head = f"{'Rank':>4}  {'Name':<20} {'Score':>6} {'Games':>5}"
    head += "".join(f" {TIEBREAK_WORDS.get(name, name)[:8]:>8}" for name in names)
    lines.append(head)
    first = (page - 1) * SHOWN_ROWS
    for row in rows[first : first + SHOWN_ROWS]:
        score = f"{row['score']:g}"
        line = f"{row['rank']:>4}  {row['name']:<20} {score:>6} {row['games']:>5}"
        line += "".join(f" {row['tiebreaks'].get(name, 0):>8g}" for name in names)
        marks = ("*" if row["fire"] else "") + (f" B{row['berserks']}" if row["berserks"] else "")
        if row["status"] != "active":
            marks += f" ({row['status']})"
        lines.append(f"{line} {marks.strip()}".rstrip())
    pages = page_count(view)
    if pages > 1:
        lines.append(
            f"Page {page} of {pages} (rows {first + 1}-{min(len(rows), first + SHOWN_ROWS)}; "
            f'"tstandings {view["id"]} <page>" for another).'
        )
    lines.append(f"{len(rows)} player{'' if len(rows) == 1 else 's'}.")
    return lines


class TournamentCommands(SessionPart):
    """The tournament commands (see the module docstring)."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        return {
            "tourneys": self.on_tourneys,
            "tjoin": self.on_tjoin,
            "twithdraw": self.on_twithdraw,
            "tpause": self.on_tpause,
            "tstandings": self.on_tstandings,
        }

    def _desk(self) -> TournamentService | None:
        desk = self.state.host.tournaments
        if desk is None:
            self.state.write(["Tournaments are not served here."])
        return desk

    def _id(self, cmd: CommandLine, usage: str) -> str | None:
        words = cmd.words
        if not words:
            self.state.write([f"Usage: {usage}"])
            return None
        found = game_id_arg(words[0])
        if found is None:
            self.state.write([f"{bad_arg(words[0])}: {NO_SUCH_TOURNAMENT}"])
        return found

    def _me(self) -> PlayerInfo | None:
        info = self.state.host.hub_player(self.state.player["id"])
        if info is None:  # the connection left the hub meanwhile
            self.state.write(["You are not connected to the hub; log in again."])
        return info

    async def _do(self, work: Callable[[], Awaitable[object]], done: str) -> None:
        """Run a director call; its refusal in one line (FICS's words where FICS has them)."""
        try:
            await work()
        except CommandError as error:
            self.state.write([error_text(error.code, error.message)])
            return
        self.state.write([done])

    async def on_tourneys(self, cmd: CommandLine) -> None:
        desk = self._desk()
        if desk is None or not self._admitted():
            return
        word = cmd.args.strip().lower()
        wanted = STATUSES if not word else tuple(s for s in STATUSES if s == word)
        if not wanted:
            self.state.write([f"Usage: tourneys [{'|'.join(STATUSES)}]"])
            return
        found = await desk.list(wanted, limit=LISTED)
        if not found:
            self.state.write(["No tournaments."])
            return
        self.state.write(
            [
                f"{'Id':<10} {'Format':<11} {'Status':<8} {'Terms':<28} {'':<2} Name",
                *(summary_line(summary) for summary in found),
                "",
                f"{len(found)} tournament{'' if len(found) == 1 else 's'} displayed "
                '("tstandings <id>" for one, "tjoin <id>" to enter).',
            ]
        )

    async def on_tjoin(self, cmd: CommandLine) -> None:
        desk = self._desk()
        tournament_id = self._id(cmd, "tjoin <id> [password]")
        if desk is None or tournament_id is None:
            return
        me = self._me()
        if me is None:
            return
        password = cmd.words[1] if len(cmd.words) > 1 else None

        async def join() -> None:
            try:
                await desk.join(tournament_id, me, password=password)
            except CommandError as error:
                # Already in: a paused arena entry is resumed (the standings read only then).
                if error.code != ErrorCode.ALREADY_ENTERED:
                    raise
                settings = await desk.settings(tournament_id)
                rows = await desk.standings(tournament_id)
                if settings.format != "arena" or entry_status(rows, me.id) != "paused":
                    raise
                await desk.pause(tournament_id, me, pause=False)

        await self._do(join, f"You are in tournament {tournament_id}.")

    async def on_twithdraw(self, cmd: CommandLine) -> None:
        desk = self._desk()
        tournament_id = self._id(cmd, "twithdraw <id>")
        me = self._me() if desk is not None and tournament_id is not None else None
        if desk is None or tournament_id is None or me is None:
            return
        await self._do(
            lambda: desk.withdraw(tournament_id, me),
            f"You withdrew from tournament {tournament_id}.",
        )

    async def on_tpause(self, cmd: CommandLine) -> None:
        desk = self._desk()
        tournament_id = self._id(cmd, "tpause <id>")
        me = self._me() if desk is not None and tournament_id is not None else None
        if desk is None or tournament_id is None or me is None:
            return
        await self._do(
            lambda: desk.pause(tournament_id, me),
            f'Your entry in tournament {tournament_id} is paused ("tjoin {tournament_id}" resumes).',
        )

    def _admitted(self) -> bool:
        """Count a tournament read against the player's stored-game reads (an account's, a
        guest's address: the HTTP door's limit too); say so when over it."""
        host = self.state.host
        if host.reads is None:
            return True
        wait = host.reads.admit(host.requester(self.state.name), time.monotonic())
        if wait is not None:
            self.state.write([f"Too many tournament reads; try again in {wait} s."])
        return wait is None

    async def on_tstandings(self, cmd: CommandLine) -> None:
        desk = self._desk()
        tournament_id = self._id(cmd, "tstandings <id> [page]")
        if desk is None or tournament_id is None or not self._admitted():
            return
        try:
            view = await desk.view(tournament_id)
        except CommandError as error:
            self.state.write([error_text(error.code, error.message)])
            return
        pages = page_count(view)
        words = cmd.words
        if len(words) > 1:
            word = words[1]
            if not (word.isascii() and word.isdigit() and 1 <= int(word) <= pages) or len(words) > 2:
                self.state.write(
                    [f"{bad_arg(word)}: the page must be a number from 1 to {pages}."]
                )
                return
            page = int(word)
        else:
            page = own_page(view, self.state.player["id"])
        self.state.write(standings_lines(view, page))
