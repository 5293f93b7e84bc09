"""Stored correspondence seeks and challenges (table ``offers``; docs/correspondence.md,
"Seeks and challenges"): one row per open offer, written when a registered player makes a
correspondence seek or challenge, deleted when it is answered (with the game's row, in its
transaction: ``GameStore.create_game(consumed_offers=…, offers_node=…)``, which deletes only the
rows its process holds), cancelled or withdrawn, and read back whole when a hub starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import aliased

from server.rules.time_control import Correspondence, TimeControl, Unlimited
from server.store.correspondence_tables import offers
from server.store.errors import UnknownPlayerError
from server.store.records import utc_now
from server.store.schema import players
from server.store.transactions import Transactions, integrity_kind

__all__ = ["OfferStore", "StoredOffer", "StoredOfferPlayer", "node_of"]


@dataclass(frozen=True)
class StoredOfferPlayer:
    """A party of a stored offer: the account's id, name and whether it is a bot."""

    id: int
    name: str
    bot: bool


@dataclass(frozen=True)
class StoredOffer:
    """One stored seek (``target`` None) or challenge."""

    key: str
    player: StoredOfferPlayer
    """The seeker, or the challenger."""
    target: StoredOfferPlayer | None
    variant: str
    control: TimeControl
    """:class:`Correspondence` or :class:`Unlimited`."""
    rated: bool
    colour: Literal["first", "second", "random"]
    rating_range: tuple[int, int] | None
    manual: bool
    created_at: datetime | None = None
    """When it was stored (``None`` in what is given to :meth:`OfferStore.add_offer`)."""
    node: str | None = None
    """The cluster process whose hub holds it: its node id and a suffix of that start
    (:func:`node_of`; ``None``: one process)."""

    @property
    def kind(self) -> Literal["seek", "challenge"]:
        return "seek" if self.target is None else "challenge"


def node_of(holder: str) -> str:
    """The cluster node id of an ``offers.node`` value (``<node>/<suffix of one start>``)."""
    return holder.rsplit("/", 1)[0]


def _clock_columns(control: TimeControl) -> tuple[str, int]:
    if isinstance(control, Correspondence):
        return "correspondence", control.days_per_move
    if isinstance(control, Unlimited):
        return "unlimited", 0
    raise ValueError(f"only a correspondence offer is stored, not {control!r}")


class OfferStore(Transactions):
    """Stored seeks and challenges (see the module docstring)."""

    async def add_offer(self, offer: StoredOffer) -> None:
        """Store an offer (``created_at`` and the parties' names are not written: the row is
        dated now, the names are the accounts'). Storing a key again changes nothing.

        :raises UnknownPlayerError: a party has no account (any more).
        :raises ValueError: a real-time time control.
        """
        clock_kind, days = _clock_columns(offer.control)
        low, high = offer.rating_range or (None, None)
        try:
            async with self._transaction(write=True) as connection:
                await connection.execute(
                    insert(offers).values(
                        key=offer.key,
                        kind=offer.kind,
                        player_id=offer.player.id,
                        target_id=None if offer.target is None else offer.target.id,
                        variant=offer.variant,
                        clock_kind=clock_kind,
                        days=days,
                        rated=offer.rated,
                        colour=offer.colour,
                        range_low=low,
                        range_high=high,
                        manual=offer.manual,
                        created_at=utc_now(),
                        node=offer.node,
                    )
                )
        except IntegrityError as error:
            kind = integrity_kind(error)
            if kind == "unique":
                return
            if kind == "foreign_key":
                raise UnknownPlayerError(offer.player.id) from error
            raise

    async def delete_offer(self, key: str) -> bool:
        """Delete the offer ``key``; False if there was none."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(delete(offers).where(offers.c.key == key))
            return bool(result.rowcount)

    async def claim_offers(self, dead: str, node: str | None) -> int:
        """Give the offers held by ``dead`` (an ``offers.node`` value) to ``node`` (``None``:
        a single process, which holds every row); how many it got. One ``UPDATE … WHERE node =
        dead``: of several claiming at once, each row goes to exactly one (the others'
        statements no longer match it), and a game answering one of them on the node that
        held it is then refused (``create_game(offers_node=…)`` deletes only its own rows)."""
        async with self._transaction(write=True) as connection:
            result = await connection.execute(
                update(offers).where(offers.c.node == dead).values(node=node)
            )
            return int(result.rowcount or 0)

    async def offer_nodes(self, player_id: int | None = None) -> set[str]:
        """The ``offers.node`` values of the stored offers (of those involving ``player_id``
        when given)."""
        query = select(offers.c.node).distinct().where(offers.c.node.is_not(None))
        if player_id is not None:
            query = query.where(
                (offers.c.player_id == player_id) | (offers.c.target_id == player_id)
            )
        async with self._transaction(write=False) as connection:
            return {row[0] for row in (await connection.execute(query)).all()}

    async def stored_offers(self, node: str | None = None) -> list[StoredOffer]:
        """Every stored offer (``node``'s only, when given), the oldest first (one read, the
        parties' names joined)."""
        owner = aliased(players)
        target = aliased(players)
        query = (
            select(
                offers,
                owner.c.name.label("owner_name"),
                owner.c.bot.label("owner_bot"),
                target.c.name.label("target_name"),
                target.c.bot.label("target_bot"),
            )
            .join(owner, owner.c.id == offers.c.player_id)
            .outerjoin(target, target.c.id == offers.c.target_id)
            .order_by(offers.c.created_at, offers.c.key)
        )
        if node is not None:
            query = query.where(offers.c.node == node)
        async with self._transaction(write=False) as connection:
            rows = (await connection.execute(query)).all()
        found: list[StoredOffer] = []
        for row in rows:
            control: TimeControl = (
                Correspondence(row.days) if row.clock_kind == "correspondence" else Unlimited()
            )
            found.append(
                StoredOffer(
                    key=row.key,
                    player=StoredOfferPlayer(row.player_id, row.owner_name, bool(row.owner_bot)),
                    target=(
                        None
                        if row.target_id is None
                        else StoredOfferPlayer(row.target_id, row.target_name, bool(row.target_bot))
                    ),
                    variant=row.variant,
                    control=control,
                    rated=bool(row.rated),
                    colour=row.colour,
                    rating_range=(
                        None if row.range_low is None else (row.range_low, row.range_high)
                    ),
                    manual=bool(row.manual),
                    created_at=row.created_at,
                    node=row.node,
                )
            )
        return found
