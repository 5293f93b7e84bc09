"""The tournaments' chats (docs/tournaments.md, "Chat"): a registered player writes a line into a
tournament's chat (any status: a finished arena's chat stays open, as lichess's), every watcher
of the tournament on every hub is pushed it, and a new watch is shown the last
:data:`~server.store.tournament_chat.CHAT_HISTORY` lines, oldest first.

A line is checked before anything is read or stored — a guest is refused ``registered_only``,
an account over ``tournament_chat_per_minute`` lines a minute or a tournament over
``tournament_chat_lines_per_s`` lines a second (in all, on this hub) ``rate_limited`` —, then
stored, then answered (the door's ``ack``), then pushed: to this hub's watchers, encoded once
(:meth:`~server.app.tournament_watchers.StandingsWatchers.tell_all`, in batches for a large
group), and published on the tournaments' bus channel (``server.app.tournament_cluster``) for
the other hubs' watchers (:meth:`TournamentChats.heard`). Each hub keeps the last lines of the
tournaments recently watched in memory (read from the store once), so a watch costs no query.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from server.app.tournament_live import TournamentRunner
from server.app.tournament_watchers import StandingsWatchers
from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import PlayerInfo
from server.hub.messages import Message, MessageKind
from server.hub.tournament_payloads import TournamentChatLineView, TournamentChatPayload
from server.store import Store, StoreError
from server.store.tournament_chat import CHAT_HISTORY, StoredChatLine
from server.store.tournaments import ms_datetime
from server.transport.accounts import store_player_id
from server.transport.codec import encode_message

__all__ = ["CHAT_TABLE_SWEEP", "HISTORIES_KEPT", "ChatLinePublisher", "TournamentChats"]

logger = logging.getLogger(__name__)

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
HISTORIES_KEPT = 1000
"""Tournaments whose last lines a hub keeps in memory (the least recently used go first)."""
CHAT_TABLE_SWEEP = 10_000
"""Accounts (or tournaments) counted in a chat limit above which the quiet ones are forgotten."""

ChatLinePublisher = Callable[[str, int, TournamentChatLineView], None]
"""Tells the other hubs of a line stored here: the tournament, the line's id, the line."""


@dataclass(slots=True)
class _History:
    """A tournament's last lines by id (``ready`` once read from the store; lines heard while
    it was read are merged in)."""

    lines: dict[int, TournamentChatLineView] = field(default_factory=dict)
    ready: asyncio.Event = field(default_factory=asyncio.Event)

    def add(self, line_id: int, line: TournamentChatLineView) -> None:
        self.lines[line_id] = line
        self.trim()

    def trim(self) -> None:
        if len(self.lines) > CHAT_HISTORY:
            ids = sorted(self.lines)
            for old in ids[: len(ids) - CHAT_HISTORY]:
                del self.lines[old]

    def last(self) -> list[TournamentChatLineView]:
        return [self.lines[line_id] for line_id in sorted(self.lines)]


def line_view(line: StoredChatLine) -> TournamentChatLineView:
    """A stored line as shown."""
    at_ms = (line.at - EPOCH) // timedelta(milliseconds=1)
    return {"user": line.name, "text": line.text, "at": at_ms}


def _lines(count: int) -> str:
    """``count`` chat lines, in words ("1 chat line", "20 chat lines")."""
    return f"{count} chat line" if count == 1 else f"{count} chat lines"


def _recent(table: dict[str, list[int]], key: str, since: int) -> list[int]:
    if len(table) > CHAT_TABLE_SWEEP:  # forget the quiet ones
        for quiet in [k for k, times in table.items() if not times or times[-1] <= since]:
            del table[quiet]
    return [t for t in table.get(key, ()) if t > since]


