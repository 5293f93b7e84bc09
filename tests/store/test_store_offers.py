"""The ``offers`` table (SQLite and PostgreSQL): stored correspondence seeks and challenges
written, read back with their parties' names, written twice harmlessly, deleted."""

from __future__ import annotations

import pytest

from server.rules.time_control import Correspondence, Fischer, Unlimited
from server.store import (
    GameStateError,
    OfferNotHeldError,
    Store,
    StoredOffer,
    StoredOfferPlayer,
    UnknownPlayerError,
)

START_FEN = "rbsgk/4p/5/P4/KGSBR[-] w 0 1"
DAYS = Correspondence(3)


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


async def test_a_game_deletes_the_offers_it_answers_in_its_transaction(store: Store) -> None:
    """``create_game(consumed_offers=…)``: the offers' rows go in the game row's transaction;
    a game that is not written leaves them (on PostgreSQL too, where a game's row is otherwise
    written outside SQLAlchemy)."""
    alice = await store.create_player("alice", "hash")
    bob = await store.create_player("bob", "hash")
    a = StoredOfferPlayer(alice.id, "alice", False)
    b = StoredOfferPlayer(bob.id, "bob", False)
    seek = StoredOffer("00000000000000a1", a, None, "minishogi", DAYS, False, "random", None, True)
    challenge = StoredOffer(
        "00000000000000b2", b, a, "minishogi", DAYS, False, "first", None, False
    )
    other = StoredOffer("00000000000000c3", b, None, "shoshogi", DAYS, False, "random", None, False)
    for offer in (seek, challenge, other):
        await store.add_offer(offer)

    async def create(game_id: str, second_id: int) -> str:
        return await store.create_game(
            game_id=game_id,
            variant="minishogi",
            start_fen=START_FEN,
            time_control=DAYS,
            first_name="alice",
            second_name="bob",
            first_player_id=alice.id,
            second_player_id=second_id,
            started=True,
            consumed_offers=(seek.key, challenge.key),
        )

    await store.create_game(
        game_id="taken123",
        variant="minishogi",
        start_fen=START_FEN,
        time_control=DAYS,
        first_name="alice",
        second_name="bob",
    )
    # Refused (the id is used; a player with no account): the offers stay.
    with pytest.raises(GameStateError):
        await create("taken123", bob.id)
    with pytest.raises(UnknownPlayerError):
        await create("fresh123", 999_999)
    assert [o.key for o in await store.stored_offers()] == [seek.key, challenge.key, other.key]
    assert await create("fresh123", bob.id) == "fresh123"
    assert [o.key for o in await store.stored_offers()] == [other.key]
    game = await store.get_game("fresh123")
    assert game is not None and game.status == "started"


async def test_a_game_answers_only_the_offers_its_node_holds(store: Store) -> None:
    """``create_game(offers_node=…)`` deletes only the rows its process holds: an offer
    another node claimed (``offers.node``), or one already deleted, refuses the game
    (``OfferNotHeldError``, naming them): neither the game nor any delete is stored, the rows
    stay as they were. A single process (``offers_node=None``) holds the rows whose node is
    NULL."""
    alice = await store.create_player("alice", "hash")
    bob = await store.create_player("bob", "hash")
    a = StoredOfferPlayer(alice.id, "alice", False)

    def seek(key: str, node: str | None) -> StoredOffer:
        return StoredOffer(key, a, None, "minishogi", DAYS, False, "random", None, False, node=node)

    claimed = seek("00000000000000b2", "node-a/1")
    await store.add_offer(claimed)
    assert await store.claim_offers("node-a/1", "node-b/2") == 1  # node-a taken for dead
    mine = seek("00000000000000a1", "node-a/1")
    single = seek("00000000000000c3", None)
    await store.add_offer(mine)
    await store.add_offer(single)

    async def rows() -> list[tuple[str, str | None]]:
        return sorted((o.key, o.node) for o in await store.stored_offers())

    before = await rows()

    async def create(game_id: str, keys: tuple[str, ...], node: str | None) -> str:
        return await store.create_game(
            game_id=game_id,
            variant="minishogi",
            start_fen=START_FEN,
            time_control=DAYS,
            first_name="alice",
            second_name="bob",
            first_player_id=alice.id,
            second_player_id=bob.id,
            started=True,
            consumed_offers=keys,
            offers_node=node,
        )

    refusals: list[tuple[tuple[str, ...], str | None, tuple[str, ...]]] = [
        ((mine.key, claimed.key), "node-a/1", (claimed.key,)),  # claimed by node-b
        ((claimed.key,), "node-a/1", (claimed.key,)),
        ((single.key,), "node-a/1", (single.key,)),  # a single process's row
        ((mine.key,), None, (mine.key,)),  # a single process answering a node's row
        (("00000000000000d4", mine.key), "node-a/1", ("00000000000000d4",)),  # deleted
    ]
    for n, (keys, node, gone) in enumerate(refusals):
        with pytest.raises(OfferNotHeldError) as refused:
            await create(f"refused{n}", keys, node)
        assert refused.value.keys == gone
        assert await store.get_game(f"refused{n}") is None
        assert await rows() == before
    # Each holder answers its own.
    assert await create("fresh001", (mine.key,), "node-a/1") == "fresh001"
    assert await create("fresh002", (claimed.key,), "node-b/2") == "fresh002"
    assert await create("fresh003", (single.key,), None) == "fresh003"
    assert await rows() == []
    # An offer answered once cannot be answered again (two games of one seek).
    with pytest.raises(OfferNotHeldError):
        await create("fresh004", (mine.key,), "node-a/1")
    assert await store.get_game("fresh004") is None
