"""Which node runs each game: leases, takeover of orphaned games, fencing.

* A game is owned by the node whose hub created it: :class:`FencedRecorder` takes the lease
  before the game row is written, so no other node can ever see the row without an owner.
* :meth:`Ownership.renew_forever` renews the leases every ``lease_ttl_ms / 3``; a lease found
  free again (Redis restarted) is re-acquired; a lease held by another node means this node lost
  the game (it was taken over while this node could not renew): the game is *fenced* — never
  routed here again, its writes refused, its messages dropped. A finished game's lease is
  released when the hub evicts the room.
* :meth:`Ownership.sweep_forever` takes over unfinished stored games whose lease is free (their
  owner died): exactly one node wins the lease and resumes the game with ``Hub.restore_game``.
  A command for a game with no owner triggers the same takeover (:meth:`owner_of`). Either
  way the lease must have been seen free for a renewal period first: a live owner whose lease
  lapsed (a renewal late under load) takes it back in that time, and keeps its game.
* A correspondence game between two registered players has no owner while nobody uses it:
  the sweep does not list it, and a command naming it (or its stored deadline falling due)
  takes its free lease at once, reads the game again under the lease and loads the room; a
  cold one (:func:`~server.cluster.restore.kept_cold`: no bot in it) quietly (no
  ``game_start``), and its node drops the room when idle and gives the lease up
  (docs/correspondence.md "Memory"). A bot's is kept, as on one process.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from server.bus import BusError, GameLeases
from server.cluster.envelopes import moved_header, pack
from server.cluster.host import NODES_CHANNEL
from server.cluster.restore import Resumable, kept_cold, resumable_game
from server.hub.effects import GameCreated, GameFinished, GameId, MoveAppended, PersistRecord
from server.hub.hub import Hub
from server.hub.identity import PlayerId
from server.rules.game import Termination
from server.rules.record import UNFINISHED_STATUSES
from server.rules.time_control import is_correspondence
from server.store import GameRecord, Store, StoreError, StoreUnavailableError
from server.transport.accounts import store_player_id
from server.transport.driver_ports import MoveStored, PersistError, RatingChange, Recorder

__all__ = ["ORPHANED", "FencedRecorder", "Owner", "Ownership", "Takeover"]

logger = logging.getLogger(__name__)

ORPHANED = ""
"""What :meth:`Ownership.owner_of` returns for a game whose takeover is under way."""

Takeover = Literal["taken", "pending", "none"]
SWEEP_TAKEOVERS = 8
"""Takeovers a sweep runs at once."""
PLAYER_GAMES = 4
"""How many of a player's newest unfinished stored games :meth:`Ownership.unfinished_game_of`
looks at (one, unless a takeover is pending)."""


@dataclass(frozen=True)
class _Listing:
    """The sweep's last listing of the unfinished stored games."""

    started: float
    """When its first query was sent (``Ownership``'s clock)."""
    games_of: dict[int, list[GameId]]
    """Store player id -> the player's unfinished games."""


class Owner(Protocol):
    """What :class:`Ownership` needs of its node (:class:`server.cluster.node.ClusterDriver`)."""

    node_id: str
    hub: Hub
    remember: Callable[[GameRecord], None] | None
    """Told of each stored game taken over, before it resumes."""

    @property
    def degraded(self) -> bool: ...

    def is_live(self, node_id: str) -> bool: ...

    def healthy_for(self, seconds: float) -> bool: ...

    def clock(self) -> int: ...

    def restore(self, game: Resumable, *, announce: bool = True) -> None: ...

    def publish(self, channel: str, data: bytes) -> None: ...

    def rejoin(self, game_id: GameId, player_ids: Iterable[Any]) -> None: ...

    def mark_presence(self, reannounce: bool = False) -> None: ...

    def spawn(self, coroutine: Awaitable[Any], name: str = "cluster") -> None:
        """Run a background coroutine (cancelled when the node closes); its failure logged."""


