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

One process only: a cluster's hubs keep these offers in memory while their players are
offline, but neither store nor restore them ("What remains").
"""

from __future__ import annotations

import asyncio
import logging

from server.hub.commands import MatchCommand
from server.hub.effects import ConnId, OfferDropped, OfferStored
from server.hub.errors import ErrorCode
from server.hub.identity import PlayerInfo, Rating, RatingKey
from server.hub.lobby import Challenge, GameTerms, Seek
from server.hub.messages import error_message
from server.rules.time_control import is_correspondence
from server.store import Store, StoredOffer, StoredOfferPlayer, UnknownPlayerError
from server.transport.accounts import registered_player_id, store_player_id
from server.transport.driver import HubDriver

__all__ = ["StoredOffers"]

logger = logging.getLogger(__name__)

DELETE_RETRY_MIN_S = 0.1
DELETE_RETRY_MAX_S = 2.0


class StoredOffers:
    """See the module docstring."""

    def __init__(self, store: Store, driver: HubDriver) -> None:
        self._store = store
        self._driver = driver
        self._queue: asyncio.Queue[OfferStored | OfferDropped] = asyncio.Queue()
        self._writer: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._closing = False
        driver.on_offer = self.on_offer
        driver.offline_match = self.intercept_match

    # --- writes -------------------------------------------------------------------------------

    def on_offer(self, effect: OfferStored | OfferDropped) -> None:
        """The hub made or dropped a stored offer: write it (in order, in a task)."""
        self._queue.put_nowait(effect)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_all())

    async def _write_all(self) -> None:
        while not self._queue.empty():
            effect = self._queue.get_nowait()
            try:
                if isinstance(effect, OfferStored):
                    await self._insert(effect)
                else:
                    await self._delete(effect)
            finally:
                self._queue.task_done()

    async def _insert(self, effect: OfferStored) -> None:
        try:
            await self._store.add_offer(_stored(effect.offer))
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
        """Open every stored offer in the hub (at start-up); how many."""
        offers = await self._store.stored_offers()
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


def _stored(offer: Seek | Challenge) -> StoredOffer:
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
    )
