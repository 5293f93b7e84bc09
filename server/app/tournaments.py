"""The tournament director: drives the pure tournament core (``server.hub.tournament``) on the
store, the hub and the clock (docs/tournaments.md). Every door (the websocket's
``tournament_*`` frames, the HTTP lichess subset, the ICS commands) goes through one
:class:`TournamentDirector`, whose public methods are its API.

Each change is the core's loop: decide (``state.decide_*``) → append the event to the store
(``expected_seq`` = the events seen; on :class:`~server.store.TournamentConflictError` reload
and decide again) → apply it to the live state → push each watcher its page of the standings
when that page changed (``server.app.tournament_watchers``). A refusal of the core (joining
twice, a finished or full event, a wrong password …) raises :class:`TournamentRefused` with its
:class:`~server.hub.errors.ErrorCode`; nothing is stored.

Times are wall-clock milliseconds since the epoch (``TournamentSettings.start_at_ms``), read
from the director's injected ``clock_ms``; games run on the hub's own time.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from server.app.live_tournament import Live
from server.app.tournament_chat import TournamentChats
from server.app.tournament_live import TournamentRunner
from server.app.tournament_watchers import StandingsWatchers, Watcher
from server.hub.effects import GameFinished
from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import COMPUTER, PlayerId, PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.tournament.pages import page_count
from server.hub.tournament.state import (
    Refusal,
    decide_join,
    decide_pause,
    decide_withdraw,
)
from server.hub.tournament.trf import trf
from server.hub.tournament.values import Event, StandingRow, TournamentSettings
from server.hub.tournament.views import current_round, summary_view
from server.hub.tournament_payloads import (
    TournamentChatPayload,
    TournamentPairingView,
    TournamentRoundPayload,
    TournamentStandingsPayload,
    TournamentStandingView,
    TournamentSummaryView,
    TournamentView,
)
from server.store import Store
from server.store.tournaments import TournamentStatus, ms_datetime

__all__ = ["TournamentDirector", "TournamentGameRow", "TournamentRefused", "Watcher", "wall_ms"]

logger = logging.getLogger(__name__)

ENTRY_TABLE_SWEEP = 10_000
"""Accounts counted in the entries' rate limit above which the quiet ones are forgotten."""


def wall_ms() -> int:
    """The director's default clock: wall-clock milliseconds since the epoch."""
    return time.time_ns() // 1_000_000