class TournamentChats:
    """The chats of the tournaments (see the module docstring); part of the director."""

    def __init__(
        self,
        store: Store,
        runner: TournamentRunner,
        watchers: StandingsWatchers,
        *,
        clock_ms: Callable[[], int],
        per_minute: int,
        lines_per_s: int,
    ) -> None:
        self._store = store
        self._runner = runner
        self._watchers = watchers
        self._clock = clock_ms
        self.per_minute = per_minute
        """Lines one account may write in a minute (``tournament_chat_per_minute``)."""
        self.lines_per_s = lines_per_s
        """Lines a tournament may be written in a second (``tournament_chat_lines_per_s``)."""
        self._by_account: dict[str, list[int]] = {}
        self._by_tournament: dict[str, list[int]] = {}
        self._histories: OrderedDict[str, _History] = OrderedDict()
        self.publish: ChatLinePublisher = lambda tournament_id, line_id, line: None
        """Set by the cluster (``server.app.tournament_cluster``): tell the other hubs."""

    async def say(self, tournament_id: str, player: PlayerInfo, text: str) -> None:
        """Store ``player``'s line (``text``: user text, checked by the door's reader) and push
        it (just after the caller's answer).

        :raises CommandError: ``REGISTERED_ONLY`` (a guest), ``RATE_LIMITED`` (the account's or
            the tournament's limit), ``NO_SUCH_TOURNAMENT``.
        """
        store_id = None if player.guest else store_player_id(player.id)
        if store_id is None:
            raise CommandError(
                ErrorCode.REGISTERED_ONLY, "Log in with an account to chat in a tournament."
            )
        self._admit(tournament_id, player.id)
        await self._runner.live(tournament_id)  # NO_SUCH_TOURNAMENT
        now = self._clock()
        stored = await self._store.add_tournament_chat_line(
            tournament_id, player_id=store_id, name=player.name, text=text, at=ms_datetime(now)
        )
        line = line_view(stored)
        # After the door's ack (sent when this returns, before the loop runs the callback).
        asyncio.get_running_loop().call_soon(self._said, tournament_id, stored.id, line)

    def _admit(self, tournament_id: str, player_id: str) -> None:
        """Count a line of ``player_id`` in ``tournament_id`` against both limits, before
        anything is read or stored. :raises CommandError: ``RATE_LIMITED``."""
        now = self._clock()
        mine = _recent(self._by_account, player_id, now - 60_000)
        if len(mine) >= self.per_minute:
            self._by_account[player_id] = mine
            raise CommandError(
                ErrorCode.RATE_LIMITED,
                f"At most {_lines(self.per_minute)} a minute per account; wait a little.",
            )
        theirs = _recent(self._by_tournament, tournament_id, now - 1000)
        if len(theirs) >= self.lines_per_s:
            self._by_tournament[tournament_id] = theirs
            raise CommandError(
                ErrorCode.RATE_LIMITED,
                f"This tournament's chat takes at most {_lines(self.lines_per_s)} a second; "
                "try again.",
            )
        mine.append(now)
        theirs.append(now)
        self._by_account[player_id] = mine
        self._by_tournament[tournament_id] = theirs

    def _said(self, tournament_id: str, line_id: int, line: TournamentChatLineView) -> None:
        self.heard(tournament_id, line_id, line)
        self.publish(tournament_id, line_id, line)

    def heard(self, tournament_id: str, line_id: int, line: TournamentChatLineView) -> None:
        """A line stored (here or on another hub): kept in the history, pushed to the
        watchers here."""
        history = self._histories.get(tournament_id)
        if history is not None:
            if line_id in history.lines:
                return
            history.add(line_id, line)
        payload: TournamentChatPayload = {"id": tournament_id, "lines": [line]}
        frame = encode_message(Message(MessageKind.TOURNAMENT_CHAT, payload))
        self._watchers.tell_all(tournament_id, frame)

    async def history(self, tournament_id: str) -> TournamentChatPayload:
        """The tournament's last lines, oldest first (read from the store once; the next calls
        do not wait)."""
        history = self._histories.get(tournament_id)
        if history is None:
            history = self._histories[tournament_id] = _History()
            while len(self._histories) > HISTORIES_KEPT:
                self._histories.popitem(last=False)
            try:
                stored = await self._store.tournament_chat_lines(tournament_id)
            except StoreError as error:
                logger.info("tournament %s: chat not read (%s)", tournament_id, error)
                if self._histories.get(tournament_id) is history:
                    del self._histories[tournament_id]
                history.ready.set()
                return {"id": tournament_id, "lines": history.last()}
            for line in stored:
                history.lines.setdefault(line.id, line_view(line))
            history.trim()
            history.ready.set()
        elif not history.ready.is_set():
            await history.ready.wait()
        else:
            self._histories.move_to_end(tournament_id)
        return {"id": tournament_id, "lines": history.last()}
