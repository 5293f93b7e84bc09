"""The adapters the composition root wires between the hub and the store.

:class:`StoreRecorder` writes the hub's persistence records through the store,
:class:`StoreAccounts` gives the transport's accounts their database.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from server.hub.effects import (
    BerserkMarked,
    GameCreated,
    GameFinished,
    MoveAppended,
    MovesRetracted,
    PersistRecord,
    PremovesSet,
)
from server.hub.glicko2 import speed_of
from server.rules import ENGINE_TERMINATIONS
from server.rules.record import UNFINISHED_STATUSES, MoveRecord
from server.rules.time_control import Correspondence
from server.store import (
    DuplicateMoveError,
    EndJournal,
    GameRecord,
    GameStateError,
    MoveWriter,
    NameTakenError,
    OfferNotHeldError,
    Player,
    PlayerRating,
    Store,
    StoreError,
    StoreUnavailableError,
    UnknownGameError,
    end_entry,
    end_from_entry,
)
from server.transport.accounts import AccountsUnavailable, NameTaken, store_player_id
from server.transport.driver_ports import MoveStored, PersistError, RatingChange

logger = logging.getLogger("server")


# --- adapters between the hub's records and the store ----------------------------------------


DECIDED_AGAIN_AT_RESTORE = ENGINE_TERMINATIONS
"""Ends the rules engine decides from the stored moves alone (checkmate, repetition …): the
move that made one is stored before the end is written, and a game resumed after a crash is
decided again from its moves (``Lifecycle.restore`` in server.hub.room_lifecycle), so such an end needs no journal
entry. Time, first-move aborts and abandonment depend on when the server decided them: those
are kept in the :class:`EndJournal` until stored."""


def _persist_error(record: PersistRecord, error: Exception) -> PersistError:
    """What the players are told when the store did not take ``record``."""
    if isinstance(error, StoreUnavailableError):
        return PersistError("the database is unavailable")
    if isinstance(error, DuplicateMoveError):
        return PersistError("another move was already stored for this turn")
    if isinstance(error, UnknownGameError):
        return PersistError("the game is not in the database")
    if isinstance(error, OfferNotHeldError):
        logger.warning("new game %s refused: %s", record.game_id, error)
        return PersistError("the seek or challenge is held elsewhere", offers_gone=error.keys)
    if isinstance(error, (StoreError, ValueError)):
        logger.warning("store refused %s: %s", type(record).__name__, error)
        return PersistError("the database refused it")
    # RuntimeError: the move writer is closed, the server is shutting down
    return PersistError(f"the server is shutting down ({error})")


class StoreRecorder:
    """Writes the hub's :data:`~server.hub.effects.PersistRecord` s through the store.

    Moves go through the :class:`MoveWriter` (group commit). A new game is created and marked
    started in the store. A finished game is stored with its result (rated games also update both
    ratings in the same transaction) or as aborted; storing it twice is harmless. An end the
    server decided at a moment of its own (a flag fall …; not an engine outcome, see
    :data:`DECIDED_AGAIN_AT_RESTORE`) is first kept in the :class:`EndJournal`, so that it
    survives a crash while the database is unreachable; :meth:`replay_journal` stores what is
    left there.
    """

    def __init__(
        self,
        store: Store,
        writer: MoveWriter,
        journal: EndJournal,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self._store = store
        self._writer = writer
        self._journal = journal
        self.on_tournament_end: Callable[[GameFinished], None] | None = None
        """Told each stored end of a tournament's game (the tournament director), after its
        commit; a game's end written twice is told twice (the director stores it once)."""
        self._wall = wall
        """The wall clock: a new game's creation and a correspondence move are stamped with it
        when the hub asks for them (the turn a restored correspondence game resumes is dated by
        these instants); tests inject theirs."""
        # game id -> speed (rating pool) of the running games this process knows
        self._speeds: dict[str, str] = {}
        # game id -> days per move in ms, of the running correspondence games with a deadline
        self._allowances: dict[str, int] = {}
        self._deadline_writes: set[asyncio.Task[None]] = set()
        self.offers_node: str | None = None
        """What this process writes in ``offers.node`` (``StoredOffers.holder``; ``None``: one
        process): a new game deletes the stored offers it answers only if they are still this
        process's (``create_game(offers_node=…)``), else it is refused (``offers_gone``)."""

    async def write(self, record: PersistRecord) -> Sequence[RatingChange]:
        try:
            if isinstance(record, GameCreated):
                await self._create(record)
            elif isinstance(record, MoveAppended):
                move = self._stamped(record)
                await self._writer.append(record.game_id, move)
                if move.played_at is not None:
                    self._postpone(record.game_id, move)
            elif isinstance(record, MovesRetracted):
                await self._store.retract_moves(record.game_id, record.from_ply)
            elif isinstance(record, BerserkMarked):
                await self._store.set_game_berserk(record.game_id, record.first, record.second)
            elif isinstance(record, PremovesSet):
                await self._store.set_premoves(record)
            elif isinstance(record, GameFinished):
                if not record.server_decided or record.termination in DECIDED_AGAIN_AT_RESTORE:
                    return await self._finish(record)
                await asyncio.to_thread(self._journal.keep, record.game_id, end_entry(record))
                changes = await self._finish(record)
                await asyncio.to_thread(self._journal.forget, record.game_id)
                return changes
        except (StoreError, ValueError, RuntimeError) as error:
            raise _persist_error(record, error) from None
        return ()

    def submit_move(self, record: MoveAppended, written: MoveStored) -> None:
        """Queue the move for the :class:`MoveWriter`'s next group commit, without a task;
        ``written`` is told from the writer's flusher, right after the commit."""

        move = self._stamped(record)

        def done(error: BaseException | None) -> None:
            if error is None:
                if move.played_at is not None:  # a correspondence move: its new deadline
                    self._postpone(record.game_id, move)
                written(None)
            elif isinstance(error, (StoreError, ValueError, RuntimeError)):
                written(_persist_error(record, error))
            else:
                written(PersistError("server error"))
                logger.error("writing a move failed", exc_info=error)

        try:
            self._writer.submit(record.game_id, move, done)
        except RuntimeError as error:  # the writer is closed: tell it on the next loop turn
            asyncio.get_running_loop().call_soon(written, _persist_error(record, error))

    def _stamped(self, record: MoveAppended) -> MoveRecord:
        """A correspondence move with the instant it was played (its turn's end, the next
        one's start); any other move as it is (the store stamps it when written)."""
        if self._speeds.get(record.game_id) != "correspondence":
            return record.move
        return replace(record.move, played_at=self._wall())

    def _postpone(self, game_id: str, move: MoveRecord) -> None:
        """Store the deadline of the turn a stored correspondence move began
        (``Store.postpone_deadline``), in a task of its own: the move is acknowledged without
        waiting for it. The column only tells the cold games' timer when to look: if this
        write is lost, the stored deadline is earlier than the true one, and loading the game
        then finds nothing due and stores the true one (``ColdGames``)."""
        allowance = self._allowances.get(game_id)
        if allowance is None or move.played_at is None:
            return
        deadline = int(move.played_at.timestamp() * 1000) + allowance
        task = asyncio.get_running_loop().create_task(self._write_deadline(game_id, deadline))
        self._deadline_writes.add(task)
        task.add_done_callback(self._deadline_writes.discard)

    async def _write_deadline(self, game_id: str, deadline_ms: int) -> None:
        try:
            await self._store.postpone_deadline(game_id, deadline_ms)
        except StoreError as error:
            logger.warning("deadline of game %s not stored: %s", game_id, error)

    async def settle(self) -> None:
        """Wait for the deadline writes in flight (at a graceful stop)."""
        if self._deadline_writes:
            await asyncio.wait(set(self._deadline_writes))

    async def _create(self, record: GameCreated) -> None:
        await self._store.create_game(
            game_id=record.game_id,
            variant=record.variant,
            start_fen=record.start_fen,
            time_control=record.control,
            first_name=record.first.name,
            second_name=record.second.name,
            first_player_id=None if record.first.guest else store_player_id(record.first.player_id),
            second_player_id=(
                None if record.second.guest else store_player_id(record.second.player_id)
            ),
            rated=record.rated,
            started=True,  # the hub creates a game when it starts: one commit
            tournament=(
                None
                if record.tournament is None
                else (record.tournament.id, record.tournament.round)
            ),
            created_at=self._wall(),
            consumed_offers=record.consumed_offers,
            offers_node=self.offers_node,
        )
        self._speeds[record.game_id] = speed_of(record.control)
        if isinstance(record.control, Correspondence):
            self._allowances[record.game_id] = record.control.per_move_ms

    def remember(self, game: GameRecord) -> None:
        """Know a game this process did not create (restored after a restart, or a cold
        correspondence game loaded)."""
        self._speeds[game.id] = game.speed
        if isinstance(game.time_control, Correspondence):
            self._allowances[game.id] = game.time_control.per_move_ms

    def forget(self, game_id: str) -> None:
        """A cold game's room was dropped from memory (loaded again with :meth:`remember`)."""
        self._speeds.pop(game_id, None)
        self._allowances.pop(game_id, None)

    async def keep_versions(self, versions: Mapping[str, int]) -> None:
        try:
            await self._store.save_room_versions(versions)
        except StoreError as error:
            logger.warning("room versions of %d games not kept: %s", len(versions), error)
        else:
            logger.info("kept the room versions of %d running games", len(versions))

    async def replay_journal(self) -> int:
        """Store the ends left in the journal by a process that died before the database had
        them (at start, before unfinished games are resumed); return how many were stored.

        An entry is dropped without effect when its game is already over, unknown, or has more
        moves than when the end was decided (another server ran it on meanwhile).

        :raises StoreUnavailableError: the database is unreachable.
        """
        stored = 0
        for game_id, entry in (await asyncio.to_thread(self._journal.entries)).items():
            try:
                record = end_from_entry(entry)
            except ValueError:
                logger.error("journal entry of game %s is not readable: %r", game_id, entry)
                continue
            game = await self._store.get_game(game_id)
            if game is not None and game.status in UNFINISHED_STATUSES:
                if len(game.moves) == record.plies:
                    await self._finish(record)
                    stored += 1
                else:
                    logger.warning("journal end of game %s is stale; dropped", game_id)
            await asyncio.to_thread(self._journal.forget, game_id)
        return stored

    async def _finish(self, record: GameFinished) -> list[RatingChange]:
        changes = await self._store_end(record)
        if record.tournament is not None:
            if any(record.berserk):
                await self._store.set_game_berserk(record.game_id, *record.berserk)
            if self.on_tournament_end is not None:
                self.on_tournament_end(record)
        return changes

    async def _store_end(self, record: GameFinished) -> list[RatingChange]:
        speed = self._speeds.get(record.game_id)
        try:
            if record.result is None:
                await self._store.abort_game(
                    record.game_id,
                    record.termination,
                    plies=record.plies,
                    final_fen=record.final_fen,
                )
                return []
            update = await self._store.finish_game(
                record.game_id,
                record.result,  # type: ignore[arg-type]  # checked by the store
                record.termination,
                plies=record.plies,
                final_fen=record.final_fen,
            )
        except GameStateError:
            return []  # already stored (a retry after a lost answer)
        finally:
            self._speeds.pop(record.game_id, None)
            self._allowances.pop(record.game_id, None)
        if update is None:
            return []
        if speed is None:
            stored = await self._store.get_game(record.game_id)
            if stored is None:
                return []
            speed = stored.speed
        pool = (record.variant, speed)
        return [
            (record.first_id, pool, update.first_after),
            (record.second_id, pool, update.second_after),
        ]


