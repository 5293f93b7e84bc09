"""The watchers of the tournaments, and the standings pushed to them by page
(``server.hub.tournament.pages``; docs/tournaments.md, "Scale").

Each watcher sees one page: a fixed one, or the one holding its player's row (page 1 when the
player is not entered). After a change of a tournament, each watched page's
``tournament_standings`` frame is encoded once for that version of the standings and told only
to the watchers that were last told another frame: a page whose content did not change keeps
its earlier bytes object, so its watchers are told nothing. A large group is told in batches
(the loop free between two), at most every :data:`PUSH_INTERVAL_S` and
:data:`PUSH_BYTES_PER_S`. A frame for every watcher whatever its page (a chat line,
``server.app.tournament_chat``) is told with :meth:`StandingsWatchers.tell_all`: to a large
group in batches too, the frames in the order they came.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from server.app.live_tournament import Live
from server.hub.identity import PlayerId
from server.hub.messages import Message, MessageKind
from server.hub.tournament.pages import watched_page
from server.hub.tournament_payloads import TournamentStandingsPayload
from server.transport.codec import encode_message

__all__ = ["FAN_OUT_BATCH", "PUSH_BYTES_PER_S", "PUSH_INTERVAL_S", "StandingsWatchers", "Watcher"]

logger = logging.getLogger(__name__)

Watcher = Callable[[bytes], None]
"""Told the ``tournament_standings`` frames of its page of a watched tournament (the same bytes
for every watcher of that page; must not block: a websocket's outbox ``put``)."""

FAN_OUT_BATCH = 100
"""Watchers told in one turn of the event loop; a larger group is told in batches, the loop
free between two (5,000 watchers of a 1,000-player arena: bench/bench_tournament_scale.py)."""
PUSH_INTERVAL_S = 1.0
"""A group larger than :data:`FAN_OUT_BATCH` is pushed at most this often (the newest pages of
the changes since)."""
PUSH_BYTES_PER_S = 50_000_000
"""And at most this many bytes a second on average: after telling a group, the next push waits
until the bytes just sent are paid for (with whole standings, 5,000 watchers of a 1,000-player
arena were 1.1 GB a push; by page, ~13 MB at most)."""


@dataclass(slots=True)
class _Watch:
    page: int | None
    """The page watched (None: the one holding :attr:`player`'s row)."""
    player: PlayerId | None
    last: bytes | None = None
    """The frame last told (or shown in the watch's answer)."""


@dataclass(slots=True)
class _Tournament:
    watchers: dict[Watcher, _Watch] = field(default_factory=dict)
    """In the order they came (each told in that order)."""
    frames: dict[int, tuple[object, int, bytes]] = field(default_factory=dict)
    """Per page: the state and version it was encoded for, and its frame."""
    fanning: bool = False
    """A task is telling the group in batches."""
    again: bool = False
    """A change came while the batches were told: tell the group once more."""
    told_all: deque[bytes] = field(default_factory=deque)
    """Frames for every watcher (:meth:`StandingsWatchers.tell_all`) being told in batches,
    the first being told."""


class StandingsWatchers:
    """See the module docstring. ``spawn`` runs the batches' task (the runner's, waited for at
    its stop)."""

    def __init__(self, spawn: Callable[[Coroutine[Any, Any, None]], None]) -> None:
        self._spawn = spawn
        self._tournaments: dict[str, _Tournament] = {}

    def watch(
        self, live: Live, watcher: Watcher, *, page: int | None, player: PlayerId | None
    ) -> None:
        """``watcher`` sees ``page`` of ``live`` (None: its ``player``'s page) from now on; a
        watcher already known changes page. Its page as it is now counts as told (the watch's
        answer shows it)."""
        group = self._tournaments.setdefault(live.id, _Tournament())
        watch = group.watchers.get(watcher)
        if watch is None:
            watch = group.watchers[watcher] = _Watch(page, player)
        watch.page, watch.player = page, player
        watch.last = self._frame(live, group, self._page_of(live, watch))

    def unwatch(self, tournament_id: str, watcher: Watcher) -> None:
        """Stop telling ``watcher`` (unknown watchers are ignored)."""
        group = self._tournaments.get(tournament_id)
        if group is not None:
            group.watchers.pop(watcher, None)
            if not group.watchers and not group.fanning and not group.told_all:
                del self._tournaments[tournament_id]

    def publish(self, live: Live) -> None:
        """``live`` changed: tell each watcher its page if that page changed."""
        group = self._tournaments.get(live.id)
        if group is None or not group.watchers:
            return
        if group.fanning:
            group.again = True  # told by the batches in flight, newest pages
        elif len(group.watchers) <= FAN_OUT_BATCH:
            self._tell(live, group, list(group.watchers.items()))
        else:
            group.fanning = True
            self._spawn(self._fan_out(live, group))

    def tell_all(self, tournament_id: str, frame: bytes) -> None:
        """Tell every watcher of the tournament ``frame``, whatever its page, after the frames
        told so before (a group larger than :data:`FAN_OUT_BATCH` in batches, the loop free
        between two)."""
        group = self._tournaments.get(tournament_id)
        if group is None or not group.watchers:
            return
        if group.told_all:  # batches in flight: after them
            group.told_all.append(frame)
        elif len(group.watchers) <= FAN_OUT_BATCH:
            self._tell_frame(list(group.watchers), frame)
        else:
            group.told_all.append(frame)
            self._spawn(self._fan_out_all(tournament_id, group))

    def page_payload(
        self, live: Live, page: int | None, player: PlayerId | None
    ) -> TournamentStandingsPayload:
        """The page a watcher of ``page`` / ``player`` sees now."""
        return live.board.standings_payload(live.state, self._page_of(live, _Watch(page, player)))

    @staticmethod
    def _page_of(live: Live, watch: _Watch) -> int:
        board, state = live.board, live.state
        if watch.page is None and watch.player is None:
            return 1
        return watched_page(
            watch.page, watch.player, board.index(state), len(board.standings(state))
        )

    @staticmethod
    def _frame(live: Live, group: _Tournament, page: int) -> bytes:
        """``page``'s frame for the state now: encoded once per version, and the earlier bytes
        object when its content is the same (its watchers were told it: nothing to tell)."""
        state = live.state
        kept = group.frames.get(page)
        if kept is not None and kept[0] is state and kept[1] == state.version:
            return kept[2]
        frame = encode_message(
            Message(MessageKind.TOURNAMENT_STANDINGS, live.board.standings_payload(state, page))
        )
        if kept is not None and kept[2] == frame:
            frame = kept[2]
        group.frames[page] = (state, state.version, frame)
        return frame

    def _tell(self, live: Live, group: _Tournament, watchers: list[tuple[Watcher, _Watch]]) -> int:
        """Tell each of ``watchers`` its page if it is not the frame last told; the bytes told."""
        told = 0
        for watcher, watch in watchers:
            frame = self._frame(live, group, self._page_of(live, watch))
            if frame is watch.last:
                continue
            watch.last = frame
            told += len(frame)
            try:
                watcher(frame)
            except Exception:
                logger.exception("a tournament watcher failed")
        return told

    @staticmethod
    def _tell_frame(watchers: list[Watcher], frame: bytes) -> None:
        for watcher in watchers:
            try:
                watcher(frame)
            except Exception:
                logger.exception("a tournament watcher failed")

    async def _fan_out_all(self, tournament_id: str, group: _Tournament) -> None:
        """Tell the group the frames of :meth:`tell_all` in order, each in batches."""
        try:
            while group.told_all:
                watchers = list(group.watchers)
                for start in range(0, len(watchers), FAN_OUT_BATCH):
                    if start:
                        await asyncio.sleep(0)
                    self._tell_frame(watchers[start : start + FAN_OUT_BATCH], group.told_all[0])
                group.told_all.popleft()
        finally:
            group.told_all.clear()
            idle = not group.watchers and not group.fanning
            if idle and self._tournaments.get(tournament_id) is group:
                del self._tournaments[tournament_id]

    async def _fan_out(self, live: Live, group: _Tournament) -> None:
        """Tell a large group in batches (the loop serves others between two), then, at most
        every :data:`PUSH_INTERVAL_S` and :data:`PUSH_BYTES_PER_S`, again if it changed
        meanwhile (each watcher then gets its page as it is by then)."""
        try:
            again = True
            while again:
                began = time.monotonic()
                watchers = list(group.watchers.items())
                told = 0
                for start in range(0, len(watchers), FAN_OUT_BATCH):
                    if start:
                        await asyncio.sleep(0)
                    told += self._tell(live, group, watchers[start : start + FAN_OUT_BATCH])
                pause = max(PUSH_INTERVAL_S, told / PUSH_BYTES_PER_S)
                await asyncio.sleep(max(0.0, began + pause - time.monotonic()))
                again, group.again = group.again, False
        finally:
            group.fanning = False
            if not group.watchers and not group.told_all:
                self._tournaments.pop(live.id, None)