class Ownership:
    """The games this node runs and the owners of the others (see the module docstring)."""

    def __init__(
        self,
        node: Owner,
        leases: GameLeases,
        store: Store,
        ttl_ms: int,
        clock: Callable[[], float] = time.monotonic,
        listing_fresh_s: float = 0.0,
    ):
        """``clock``: seconds from a monotonic source, for the renewal period and how long a
        lease has been seen free (a test injects a fake one; the leases' own expiry is the
        cluster state's, :class:`~server.bus.InProcessClusterState` takes a clock too).

        ``listing_fresh_s``: how long the sweep's listing of the unfinished games answers
        :meth:`unfinished_game_of` instead of a store query (0: never; a node gives half its
        presence TTL, see there)."""
        self._node = node
        self._clock = clock
        self._leases = leases
        self._store = store
        self.ttl_ms = ttl_ms
        self.owned: set[GameId] = set()
        self.lost: set[GameId] = set()
        self._owners: dict[GameId, str] = {}
        self._taking: dict[GameId, asyncio.Future[Takeover]] = {}
        self._free_since: dict[GameId, float] = {}
        self.taken_over = 0
        self.listings = 0
        """How many listings of the unfinished games :meth:`sweep` made."""
        self.loaded_cold = 0
        """Cold correspondence games loaded here under their lease (``/healthz``)."""
        self.abandoned = 0
        """Games aborted because no hub could resume them (see :meth:`_give_up`)."""
        self.listing_fresh_s = listing_fresh_s
        self._listing: _Listing | None = None
        self._sweeping: set[GameId] = set()
        """Games a sweep is taking over in the background."""
        self._sweep_slots = asyncio.Semaphore(SWEEP_TAKEOVERS)
        self.lookups = {"listing": 0, "store": 0}
        """How :meth:`unfinished_game_of` answered (``/healthz``)."""

    @property
    def node_id(self) -> str:
        return self._node.node_id

    # --- lookups ------------------------------------------------------------------------------

    def runs(self, game_id: GameId) -> bool:
        """Whether this node's hub runs ``game_id`` (and has not lost it)."""
        return self._node.hub.room(game_id) is not None and game_id not in self.lost

    def cached_owner(self, game_id: GameId) -> str | None:
        """The other node last known to run ``game_id`` (never this one: see :meth:`runs`)."""
        return self._owners.get(game_id)

    def set_cached_owner(self, game_id: GameId, node_id: str) -> None:
        """Remember ``node_id`` as the game's owner; this node itself is never cached.

        This node runs a game when its hub has the room (:meth:`runs`), not when the lease
        names it: a takeover here holds the lease while it loads the game, before the room
        exists, and a command routed here then would be answered ``no_such_game``.
        """
        if node_id == self.node_id:
            self._owners.pop(game_id, None)
        else:
            self._owners[game_id] = node_id

    def forget(self, game_id: GameId) -> None:
        self._owners.pop(game_id, None)

    def forget_node(self, node_id: str) -> None:
        for game_id in [g for g, n in self._owners.items() if n == node_id]:
            del self._owners[game_id]

    async def owner_of(self, game_id: GameId, *, take_over: bool) -> str | None:
        """The node running ``game_id``; None if there is no such game or it is over;
        :data:`ORPHANED` for a stored unfinished game that has no owner at the moment (its node
        died and the takeover is under way: retry shortly).

        With ``take_over``, such a game is taken over by this node when it has been orphaned
        long enough.

        :raises BusError: Redis is unreachable.
        """
        if self.runs(game_id):
            return self.node_id
        if game_id in self._taking:
            # This node holds the lease and is loading the game: until its room exists here,
            # a command routed to it would find no game (no_such_game); retry shortly instead.
            return ORPHANED
        cached = self._owners.get(game_id)
        if cached is not None and self._node.is_live(cached):
            return cached
        owner = await self._leases.owner(game_id)
        if owner == self.node_id:
            # The lease names this node but its hub had no room: a takeover here acquired
            # the lease while this lookup waited, and loads the game; or the room was evicted
            # at its end (the lease goes at the next renewal); or a takeover here failed.
            if self.runs(game_id):
                return self.node_id
            if game_id in self._taking:
                return ORPHANED
            owner = None  # the store tells below: over (None) or unfinished (taken over)
        if owner is None and take_over:
            if not self._node.healthy_for(self.ttl_ms / 1000):
                return ORPHANED  # right after an outage owners re-acquire their leases first
            outcome = await self.take_over(game_id)
            if outcome == "pending":
                return ORPHANED
            owner = self.node_id if outcome == "taken" else None
        if owner is not None:
            self.set_cached_owner(game_id, owner)
        return owner

    # --- creation and fencing -----------------------------------------------------------------

    async def claim_new(self, game_id: GameId) -> bool:
        """Take the lease of a game this hub is creating; False if another node holds it.

        While Redis is down (the bus is degraded) the game is created anyway (only local
        players can be in it) and its lease is taken when Redis is back.

        :raises BusError: Redis failed although the bus is up.
        """
        try:
            if not await self._leases.acquire(game_id, self.node_id, self.ttl_ms):
                return False
        except BusError:
            if not self._node.degraded:
                raise  # a passing failure: better no game than a game without an owner
            logger.info("creating game %s without a lease: Redis is unreachable", game_id)
        self.owned.add(game_id)
        return True

    # --- renewal ------------------------------------------------------------------------------

    async def renew_forever(self) -> None:
        """Renew every ``lease_ttl_ms / 3`` (counted from the start of the previous round)."""
        period = self.ttl_ms / 3000
        while True:
            started = self._clock()
            if not self._node.degraded:
                try:
                    await self.renew_all()
                except BusError as error:
                    logger.info("lease renewal: cluster unavailable (%s)", error)
            elapsed = self._clock() - started
            if elapsed > period:
                logger.warning("renewing %d leases took %.1f s", len(self.owned), elapsed)
            await asyncio.sleep(max(0.0, period - elapsed))

    async def renew_all(self) -> None:
        """Renew every lease in one batch (:meth:`GameLeases.hold_many`: a lease found free
        again is re-acquired); release those of evicted rooms; fence the games lost.

        :raises BusError: Redis is unreachable (the leases renewed so far stay renewed).
        """
        hub = self._node.hub
        evicted = sorted(game_id for game_id in self.owned if hub.room(game_id) is None)
        for game_id in evicted:
            self.owned.discard(game_id)
            self._owners.pop(game_id, None)
        await self._leases.release_many(evicted, self.node_id)
        lost = await self._leases.hold_many(sorted(self.owned), self.node_id, self.ttl_ms)
        for game_id in sorted(lost):
            logger.warning("game %s is now owned by another node: fencing it here", game_id)
            self.owned.discard(game_id)
            self._owners.pop(game_id, None)
            self.lost.add(game_id)

    async def release_dropped(self, game_id: GameId) -> None:
        """Give up the lease of a room the hub dropped (a cold correspondence game left idle):
        the next command or deadline on any node takes it again.

        :raises BusError: Redis is unreachable (the next renewal releases it then).
        """
        if (
            self._node.hub.room(game_id) is not None
            or game_id in self._taking
            or game_id not in self.owned
        ):
            return  # loaded again meanwhile (or being loaded), or not this node's
        self.owned.discard(game_id)
        self._owners.pop(game_id, None)
        await self._leases.release(game_id, self.node_id)

    async def release_all(self) -> None:
        """Give up every lease (graceful shutdown: other nodes take the games over)."""
        await self._leases.release_many(sorted(self.owned), self.node_id)
        self.owned.clear()

    # --- takeover -----------------------------------------------------------------------------

    async def sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000 * random.uniform(0.5, 1.0))
            # Right after an outage, owners re-acquire their leases first.
            if not self._node.healthy_for(self.ttl_ms / 1000):
                continue
            try:
                await self.sweep(wait=False)
            except BusError as error:
                logger.info("takeover sweep: cluster unavailable (%s)", error)
            except StoreError as error:
                logger.warning("takeover sweep: store unavailable (%s)", error)

    async def _unfinished_ids(self) -> list[GameId]:
        """Every unfinished stored game; the listing is kept for :meth:`unfinished_game_of`.

        One light query (ids and players only, ``Store.unfinished_games``): through the
        store's paged listing, 500 whole rows with their moves counted held a survivor's loop
        13–25 ms at a time during a reconnect storm (docs/benchmarks.md, "The survivor's long
        turns taken apart").
        """
        started = self._clock()
        found: list[GameId] = []
        games_of: dict[int, list[GameId]] = {}
        for game_id, first, second, correspondence in await self._store.unfinished_games():
            found.append(game_id)
            if correspondence:
                continue  # taken over like any game, but not its players' real-time game
            if first is not None:
                games_of.setdefault(first, []).append(game_id)
            if second is not None and second != first:
                games_of.setdefault(second, []).append(game_id)
        self._listing = _Listing(started, games_of)
        self.listings += 1
        return found

    async def sweep(self, wait: bool = True) -> int:
        """Take over every unfinished stored game without an owner; return how many.

        ``wait=False`` (the sweeps of :meth:`sweep_forever`): the takeovers go on in the
        background, at most :data:`SWEEP_TAKEOVERS` at once across sweeps, and 0 is returned:
        the next listing, which :meth:`unfinished_game_of` asks, is not held up by them.
        """
        taken = 0
        hub = self._node.hub
        others = [
            game_id
            for game_id in await self._unfinished_ids()
            if hub.room(game_id) is None and game_id not in self.lost
        ]
        # One round trip for all the owners; a takeover looks its lease up again.
        due: list[GameId] = []
        for game_id, owner in zip(others, await self._leases.owners(others), strict=True):
            if owner is not None:
                # This node, while a takeover of its own loads the game: not cached.
                self.set_cached_owner(game_id, owner)
                self._free_since.pop(game_id, None)
            elif self._orphaned_long_enough(game_id):
                due.append(game_id)
            # else first seen free: a later sweep takes it (the listing said it is a game)
        if not wait:
            for game_id in due:
                if game_id not in self._sweeping:
                    self._sweeping.add(game_id)
                    self._node.spawn(self._take_over_later(game_id), "takeover")
            return 0

        async def take(game_id: GameId) -> bool:
            async with self._sweep_slots:
                return await self.take_over(game_id) == "taken"

        results = await asyncio.gather(*(take(g) for g in due), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
            taken += result
        return taken

    async def _take_over_later(self, game_id: GameId) -> None:
        try:
            async with self._sweep_slots:
                await self.take_over(game_id)
        except StoreError as error:
            logger.warning("takeover of game %s: store unavailable (%s)", game_id, error)
        finally:
            self._sweeping.discard(game_id)

    async def take_over(self, game_id: GameId) -> Takeover:
        """Acquire a free lease and resume the stored game here.

        :returns: ``"taken"`` (this node runs it now), ``"pending"`` (an unfinished game whose
            lease was not free long enough, or that another node took just now) or ``"none"``
            (no unfinished game of that id).
        """
        running = self._taking.get(game_id)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[Takeover] = asyncio.get_running_loop().create_future()
        self._taking[game_id] = future
        try:
            result = await self._take_over(game_id)
        except BaseException:
            future.set_result("pending")
            raise
        finally:
            del self._taking[game_id]
        future.set_result(result)
        return result

    def _orphaned_long_enough(self, game_id: GameId) -> bool:
        """Whether the game's lease has been seen free for a renewal period: a live owner whose
        lease lapsed (a late renewal under load) takes it back within that time."""
        now = self._clock()
        first_seen = self._free_since.setdefault(game_id, now)
        if now - first_seen > 4 * self.ttl_ms / 1000:  # an old sighting: start again
            self._free_since[game_id] = first_seen = now
        return now - first_seen >= self.ttl_ms / 3000

    async def _take_over(self, game_id: GameId) -> Takeover:
        if self.runs(game_id):
            return "taken"
        try:
            stored = await self._store.get_game(game_id)
        except StoreError:
            return "pending"
        except ValueError:
            return "none"  # not a game id
        if stored is None or stored.status not in UNFINISHED_STATUSES:
            return "none"
        # A correspondence game between registered players is not swept: its lease is free
        # by design while nobody uses it, no owner to wait for. A cold one (no bot in it) is
        # loaded quietly.
        unswept = is_correspondence(stored.time_control) and None not in (
            stored.first_player_id,
            stored.second_player_id,
        )
        cold = kept_cold(stored)
        if not unswept and not self._orphaned_long_enough(game_id):
            return "pending"
        if not await self._leases.acquire(game_id, self.node_id, self.ttl_ms):
            return "pending"
        self._free_since.pop(game_id, None)
        node = self._node
        try:
            if unswept:
                # Read again under the lease: the node that held it until just now may have
                # stored moves (or the end) after the first read.
                stored = await self._store.get_game(game_id)
                if stored is None or stored.status not in UNFINISHED_STATUSES:
                    await self._leases.release(game_id, self.node_id)
                    return "none"
            resumable = await resumable_game(self._store, stored)
        except StoreError as error:  # passing: the game waits for the next try
            logger.warning("takeover of game %s: store unavailable (%s)", game_id, error)
            await self._leases.release(game_id, self.node_id)
            return "pending"
        try:
            if node.remember is not None:
                node.remember(stored)
            node.restore(resumable, announce=not cold)
        except ValueError as error:
            return await self._give_up(game_id, str(error))
        self.owned.add(game_id)
        self.lost.discard(game_id)
        self._owners.pop(game_id, None)
        if cold:
            self.loaded_cold += 1
            logger.info("loaded cold game %s (%d moves stored)", game_id, len(stored.moves))
        else:
            self.taken_over += 1
            logger.warning("took over game %s (%d moves stored)", game_id, len(stored.moves))
        # The other nodes cache the new owner, and their connections following the game join
        # it here; a cold game's players are not made to join (as on one process, whoever
        # wants its events joins): joined, their connections would keep it in memory.
        players = [] if cold else [player.id for player in resumable.players]
        node.publish(NODES_CHANNEL, pack(moved_header(game_id, players), self.node_id))
        node.rejoin(game_id, ())  # this node's own followers of the game
        node.mark_presence()
        return "taken"

    async def _give_up(self, game_id: GameId, why: str) -> Takeover:
        """End a stored game that no hub can resume (a stored move the rules refuse, a player
        already playing another game here …): aborted, without a result, rather than retried
        for ever while its players wait in a game nobody hosts.

        The lease is held meanwhile, so no other node tries the same; if the store cannot
        write the abort now, the game stays unfinished and the next sweep tries again.
        """
        try:
            await self._store.abort_game(game_id, Termination.ABORT)
        except StoreUnavailableError as error:
            logger.warning("cannot abort game %s now (%s); retrying later", game_id, error)
            await self._leases.release(game_id, self.node_id)
            return "pending"
        except StoreError:
            pass  # finished meanwhile (GameStateError): nothing left to do
        else:
            logger.error("cannot take over game %s (%s): aborted it", game_id, why)
        await self._leases.release(game_id, self.node_id)
        self._owners.pop(game_id, None)
        self.abandoned += 1
        return "none"

    # --- players ------------------------------------------------------------------------------

    async def unfinished_game_of(
        self, player_id: PlayerId, ended: Container[GameId] = ()
    ) -> GameId | None:
        """A stored unfinished game of the registered player ``player_id`` that runs on
        another node, or whose owner died and whose takeover is pending (``None`` if none).

        Presence no longer names the games of a dead node; the store still does. A player
        who comes back (or seeks) before such a game is taken over must rejoin it, not start
        another: the takeover of a game whose player plays another one here is refused.

        The store is asked only when the sweep's last listing of the unfinished games (every
        ``lease_ttl_ms / 3`` or so) began more than ``listing_fresh_s`` ago: a login costs no
        store query while the sweeps run. A game missing from a fresh listing was created
        after it began, by a node then live, whose heartbeat (at least every third of the
        presence TTL) therefore lapses no sooner than two thirds of that TTL after the
        listing began: with ``listing_fresh_s`` half the TTL, presence still names such a game
        (as for any game of a live node) when the listing does not.

        ``ended``: games the caller has seen end (their ``end`` delivered to a player here):
        the listing may have been made before they ended, and the owner holds their lease
        until it evicts the room.

        :raises BusError: Redis is unreachable.
        :raises StoreError: the store is unreachable.
        """
        store_id = store_player_id(player_id)
        if store_id is None:
            return None  # a guest's games are not stored under its hub id
        listing = self._listing
        if listing is not None and self._clock() - listing.started < self.listing_fresh_s:
            candidates = listing.games_of.get(store_id, [])
            self.lookups["listing"] += 1
        else:
            self.lookups["store"] += 1
            candidates = await self._store.unfinished_games_of(store_id, PLAYER_GAMES)
        for game_id in candidates:
            if self._node.hub.room(game_id) is not None or game_id in self.lost:
                continue
            if game_id in ended:
                continue
            if await self.owner_of(game_id, take_over=True) is not None:
                return game_id
        return None


class FencedRecorder:
    """The node's :class:`~server.transport.driver_ports.Recorder`: takes a new game's lease
    before its row is written, and refuses the writes of games this node lost to another
    owner."""

    def __init__(self, inner: Recorder, ownership: Ownership) -> None:
        self._inner = inner
        self._ownership = ownership

    async def write(self, record: PersistRecord) -> Sequence[RatingChange]:
        game_id = record.game_id
        if isinstance(record, GameCreated):
            try:
                claimed = await self._ownership.claim_new(game_id)
            except BusError:
                raise PersistError("the cluster state is unreachable") from None
            if not claimed:
                raise PersistError("this game id is in use on another server")
        elif game_id in self._ownership.lost:
            if isinstance(record, GameFinished):
                return ()  # the new owner decides how the game ends
            raise PersistError("this game is now run by another server")
        return await self._inner.write(record)

    def submit_move(self, record: MoveAppended, written: MoveStored) -> None:
        if record.game_id in self._ownership.lost:
            refused = PersistError("this game is now run by another server")
            asyncio.get_running_loop().call_soon(written, refused)
            return
        self._inner.submit_move(record, written)

    async def keep_versions(self, versions: Mapping[str, int]) -> None:
        lost = self._ownership.lost
        await self._inner.keep_versions({g: v for g, v in versions.items() if g not in lost})
