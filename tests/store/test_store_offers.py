"""The ``offers`` table (SQLite and PostgreSQL): stored correspondence seeks and challenges
written, read back with their parties' names, written twice harmlessly, deleted."""

from __future__ import annotations

import pytest

from server.rules.time_control import Correspondence, Fischer, Unlimited
from server.store import Store, StoredOffer, StoredOfferPlayer, UnknownPlayerError


async def test_offers_round_trip(store: Store) -> None:
    alice = await store.create_player("alice", "hash")
    bob = await store.create_player("bob", "hash")
    a = StoredOfferPlayer(alice.id, "alice", False)
    b = StoredOfferPlayer(bob.id, "bob", False)
    seek = StoredOffer(
        "00000000000000a1",
        a,
        None,
        "minishogi",
        Correspondence(3),
        True,
        "random",
        (1400, 1600),
        False,
    )
    challenge = StoredOffer(
        "00000000000000b2", b, a, "shoshogi", Unlimited(), False, "first", None, True
    )
    assert await store.stored_offers() == []
    await store.add_offer(seek)
    await store.add_offer(challenge)
    await store.add_offer(seek)  # the same key again: nothing changes
    got = await store.stored_offers()
    assert [o.key for o in got] == [seek.key, challenge.key]
    assert got[0].player == a and got[0].target is None and got[0].kind == "seek"
    assert (got[0].control, got[0].rated, got[0].rating_range) == (
        Correspondence(3),
        True,
        (1400, 1600),
    )
    assert got[1].player == b and got[1].target == a and got[1].kind == "challenge"
    assert (got[1].control, got[1].colour, got[1].manual) == (Unlimited(), "first", True)
    assert await store.delete_offer(seek.key) is True
    assert await store.delete_offer(seek.key) is False
    assert [o.key for o in await store.stored_offers()] == [challenge.key]
    with pytest.raises(ValueError, match="only a correspondence offer"):
        await store.add_offer(
            StoredOffer("c3", a, None, "shoshogi", Fischer(60_000, 0), False, "random", None, False)
        )
    with pytest.raises(UnknownPlayerError):
        ghost = StoredOfferPlayer(999_999, "ghost", False)
        await store.add_offer(
            StoredOffer("d4", ghost, None, "shoshogi", Unlimited(), False, "random", None, False)
        )
