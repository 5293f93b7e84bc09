"""Stored correspondence seeks and challenges in the sans-I/O hub: a registered player's stay
open while the player is offline (a guest's and the real-time ones do not), are written and
deleted through ``OfferStored``/``OfferDropped``, start games with their owner away, survive a
real-time game's start, come back through ``restore_offer`` with new ids; ``match_offline``."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hub_harness import FISCHER_TC, Harness, one, player

from server.hub.commands import MatchCommand, parse_command
from server.hub.effects import (
    Effect,
    GameCreated,
    GamesWanted,
    OfferDropped,
    OfferStored,
    Persist,
)
from server.hub.hub_state import HubConfig
from server.hub.lobby import Challenge, Seek

DAY = {"kind": "correspondence", "days": 1}


def match(tc: dict[str, object], ack: str) -> MatchCommand:
    command = parse_command(
        {"t": "match", "a": ack, "d": {"to": "ghost", "variant": "minishogi", "tc": tc}}
    )
    assert isinstance(command, MatchCommand)
    return command


def stored_effects(effects: list[Effect]) -> list[OfferStored | OfferDropped]:
    return [e for e in effects if isinstance(e, OfferStored | OfferDropped)]


def consumed_keys(effects: list[Effect]) -> list[str]:
    """The stored offers the games created in ``effects`` delete with their rows."""
    return [
        key
        for e in effects
        if isinstance(e, Persist) and isinstance(e.record, GameCreated)
        for key in e.record.consumed_offers
    ]


def test_a_stored_seek_outlives_its_player_and_starts_a_game_without_them() -> None:
    h = Harness()
    h.connect(1, player("p1"))
    h.connect(2, player("g2", guest=True))
    made = h.send(1, "seek", variant="minishogi", tc=DAY, ack="s")
    (written,) = stored_effects(made)
    assert isinstance(written, OfferStored) and isinstance(written.offer, Seek)
    key = written.offer.key
    assert key is not None and len(key) == 16
    assert stored_effects(h.send(1, "seek", variant="minishogi", tc=FISCHER_TC)) == []
    assert stored_effects(h.send(2, "seek", variant="shoshogi", tc=DAY)) == []  # a guest's
    h.disconnect(1)
    h.disconnect(2)
    assert [(s.player.id, s.stored) for s in h.hub.seeks()] == [("p1", True)]
    h.connect(3, player("p3"))
    h.clear()
    seek_id = h.hub.seeks()[0].id
    taken = h.send(3, "play", id=seek_id, ack="p")
    # Its row goes with the game's, in one transaction: no write of its own.
    assert stored_effects(taken) == [] and consumed_keys(taken) == [key]
    game_id = one(h.inbox(3), "ack").d["game"]
    assert h.hub.seeks() == []
    assert set(h.hub.games_of("p1")) == {game_id} and h.hub.games_of("p3") == [game_id]


def test_a_real_time_game_leaves_the_stored_offers() -> None:
    h = Harness()
    for n in (1, 2, 3):
        h.connect(n, player(f"p{n}"))
    h.send(1, "seek", variant="minishogi", tc=DAY)
    h.send(1, "match", to="P3", variant="minishogi", tc=DAY)
    h.send(1, "seek", variant="shoshogi", tc=FISCHER_TC)
    h.send(2, "seek", variant="shoshogi", tc=FISCHER_TC)  # pairs: a real-time game
    h.commit_all()
    assert [(s.terms.variant, s.stored) for s in h.hub.seeks()] == [("minishogi", True)]
    assert [c.stored for c in h.hub.state.challenges.involving("p1")] == [True]


def test_restored_offers_get_new_ids_and_are_announced() -> None:
    h = Harness()
    h.connect(1, player("p1"))
    h.connect(2, player("p2"))
    h.send(2, "sought", watch=True)
    made = h.send(1, "seek", variant="minishogi", tc=DAY)
    made += h.send(1, "match", to="P2", variant="minishogi", tc=DAY)
    seek, challenge = (e.offer for e in stored_effects(made) if isinstance(e, OfferStored))
    assert isinstance(seek, Seek) and isinstance(challenge, Challenge)
    again = Harness()
    again.connect(2, player("p2"))
    again.send(2, "sought", watch=True)
    again.clear()
    assert stored_effects(again.run(again.hub.restore_offer(seek, again.now))) == []
    again.run(again.hub.restore_offer(challenge, again.now))
    got = again.inbox(2)
    added: Any = one(got, "seek_added").d
    told: Any = one(got, "challenge").d
    assert added["player"]["id"] == "p1" and told["to"]["id"] == "p2"
    assert [s.key for s in again.hub.seeks()] == [seek.key]
    with pytest.raises(ValueError, match="only a stored seek"):
        again.hub.restore_offer(replace(seek, key=None), again.now)
    # Accepted with the challenger offline: the game is made, the row deleted.
    (restored,) = again.hub.state.challenges.involving("p2")
    effects = again.send(2, "accept", id=restored.id, ack="a")
    assert stored_effects(effects) == [] and consumed_keys(effects) == [challenge.key]
    assert isinstance(one(again.inbox(2), "ack").d["game"], str)


def test_match_offline() -> None:
    h = Harness()
    h.connect(1, player("p1"))
    h.clear()
    command = match(DAY, "m")
    h.run(h.hub.match_offline(1, command, None, h.now))
    error = one(h.inbox(1), "error")
    assert error.d["code"] == "no_such_player"
    assert str(error.d["message"]).startswith("There is no player named")
    made = h.run(h.hub.match_offline(1, command, player("ghost"), h.now))
    (written,) = stored_effects(made)
    assert isinstance(written, OfferStored) and isinstance(written.offer, Challenge)
    assert written.offer.target.id == "ghost"
    assert one(h.inbox(1), "ack").d["challenge"] == written.offer.id
    real_time = match(FISCHER_TC, "r")
    h.run(h.hub.match_offline(1, real_time, player("ghost"), h.now))
    assert one(h.inbox(1), "error").d["code"] == "no_such_player"


def test_the_answer_waits_for_the_write() -> None:
    """Acknowledged means stored: a stored seek's, challenge's, unseek's, withdraw's and
    decline's ack goes out only at ``offer_written``; a real-time seek's at once."""
    h = Harness(auto_commit=False)
    h.connect(1, player("p1"))
    h.connect(2, player("p2"))
    h.send(2, "sought", watch=True)
    h.clear()
    h.send(1, "seek", variant="minishogi", tc=FISCHER_TC, ack="rt")
    assert one(h.inbox(1), "ack").a == "rt" and h.offer_writes == []
    payloads: list[tuple[str, dict[str, Any]]] = [
        ("seek", {"variant": "minishogi", "tc": DAY}),
        ("match", {"to": "P2", "variant": "minishogi", "tc": DAY}),
    ]
    for command, payload in payloads:
        h.send(1, command, ack=command, **payload)
        assert [m.t for m in h.inbox(1) if m.t in ("ack", "error")] == []
        h.commit_offers()
        assert one(h.inbox(1), "ack").a == command
    (seek,) = (s for s in h.hub.seeks() if s.stored)
    (challenge,) = h.hub.state.challenges.involving("p1")
    h.send(1, "unseek", id=seek.id, ack="u")
    h.send(2, "decline", id=challenge.id, ack="d")
    assert [m.t for m in h.inbox(1) + h.inbox(2) if m.t == "ack"] == []
    h.commit_offers()
    assert one(h.inbox(1), "ack").d == {"removed": [seek.id]}
    assert one(h.inbox(2), "ack").d == {"id": challenge.id}


def test_a_failed_write_answers_an_error_and_leaves_nothing_open() -> None:
    h = Harness(auto_commit=False)
    h.connect(1, player("p1"))
    h.connect(2, player("p2"))
    h.send(2, "sought", watch=True)
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="s")
    h.send(1, "match", to="P2", variant="minishogi", tc=DAY, ack="m")
    h.clear()
    h.fail_offer("database locked")
    h.fail_offer("database locked")
    assert h.hub.seeks() == [] and h.hub.state.challenges.involving("p1") == []
    errors = h.of_type(1, "error")
    assert [(e.a, e.d["code"]) for e in errors] == [("s", "offer_not_saved")] * 1 + [
        ("m", "offer_not_saved")
    ]
    assert "database locked" in str(errors[0].d["message"])
    seen = [m.t for m in h.inbox(2)]
    assert seen == ["seek_removed", "challenge_cancelled"]
    assert h.hub.state.unwritten_offers == {} and h.hub.state.held_answers == {}
    # Taken before its write failed: the game stands, and so does the seek's answer.
    h.send(1, "seek", variant="minishogi", tc=DAY, ack="s2")
    (seek,) = h.hub.seeks()
    h.send(2, "play", id=seek.id, ack="p")
    h.fail_offer()
    h.commit_offers()
    assert one(h.of_type(1, "ack"), "ack").a == "s2"


def test_a_game_deletes_the_offers_it_answers_with_its_row() -> None:
    """The stored offers a game answers go in its row's transaction
    (``GameCreated.consumed_offers``), with no write of their own; a row not written leaves
    them open again as they were; an offer answered before its own insert was reported gets
    its own delete, queued after that insert."""
    h = Harness(auto_commit=False)
    for n in (1, 2, 3):
        h.connect(n, player(f"p{n}"))
    h.send(3, "sought", watch=True)
    h.send(1, "seek", variant="minishogi", tc=DAY, manual=True)
    h.commit_offers()
    (seek,) = h.hub.seeks()
    h.send(2, "play", id=seek.id)  # a manual seek: a challenge to its owner
    h.commit_offers()
    (challenge,) = h.hub.state.challenges.involving("p1")
    assert challenge.key is not None and challenge.seek_id == seek.id
    h.clear()
    taken = h.send(1, "accept", id=challenge.id, ack="a")
    assert stored_effects(taken) == []
    assert sorted(consumed_keys(taken)) == sorted(k for k in (seek.key, challenge.key) if k)
    assert h.hub.seeks() == [] and h.hub.state.challenges.involving("p1") == []
    h.fail("database locked")
    # Open again, with their ids: nothing was deleted.
    assert h.hub.seeks() == [seek] and h.hub.state.challenges.involving("p1") == [challenge]
    assert [m.t for m in h.inbox(3)] == ["seek_removed", "seek_added"]
    told = h.inbox(1)
    assert one(told, "error").d["code"] == "game_not_created"
    assert one(told, "challenge").d["id"] == challenge.id
    assert h.hub.state.consuming == {} and h.offer_writes == []
    # Accepted again: the game is stored, nothing is left to write.
    taken = h.send(1, "accept", id=challenge.id, ack="b")
    assert sorted(consumed_keys(taken)) == sorted(k for k in (seek.key, challenge.key) if k)
    assert h.hub.state.consuming != {}
    h.commit()
    assert h.hub.state.consuming == {} and h.offer_writes == []
    assert isinstance(one(h.inbox(1), "ack").d["game"], str)
    # Taken before its own insert was reported: deleted by its own write, after the insert.
    h.send(2, "seek", variant="shoshogi", tc=DAY)
    (fresh,) = h.hub.seeks()
    taken = h.send(3, "play", id=fresh.id)
    assert consumed_keys(taken) == []
    inserted, dropped = h.offer_writes
    assert isinstance(inserted, OfferStored) and isinstance(dropped, OfferDropped)
    assert dropped.key == fresh.key


def test_an_absent_owners_limit_counts_the_stored_games() -> None:
    """With ``ask_owner_games``, answering the stored seek or challenge of a player whose
    stored games the hub has no list of (absent) asks for them first (``GamesWanted``,
    nothing changed), and the command run again with them counts them: at the limit it is
    refused (``player_busy``) and the offer stays open; below it the game starts."""
    h = Harness(HubConfig(ask_owner_games=True, max_correspondence_games=1))
    h.connect(1, player("p1"))
    h.send(1, "seek", variant="minishogi", tc=DAY)
    h.run(h.hub.match_offline(1, match(DAY, "m"), player("ghost"), h.now))
    h.disconnect(1)
    (seek,) = h.hub.seeks()
    h.connect(2, player("p2"))
    h.clear()
    play = parse_command({"t": "play", "a": "p", "d": {"id": seek.id}})
    (wanted,) = h.send(2, "play", id=seek.id, ack="p")
    assert isinstance(wanted, GamesWanted)
    assert (wanted.conn_id, wanted.command, wanted.player.id, wanted.known) == (2, play, "p1", {})
    assert h.hub.seeks() == [seek] and h.inbox(2) == []
    busy = {"p1": frozenset({"stored1"})}
    h.run(h.hub.handle(2, play, h.now, games=busy))
    refused = one(h.inbox(2), "error")
    assert (refused.a, refused.d["code"]) == ("p", "player_busy")
    assert "1 correspondence games" in str(refused.d["message"])
    assert h.hub.seeks() == [seek] and h.hub.games_of("p2") == []
    assert h.hub.state.owner_games == {}  # for that command only
    # A fitting seek asks too, and opens beside the busy one.
    (wanted,) = h.send(2, "seek", variant="minishogi", tc=DAY, ack="s")
    assert isinstance(wanted, GamesWanted) and wanted.player.id == "p1"
    h.run(h.hub.handle(2, wanted.command, h.now, games=busy))
    assert len(h.hub.seeks()) == 2 and h.hub.games_of("p2") == []
    h.send(2, "unseek", ack="u")
    h.clear()
    # Below the limit: taken.
    h.run(h.hub.handle(2, play, h.now, games={"p1": frozenset()}))
    game_id = one(h.inbox(2), "ack").d["game"]
    assert h.hub.games_of("p1") == [game_id] and h.hub.seeks() == []
    # Accepting the absent sender's challenge asks too; the game in memory counts with them.
    h.run(h.hub.connect(5, player("ghost"), h.now, []))
    (challenge,) = h.hub.state.challenges.involving("ghost")
    accept = parse_command({"t": "accept", "a": "a", "d": {"id": challenge.id}})
    (wanted,) = h.run(h.hub.handle(5, accept, h.now))
    assert isinstance(wanted, GamesWanted) and wanted.player.id == "p1"
    h.run(h.hub.handle(5, accept, h.now, games={"p1": frozenset()}))
    assert one(h.inbox(5), "error").d["code"] == "player_busy"
    assert h.hub.state.challenges.involving("ghost") == [challenge]
    # An owner online, with the store's list given at the connection, is not asked about.
    h.run(h.hub.connect(3, player("p3"), h.now, []))
    h.send(3, "seek", variant="shoshogi", tc=DAY)
    (other,) = h.hub.seeks()
    h.connect(4, player("p4"))
    h.clear()
    assert not any(isinstance(e, GamesWanted) for e in h.send(4, "play", id=other.id))
    assert one(h.inbox(4), "ack").d["game"] in h.hub.games_of("p3")


def test_a_game_refused_for_offers_no_longer_held_does_not_reopen_them() -> None:
    """The store refused a game because the rows of offers it answered are no longer this
    node's (``persist_failed(offers_gone=…)``: another cluster node claimed them, or they were
    deleted): they are forgotten, not opened again; a challenge's parties get
    ``challenge_cancelled`` (``moved``), the taker ``no_such_seek`` / ``no_such_challenge``,
    nobody ``game_not_created``. Offers of that game still held are opened again."""
    h = Harness(auto_commit=False)
    for n in (1, 2, 3):
        h.connect(n, player(f"p{n}"))
    h.send(3, "sought", watch=True)
    h.send(1, "seek", variant="minishogi", tc=DAY)
    h.send(1, "match", to="P2", variant="shoshogi", tc=DAY)
    h.commit_offers()
    (seek,) = h.hub.seeks()
    (challenge,) = h.hub.state.challenges.involving("p1")
    h.clear()
    # A seek taken by p2.
    taken = h.send(2, "play", id=seek.id, ack="p")
    assert consumed_keys(taken) == [seek.key]
    assert seek.key is not None and challenge.key is not None
    h.fail("stored offers no longer held here", offers_gone=(seek.key,))
    assert h.hub.seeks() == [] and h.hub.state.consuming == {} and h.offer_writes == []
    assert [m.t for m in h.inbox(3)] == ["seek_removed"]  # when taken; never added again
    refused = one(h.inbox(2), "error")
    assert refused.d["code"] == "no_such_seek" and f"Seek {seek.id} " in str(refused.d["message"])
    assert h.inbox(1) == []  # its owner never heard of the game
    assert h.hub.games_of("p1") == [] and h.hub.games_of("p2") == []
    # A challenge accepted by p2.
    taken = h.send(2, "accept", id=challenge.id, ack="a")
    assert consumed_keys(taken) == [challenge.key]
    h.clear()
    h.fail("stored offers no longer held here", offers_gone=(challenge.key,))
    assert h.hub.state.challenges.involving("p1") == [] and h.hub.state.consuming == {}
    cancelled = {"id": challenge.id, "reason": "moved"}
    to_sender, to_taker = h.inbox(1), h.inbox(2)
    assert [(m.t, m.d) for m in to_sender] == [("challenge_cancelled", cancelled)]
    assert [m.t for m in to_taker] == ["challenge_cancelled", "error"]
    assert to_taker[1].d["code"] == "no_such_challenge"
    assert h.hub.games_of("p1") == [] and h.hub.games_of("p2") == []
    # A manual seek's challenge accepted, the seek's row gone: the challenge stays open.
    h.send(1, "seek", variant="minishogi", tc=DAY, manual=True)
    h.commit_offers()
    (manual,) = h.hub.seeks()
    h.send(2, "play", id=manual.id)
    h.commit_offers()
    (offered,) = h.hub.state.challenges.involving("p1")
    assert manual.key is not None
    h.send(1, "accept", id=offered.id)
    h.clear()
    h.fail("stored offers no longer held here", offers_gone=(manual.key,))
    assert h.hub.seeks() == [] and h.hub.state.challenges.involving("p1") == [offered]
    assert [m.t for m in h.inbox(3)] == []
    assert one(h.inbox(1), "error").d["code"] == "no_such_seek"