class TournamentRefused(CommandError):
    """A tournament request changed nothing: ``code`` says why, ``message`` in words (every
    door shows them; a :class:`~server.hub.errors.CommandError`, so that the doors below the
    composition root catch it by that name)."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(code, message)


@dataclass(frozen=True, slots=True)
class TournamentGameRow:
    """One game of a tournament, in pairing order: its round (an arena's wave), players (white
    moves first), ``result`` (None while played) and berserks."""

    game_id: str
    round: int
    white: str
    black: str
    result: str | None
    plies: int | None
    white_berserk: bool
    black_berserk: bool


class TournamentDirector:
    """The tournaments this hub runs, and the one API every door uses (see the module
    docstring). Built by the composition root; :meth:`start` before serving (rebuilds the
    running tournaments from the store), :meth:`stop` at shutdown."""

    def __init__(
        self,
        store: Store,
        runner: TournamentRunner,
        *,
        hash_password: Callable[[str], str],
        verify_password: Callable[[str, str], bool],
        clock_ms: Callable[[], int] = wall_ms,
        max_players: int = 1000,
        created_per_day: int = 5,
        entries_per_minute: int = 10,
        chat_per_minute: int = 20,
        chat_lines_per_s: int = 5,
    ) -> None:
        self._store = store
        self._runner = runner
        self._hash = hash_password
        self._verify = verify_password
        self._clock = clock_ms
        self.max_players = max_players
        """The most entries a tournament may have (``[tournaments] max_players``)."""
        self.created_per_day = created_per_day
        """Tournaments one account may create in 24 hours (``[tournaments] created_per_day``)."""
        self._created: dict[str, list[int]] = {}
        self.entries_per_minute = entries_per_minute
        """Joins, withdrawals and pauses one account may ask for in a minute, from every door
        (``[tournaments] tournament_entries_per_minute``): each asks the store for a write."""
        self._entries: dict[str, list[int]] = {}
        self._watchers = StandingsWatchers(runner.spawn)
        runner.publish = self._watchers.publish
        self.chats = TournamentChats(
            store,
            runner,
            self._watchers,
            clock_ms=clock_ms,
            per_minute=chat_per_minute,
            lines_per_s=chat_lines_per_s,
        )
        """The tournaments' chats (``server.app.tournament_chat``)."""

    # --- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Take up the unfinished tournaments (after a restart: their state replayed from the
        store, their timers rebuilt from the stored deadlines, their games' results that came
        while no director ran stored)."""
        await self._runner.start()

    async def stop(self) -> None:
        """Cancel the timers and wait for the work in flight (nothing stored is lost: a next
        :meth:`start` resumes)."""
        await self._runner.stop()

    async def tick(self, tournament_id: str) -> None:
        """Do what is due now for the tournament (start, pair, end), as its timer does when it
        fires; harmless when nothing is due (tests with an injected clock call it).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        await self._runner.tick(tournament_id)

    # --- commands -----------------------------------------------------------------------------

    async def create(
        self,
        creator: PlayerInfo | None,
        settings: TournamentSettings,
        *,
        password: str | None = None,
    ) -> str:
        """Store a new tournament and return its id. ``settings.password_hash`` is ignored:
        ``password`` (the text) is hashed here. ``creator`` None: the server's own. A tournament
        whose settings allow the computer has it entered at once (its first entry).

        :raises TournamentRefused: ``TOURNAMENT_LIMIT`` (the creator's daily quota),
            ``GUESTS_CASUAL_ONLY`` (a guest creating), ``BAD_REQUEST`` (``max_players`` over the
            server's limit).
        """
        now = self._clock()
        if creator is not None:
            if creator.guest:
                raise TournamentRefused(
                    ErrorCode.GUESTS_CASUAL_ONLY, "Log in with an account to create tournaments."
                )
            recent = [t for t in self._created.get(creator.id, []) if t > now - 86_400_000]
            if len(recent) >= self.created_per_day:
                raise TournamentRefused(
                    ErrorCode.TOURNAMENT_LIMIT,
                    f"At most {self.created_per_day} tournaments a day per account.",
                )
        if settings.max_players > self.max_players:
            raise TournamentRefused(
                ErrorCode.BAD_REQUEST, f"A tournament has at most {self.max_players} players here."
            )
        # The password hasher is slow on purpose (argon2): off the event loop.
        hashed = None if password is None else await asyncio.to_thread(self._hash, password)
        settings = replace(settings, password_hash=hashed)
        tournament_id = await self._store.create_tournament(
            settings,
            created_by=None if creator is None else creator.name,
            now=ms_datetime(now),
            owner=self._runner.node,
        )
        if creator is not None:
            recent.append(now)
            self._created[creator.id] = recent
        await self._runner.adopt(tournament_id)
        if settings.computer:
            # The computer is entered by the tournament that allows it (it never asks): its
            # games are created like anyone's, and its seat plays them (server/app/computer.py).
            await self.join(tournament_id, COMPUTER, password=password)
        return tournament_id

    async def create_scheduled(self, tournament_id: str, settings: TournamentSettings) -> bool:
        """Store the server's own tournament ``tournament_id`` (a scheduled occurrence) and run
        it here, unless it exists already (created by another hub or before a restart): True
        if created now."""
        created = await self._store.create_tournament_once(
            tournament_id, settings, now=ms_datetime(self._clock()), owner=self._runner.node
        )
        if created:
            await self._runner.adopt(tournament_id)
        return created

    async def join(
        self, tournament_id: str, player: PlayerInfo, *, password: str | None = None
    ) -> None:
        """Enter ``player`` (their rating in the tournament's pool then).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``ALREADY_ENTERED``,
            ``TOURNAMENT_FINISHED``, ``TOURNAMENT_FULL``, ``WRONG_TOURNAMENT_PASSWORD``,
            ``RATING_TOO_LOW``, ``BOTS_NOT_ALLOWED``, ``COMPUTER_NOT_ALLOWED``,
            ``GUESTS_CASUAL_ONLY`` (a guest in a rated tournament), ``TOURNAMENT_ENTRY_LIMIT``.
        """
        self._admit_entry(player)

        wanted = (await self._runner.live(tournament_id)).settings.password_hash
        password_ok = (
            wanted is not None
            and password is not None
            and await asyncio.to_thread(self._verify, wanted, password)
        )

        def decide(live: Live, now: int) -> Event | Refusal:
            settings = live.settings
            if player.guest and settings.rated:
                return Refusal(ErrorCode.GUESTS_CASUAL_ONLY)
            terms = GameTerms(settings.variant, settings.control, settings.rated)
            rating = round(terms.rating_of(player).rating)
            return decide_join(
                settings,
                live.state,
                player.id,
                player.name,
                rating,
                now,
                bot=player.bot,
                computer=player.computer,
                password_ok=password_ok,
            )

        await self._runner.change(tournament_id, decide)

    async def withdraw(self, tournament_id: str, player: PlayerInfo) -> None:
        """Take ``player``'s own entry out (points kept; never paired again; may rejoin).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``NOT_ENTERED``,
            ``TOURNAMENT_FINISHED``, ``TOURNAMENT_ENTRY_LIMIT``.
        """
        self._admit_entry(player)
        await self._runner.change(
            tournament_id, lambda live, now: decide_withdraw(live.state, player.id, now)
        )

    async def pause(self, tournament_id: str, player: PlayerInfo, *, pause: bool = True) -> None:
        """Pause (not paired until resumed) or resume (``pause=False``) an arena entry.

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``NOT_ARENA``, ``NOT_ENTERED``,
            ``ALREADY_PAUSED``, ``NOT_PAUSED``, ``TOURNAMENT_FINISHED``,
            ``TOURNAMENT_ENTRY_LIMIT``.
        """
        self._admit_entry(player)
        await self._runner.change(
            tournament_id,
            lambda live, now: decide_pause(live.settings, live.state, player.id, now, pause=pause),
        )

    async def chat(self, tournament_id: str, player: PlayerInfo, text: str) -> None:
        """Store ``player``'s line in the tournament's chat; every watcher of the tournament
        is pushed it (``server.app.tournament_chat``).

        :raises CommandError: ``REGISTERED_ONLY``, ``RATE_LIMITED``, ``NO_SUCH_TOURNAMENT``."""
        await self.chats.say(tournament_id, player, text)

    async def chat_history(self, tournament_id: str) -> TournamentChatPayload:
        """The tournament's last 50 chat lines, oldest first (read from the store once)."""
        return await self.chats.history(tournament_id)

    def _admit_entry(self, player: PlayerInfo) -> None:
        """Count one join, withdrawal or pause of ``player`` (the computer is not counted: the
        server enters it), before anything is read or stored: a client looping over them costs
        a store write each.

        :raises TournamentRefused: ``TOURNAMENT_ENTRY_LIMIT`` over ``entries_per_minute``."""
        if player.computer:
            return
        now = self._clock()
        if len(self._entries) > ENTRY_TABLE_SWEEP:  # forget the accounts quiet for a minute
            self._entries = {
                p: times for p, times in self._entries.items() if times[-1] > now - 60_000
            }
        recent = [t for t in self._entries.get(player.id, ()) if t > now - 60_000]
        if len(recent) >= self.entries_per_minute:
            self._entries[player.id] = recent
            raise TournamentRefused(
                ErrorCode.TOURNAMENT_ENTRY_LIMIT,
                f"At most {self.entries_per_minute} tournament joins, withdrawals and pauses a "
                "minute per account; wait a little.",
            )
        recent.append(now)
        self._entries[player.id] = recent

    # --- reads --------------------------------------------------------------------------------

    async def view(self, tournament_id: str) -> TournamentView:
        """The view (settings, status, countdown, standings with fire and berserk marks, the
        current round's pairings or an arena's games being played, bounded, its byes, the
        podium; ``server.hub.tournament.rounds``).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        live = await self._runner.live(tournament_id)
        return live.board.view(live.state)

    async def list(
        self,
        status: TournamentStatus | Collection[TournamentStatus] | None = None,
        *,
        limit: int = 50,
    ) -> builtins.list[TournamentSummaryView]:
        """Tournaments (all, or in ``status``), the newest first, at most ``limit`` (1–500)."""
        infos = await self._store.list_tournaments(status, limit=limit)
        return [
            summary_view(info.id, info.status, info.created_by, info.settings) for info in infos
        ]

    async def settings(self, tournament_id: str) -> TournamentSettings:
        """A tournament's settings. :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        return (await self._runner.live(tournament_id)).settings

    async def standings(self, tournament_id: str) -> builtins.list[StandingRow]:
        """The standings now, best first (final once finished: the results).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        return (await self._runner.live(tournament_id)).standings()

    async def results(self, tournament_id: str) -> builtins.list[StandingRow]:
        """The standings (final once the tournament is finished), as lichess's ``results``."""
        return await self.standings(tournament_id)

    async def games(self, tournament_id: str) -> builtins.list[TournamentGameRow]:
        """Every game of the tournament in pairing order, finished or being played.

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        state = (await self._runner.live(tournament_id)).state
        rows = []
        for paired in state.games.values():
            result = state.results.get(paired.game_id)
            rows.append(
                TournamentGameRow(
                    paired.game_id,
                    paired.round,
                    paired.white,
                    paired.black,
                    None if result is None else result.result,
                    None if result is None else result.plies,
                    bool(result and result.white_berserk),
                    bool(result and result.black_berserk),
                )
            )
        return rows

    async def trf(self, tournament_id: str, *, address: str = "") -> str:
        """The TRF-16 text of the tournament (Swiss; any format is written).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        live = await self._runner.live(tournament_id)
        return trf(live.settings, live.state, address=address)

    # --- games' ends ---------------------------------------------------------------------------

    def game_ended(self, record: GameFinished) -> None:
        """A tournament game's end is stored (the recorder tells it, possibly twice): fold its
        result into its tournament (stored once) and pair again. Returns at once; the work
        runs in a task."""
        from server.app.tournament_games import tournament_game_of_end

        tag = record.tournament
        if tag is None:
            return
        self._runner.spawn(
            self._runner.game_finished(
                tag.id, record.game_id, tournament_game_of_end(record), self._clock()
            )
        )

    # --- watchers -----------------------------------------------------------------------------

    async def watch(
        self,
        tournament_id: str,
        watcher: Watcher,
        *,
        page: int | None = None,
        player: PlayerId | None = None,
    ) -> TournamentStandingsPayload:
        """``watcher`` is told ``page`` of the standings (None: the page holding ``player``'s
        row, page 1 when none) each time it changes from now on (``server.app.
        tournament_watchers``); watching again changes the page. Returns the page as it is now
        (counted as told).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``BAD_REQUEST`` (a page past the
            last one)."""
        live = await self._runner.live(tournament_id)
        payload = self._page(live, page, player)
        self._watchers.watch(live, watcher, page=page, player=player)
        return payload

    async def standings_page(
        self, tournament_id: str, page: int | None = None, player: PlayerId | None = None
    ) -> TournamentStandingsPayload:
        """One page of the standings (None: the one holding ``player``'s row, else page 1).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``BAD_REQUEST`` (a page past the
            last one)."""
        return self._page(await self._runner.live(tournament_id), page, player)

    async def round_pairings(
        self, tournament_id: str, round_: int, page: int = 1
    ) -> TournamentRoundPayload:
        """``page`` of round ``round_``'s pairings and byes (an arena's wave;
        ``server.hub.tournament.rounds``).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``, ``BAD_REQUEST`` (a round not paired
            yet, a page past the round's last one)."""
        live = await self._runner.live(tournament_id)
        rounds = current_round(live.state)
        if not 1 <= round_ <= rounds:
            raise TournamentRefused(
                ErrorCode.BAD_REQUEST,
                f"Round {round_} is not paired: "
                + ("no round is paired yet." if rounds == 0 else f"rounds 1 to {rounds} are."),
            )
        payload = live.board.round_payload(live.state, round_, 1)
        if page > payload["pages"]:
            pages = payload["pages"]
            raise TournamentRefused(
                ErrorCode.BAD_REQUEST,
                f"Page {page}: round {round_}'s pairings have {pages} page"
                + ("s." if pages > 1 else "."),
            )
        return payload if page == 1 else live.board.round_payload(live.state, round_, page)

    async def my_games(
        self, tournament_id: str, player: PlayerId
    ) -> builtins.list[TournamentPairingView]:
        """``player``'s games in the tournament, the newest last (at most 30).

        :raises TournamentRefused: ``NO_SUCH_TOURNAMENT``."""
        live = await self._runner.live(tournament_id)
        return live.board.games_of(live.state, player)

    async def entry_row(
        self, tournament_id: str, player: PlayerId
    ) -> TournamentStandingView | None:
        """``player``'s standings row (None: not entered). :raises TournamentRefused:
        ``NO_SUCH_TOURNAMENT``."""
        live = await self._runner.live(tournament_id)
        return live.board.row_of(live.state, player)

    def _page(
        self, live: Live, page: int | None, player: PlayerId | None
    ) -> TournamentStandingsPayload:
        if page is not None:
            pages = page_count(len(live.standings()))
            if page > pages:
                raise TournamentRefused(
                    ErrorCode.BAD_REQUEST,
                    f"Page {page}: the standings have {pages} page{'s' if pages > 1 else ''}.",
                )
        return self._watchers.page_payload(live, page, player)

    def unwatch(self, tournament_id: str, watcher: Watcher) -> None:
        """Stop telling ``watcher`` (unknown watchers are ignored)."""
        self._watchers.unwatch(tournament_id, watcher)
