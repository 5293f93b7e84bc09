"""Stored correspondence seeks and challenges: kept in the store, given back after a restart,
and challenges made to offline players (docs/correspondence.md, "Seeks and challenges").

The hub keeps a registered player's correspondence seeks and challenges open while their
players are offline (``Seek.key`` / ``Challenge.key``) and says when one is made or gone
(``OfferStored`` / ``OfferDropped``). :class:`StoredOffers`

* **writes** those effects to the store in their order, one at a time in a task of its own,
  and reports each to the hub (``HubDriver.offer_written`` / ``offer_failed``), which answers
  the command that made or withdrew the offer only then (acknowledged means stored). A failed
  insert is reported (the hub drops the offer, the player gets ``offer_not_saved``); a delete
  is retried until it is done (an answered offer must not come back after a restart);
* **restores** every stored offer into the hub when the process starts
  (``Hub.restore_offer``: new ids, the parties' current ratings);
* **reads an offline target**: a registered player's correspondence ``match`` naming nobody
  online waits while the account of that name is read, then goes to ``Hub.match_offline``
  (the driver's :attr:`~server.transport.driver.HubDriver.offline_match`).

In a cluster (``node`` set) every row names the process whose hub holds it (``offers.node``:
the node id and a suffix of this start, :attr:`StoredOffers.holder`). :meth:`restore` at a
node's start claims the rows of its earlier lives and of the nodes not live, then opens them;
:meth:`on_look` (told the live nodes after each look of the cluster driver) claims the rows of a node that has gone, once the cluster has been healthy for a presence TTL
(as the driver drops a dead node's connections). A claim is one ``UPDATE … WHERE node =
<dead holder>`` (``Store.claim_offers``): each row goes to exactly one live process, which
opens it (``Hub.restore_offer``: listed in the seek registry like any seek of its hub). The
column fences the offer: a game answering it deletes its row only where the row still names
the process (``StoreRecorder.offers_node``), else the game is not stored and the hub forgets
the offer (``Hub.persist_failed(offers_gone=…)``), so a node taken for dead that still lists
an offer claimed by another cannot make a second game of it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from functools import partial

from server.hub.commands import MatchCommand
from server.hub.effects import ConnId, OfferDropped, OfferStored
from server.hub.errors import ErrorCode
from server.hub.identity import PlayerInfo, Rating, RatingKey
from server.hub.lobby import Challenge, GameTerms, Seek
from server.hub.messages import error_message
from server.rules.time_control import is_correspondence
from server.store import Store, StoredOffer, StoredOfferPlayer, UnknownPlayerError, node_of
from server.transport.accounts import registered_player_id, store_player_id
from server.transport.driver import HubDriver

__all__ = ["StoredOffers"]

logger = logging.getLogger(__name__)

DELETE_RETRY_MIN_S = 0.1
DELETE_RETRY_MAX_S = 2.0


class StoredOffers:
    """See the module docstring."""

    def __init__(
        self,
        store: Store,
        driver: HubDriver,
        *,
        node: str | None = None,
        healthy: Callable[[], bool] = lambda: True,
        alive: Callable[[str], Awaitable[bool]] | None = None,
    ) -> None:
        """:param node: this cluster node's id (``None``: one process).
        :param healthy: whether the cluster has been reachable long enough to call a node
            that is not live dead (see :meth:`on_look`).
        :param alive: whether a node is live, looking again if it was not (a cluster)."""
        self._store = store
        self._driver = driver
        self._node = node
        self.holder = None if node is None else f"{node}/{uuid.uuid4().hex[:12]}"
        """What this process writes in ``offers.node``: the node id and this start's own
        suffix, so that the rows of a node's earlier life are told from its present ones (a
        claim of the old ones can never take the new ones)."""
        self._healthy = healthy
        self._alive = alive
        self._suspects: set[str] = set()
        """Nodes seen gone whose offers are not claimed yet."""
        self._claiming = asyncio.Lock()
        self._writing: dict[str, int] = {}
        """Keys with a write queued or in flight (how many): not opened by a claim (the row
        may be one this hub holds, or one it has just answered)."""
        self._queue: asyncio.Queue[OfferStored | OfferDropped] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        driver.on_offer = self.on_offer
        driver.offline_match = self.intercept_match

    # --- writes -------------------------------------------------------------------------------

    def on_offer(self, effect: OfferStored | OfferDropped) -> None:
        """The hub made or dropped a stored offer: write it (in order, in a task)."""
        key = effect.key if isinstance(effect, OfferDropped) else effect.offer.key
        assert key is not None
        self._writing[key] = self._writing.get(key, 0) + 1
        self._queue.put_nowait(effect)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_all())

    async def _write_all(self) -> None:
        while not self._queue.empty():
            effect = self._queue.get_nowait()
            key = effect.key if isinstance(effect, OfferDropped) else effect.offer.key
            try:
                if isinstance(effect, OfferStored):
                    await self._insert(effect)
                else:
                    await self._delete(effect)
            finally:
                self._queue.task_done()
                if key is not None:
                    left = self._writing.get(key, 1) - 1
                    if left:
                        self._writing[key] = left
                    else:
                        self._writing.pop(key, None)

    async def _insert(self, effect: OfferStored) -> None:
        try:
            await self._store.add_offer(_stored(effect.offer, self.holder))
        except Exception as error:
            logger.warning("a stored seek or challenge was not written: %r", error)
            self._driver.offer_failed(effect.token, _reason(error))
            return
        self._driver.offer_written(effect.token)

    async def _delete(self, effect: OfferDropped) -> None:
        """Delete until done (idempotent): an answered offer must not come back at a restart."""
        delay = DELETE_RETRY_MIN_S
        while True:
            try:
                await self._store.delete_offer(effect.key)
            except Exception as error:
                if self._closing:
                    logger.error("stored offer %s not deleted at shutdown: %r", effect.key, error)
                    return
                logger.warning("deleting stored offer %s failed (%r); retrying", effect.key, error)
                await asyncio.sleep(delay)
                delay = min(DELETE_RETRY_MAX_S, delay * 2)
                continue
            break
        self._driver.offer_written(effect.token)

    async def settle(self) -> None:
        """Wait for the writes queued so far (before the store closes); a delete failing then
        is retried no more."""
        self._closing = True
        if self._writer is not None:
            await asyncio.shield(self._writer)
        for task in list(self._tasks):
            task.cancel()

    # --- restart ------------------------------------------------------------------------------

    async def restore(self) -> int:
        """Open the stored offers in the hub (at start-up): every row on one process; in a
        cluster this node's rows, after claiming those of the nodes not live. How many."""
        if self._node is None:
            # One process holds every row, as ``offers.node`` NULL (a game deletes only the
            # rows its process holds): it takes those a cluster left first.
            for holder in await self._store.offer_nodes():
                await self._store.claim_offers(holder, None)
            return await self._open_all(await self._store.stored_offers())
        return await self.claim(None)

    def on_look(self, before: set[str], live: set[str]) -> None:
        """The cluster driver looked at the live nodes: the offers of a node gone are claimed
        (by one live node), once the cluster has been healthy long enough."""
        self._suspects |= before - live
        self._suspects -= live
        if self._suspects and self._healthy():
            gone, self._suspects = set(self._suspects), set()
            task = asyncio.get_running_loop().create_task(self._claim_logged(gone))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _claim_logged(self, gone: set[str]) -> None:
        try:
            await self.claim(gone)
        except Exception as error:
            logger.warning("claiming the stored offers of %s failed: %r", sorted(gone), error)
            self._suspects |= gone  # the next look tries again

    async def claim(self, gone: set[str] | None = None) -> int:
        """Claim the rows of the ``gone`` nodes (``None``: of every node not live now, and of
        this node's earlier lives), then open the rows of this process the hub does not hold.

        The holders are read first, then each one's node is asked whether it is live (a fresh
        look), then each dead holder's rows are moved in one ``UPDATE … WHERE node = holder``:
        a node that restarted meanwhile writes a new holder, which was not read, and moves its
        old rows itself with the same statement, so each row changes hands once."""
        assert self._node is not None and self.holder is not None
        async with self._claiming:
            holders = await self._store.offer_nodes()
            for holder in sorted(holders - {self.holder}):
                node = node_of(holder)
                if node != self._node and (gone is not None and node not in gone):
                    continue
                if node != self._node and await self._is_alive(node):
                    continue
                taken = await self._store.claim_offers(holder, self.holder)
                if taken:
                    logger.info("took over %d stored offer(s) of %s", taken, holder)
            held = self._held_keys()
            rows = await self._store.stored_offers(self.holder)
            return await self._open_all(
                [row for row in rows if row.key not in held and row.key not in self._writing]
            )

    async def recheck(self) -> int:
        """This node's presence had lapsed: other nodes may have claimed its rows meanwhile.
        The offers whose rows are no longer this process's leave its hub
        (``Hub.forget_offer``; those with a write on its way stay); how many."""
        assert self.holder is not None
        async with self._claiming:
            mine = {row.key for row in await self._store.stored_offers(self.holder)}
            gone = sorted(
                key for key in self._held_keys() if key not in mine and key not in self._writing
            )
            for key in gone:
                self._driver.call(partial(self._driver.hub.forget_offer, key))
        if gone:
            logger.warning(
                "%d stored offer(s) were claimed by other nodes: dropped here", len(gone)
            )
        return len(gone)

    async def _is_alive(self, node: str) -> bool:
        return self._alive is not None and await self._alive(node)

    def _held_keys(self) -> set[str]:
        hub = self._driver.hub
        offers: list[Seek | Challenge] = [*hub.seeks(), *hub.state.challenges.all()]
        # Those answered by a game whose row is on its way: that write deletes them (or they
        # are open again if it fails).
        for answered in hub.state.consuming.values():
            offers += answered
        return {offer.key for offer in offers if offer.key is not None}

    async def _open_all(self, offers: list[StoredOffer]) -> int:
        known: dict[int, PlayerInfo] = {}
        restored = 0
        for stored in offers:
            try:
                offer = await self._offer(stored, known)
                self._open(offer)
                restored += 1
            except (ValueError, KeyError) as error:
                logger.error("stored offer %s cannot be restored: %s", stored.key, error)
        if restored:
            logger.info("restored %d stored seek(s) and challenge(s)", restored)
        return restored

    def _open(self, offer: Seek | Challenge) -> None:
        hub = self._driver.hub
        self._driver.call(lambda now: hub.restore_offer(offer, now))

    async def _offer(self, stored: StoredOffer, known: dict[int, PlayerInfo]) -> Seek | Challenge:
        terms = GameTerms(stored.variant, stored.control, stored.rated)
        player = await self._player(stored.player, known)
        if stored.target is None:
            return Seek(
                0, player, terms, stored.colour, stored.rating_range, stored.manual, 0, stored.key
            )
        target = await self._player(stored.target, known)
        return Challenge(0, player, target, terms, stored.colour, 0, None, stored.key)

    async def _player(self, party: StoredOfferPlayer, known: dict[int, PlayerInfo]) -> PlayerInfo:
        info = known.get(party.id)
        if info is None:
            info = known[party.id] = await self._info(party.id, party.name, party.bot)
        return info

    async def _info(self, store_id: int, name: str, bot: bool) -> PlayerInfo:
        ratings = await self._store.player_ratings(store_id)
        pools: dict[RatingKey, Rating] = {(r.variant, r.speed): r.rating for r in ratings}
        return PlayerInfo(registered_player_id(store_id), name, False, pools, bot=bot)

    # --- offline targets ----------------------------------------------------------------------

    def intercept_match(self, conn_id: ConnId, command: MatchCommand) -> bool:
        """Take a registered player's correspondence ``match`` naming nobody online (the
        target's account is read first); False leaves it to the hub."""
        state = self._driver.hub.state
        conn = state.conns.get(conn_id)
        if (
            conn is None
            or command.to.lower() in state.names
            or not is_correspondence(command.control)
            or state.players[conn.player_id].info.guest
        ):
            return False
        task = asyncio.get_running_loop().create_task(self._match(conn_id, command))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _match(self, conn_id: ConnId, command: MatchCommand) -> None:
        try:
            account = await self._store.player_by_name(command.to)
            target = (
                None if account is None else await self._info(account.id, account.name, account.bot)
            )
        except Exception as error:
            logger.warning("reading the player %r failed: %r", command.to, error)
            self._driver.send(conn_id, error_message(ErrorCode.UNAVAILABLE, ack=command.ack))
            return
        hub = self._driver.hub
        self._driver.call(lambda now: hub.match_offline(conn_id, command, target, now))


def _reason(error: Exception) -> str:
    """What a player is told of a failed write (short; the log has the rest)."""
    if isinstance(error, UnknownPlayerError):
        return "no such account"
    return "database error"


def _party(player: PlayerInfo) -> StoredOfferPlayer:
    store_id = store_player_id(player.id)
    if store_id is None:
        raise ValueError(f"{player.name} has no account")
    return StoredOfferPlayer(store_id, player.name, player.bot)


def _stored(offer: Seek | Challenge, node: str | None) -> StoredOffer:
    """The store's record of a stored seek or challenge."""
    assert offer.key is not None
    if isinstance(offer, Seek):
        owner, target, rating_range, manual = offer.player, None, offer.rating_range, offer.manual
    else:
        owner, target, rating_range, manual = offer.sender, _party(offer.target), None, False
    terms = offer.terms
    return StoredOffer(
        key=offer.key,
        player=_party(owner),
        target=target,
        variant=terms.variant,
        control=terms.control,
        rated=terms.rated,
        colour=offer.colour,
        rating_range=rating_range,
        manual=manual,
        node=node,
    )