class StoreAccounts:
    """The store as the transport's :class:`~server.transport.accounts.AccountStore`."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def create_player(self, name: str, password_hash: str) -> Player:
        try:
            return await self._store.create_player(name, password_hash)
        except NameTakenError:
            raise NameTaken(name) from None
        except StoreUnavailableError as error:
            raise AccountsUnavailable(str(error)) from None

    async def player_by_name(self, name: str) -> Player | None:
        return await self._guard(self._store.player_by_name(name))

    async def create_session(self, player_id: int) -> str:
        token: str = await self._guard(self._store.create_session(player_id))
        return token

    async def session_player(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> Player | None:
        return await self._guard(self._store.session_player(token, max_idle=max_idle))

    async def resume_session(
        self, token: str, *, max_idle: timedelta | None = None
    ) -> tuple[Player, list[PlayerRating]] | None:
        return await self._guard(self._store.resume_session(token, max_idle=max_idle))

    async def delete_session(self, token: str) -> bool:
        deleted: bool = await self._guard(self._store.delete_session(token))
        return deleted

    async def delete_player_sessions(self, player_id: int) -> int:
        ended: int = await self._guard(self._store.delete_player_sessions(player_id))
        return ended

    async def set_password(self, player_id: int, password_hash: str, keep_session: str) -> int:
        ended: int = await self._guard(
            self._store.set_password(player_id, password_hash, keep_session)
        )
        return ended

    async def player_ratings(self, player_id: int) -> list[PlayerRating]:
        return await self._guard(self._store.player_ratings(player_id))

    @staticmethod
    async def _guard(call: Any) -> Any:
        try:
            return await call
        except StoreUnavailableError as error:
            raise AccountsUnavailable(str(error)) from None
