"""Seek pairing rules, rating ranges, colour compatibility, limits, challenge books."""

import random

import pytest

from server.hub.commands import ColourChoice
from server.hub.errors import CommandError
from server.hub.identity import PlayerInfo, Rating
from server.hub.lobby import (
    Challenge,
    ChallengeBook,
    GameTerms,
    Seek,
    SeekBook,
    colours_compatible,
    first_mover,
    range_accepts,
    seeks_fit,
)
from server.rules.time_control import Byoyomi, Fischer

BLITZ = GameTerms("spartan", Fischer.from_seconds(180, 2), rated=True)


def player(pid: str, rating: float = 1500, guest: bool = False) -> PlayerInfo:
    return PlayerInfo(pid, pid.title(), guest, {"spartan": Rating(rating, 80.0)})


def seek(
    sid: int,
    who: PlayerInfo,
    terms: GameTerms = BLITZ,
    colour: ColourChoice = "random",
    rating_range: tuple[int, int] | None = None,
    manual: bool = False,
) -> Seek:
    return Seek(sid, who, terms, colour, rating_range, manual, created_ms=sid)


def test_identical_seeks_fit() -> None:
    assert seeks_fit(seek(1, player("a")), seek(2, player("b")))


def test_own_seeks_never_fit() -> None:
    alice = player("a")
    assert not seeks_fit(seek(1, alice), seek(2, alice))


@pytest.mark.parametrize(
    "other",
    [
        GameTerms("wildcastle", BLITZ.control, True),
        GameTerms("spartan", Fischer.from_seconds(180, 3), True),
        GameTerms("spartan", Byoyomi.from_seconds(180, 2, 1), True),
        GameTerms("spartan", BLITZ.control, False),
    ],
)
def test_different_terms_do_not_fit(other: GameTerms) -> None:
    assert not seeks_fit(seek(1, player("a")), seek(2, player("b"), other))


@pytest.mark.parametrize(
    ("a", "b", "fits"),
    [
        ("random", "random", True),
        ("random", "first", True),
        ("second", "random", True),
        ("first", "second", True),
        ("first", "first", False),
        ("second", "second", False),
    ],
)
def test_colour_compatibility(a: ColourChoice, b: ColourChoice, fits: bool) -> None:
    assert colours_compatible(a, b) is fits
    assert seeks_fit(seek(1, player("a"), colour=a), seek(2, player("b"), colour=b)) is fits


def test_first_mover_honours_wishes() -> None:
    rng = random.Random(1)
    assert first_mover("first", "random", rng) == 0
    assert first_mover("random", "first", rng) == 1
    assert first_mover("second", "random", rng) == 1
    assert first_mover("random", "second", rng) == 0
    assert first_mover("first", "second", rng) == 0
    assert {first_mover("random", "random", rng) for _ in range(50)} == {0, 1}


def test_rating_ranges_are_inclusive_and_mutual() -> None:
    assert range_accepts((1400, 1600), 1400) and range_accepts((1400, 1600), 1600)
    assert not range_accepts((1400, 1600), 1600.5)
    strong, weak = player("s", 1900), player("w", 1300)
    # Each must lie inside the other's range.
    assert seeks_fit(
        seek(1, strong, rating_range=(1200, 1400)), seek(2, weak, rating_range=(1800, 2000))
    )
    assert not seeks_fit(
        seek(1, strong, rating_range=(1200, 1400)), seek(2, weak, rating_range=(1000, 1800))
    )
    assert not seeks_fit(seek(1, strong, rating_range=(1400, 1600)), seek(2, weak))
    assert not seeks_fit(seek(1, strong), seek(2, weak, rating_range=(1000, 1500)))


def test_guest_rating_for_ranges_is_the_default() -> None:
    guest = PlayerInfo("g", "Guest1", True)
    casual = GameTerms("spartan", BLITZ.control, False)
    assert seeks_fit(
        seek(1, guest, casual), seek(2, player("b"), casual, rating_range=(1500, 1500))
    )
    assert not seeks_fit(
        seek(1, guest, casual), seek(2, player("b"), casual, rating_range=(1501, 2000))
    )


def test_rating_pool_prefers_variant_and_speed() -> None:
    pooled = PlayerInfo(
        "p",
        "P",
        ratings={("spartan", "blitz"): Rating(1900.0), "spartan": Rating(1600.0)},
    )
    assert BLITZ.speed == "blitz"
    assert BLITZ.rating_of(pooled).rating == 1900.0
    bullet = GameTerms("spartan", Fischer.from_seconds(30, 0), rated=True)
    assert bullet.rating_of(pooled).rating == 1600.0
    assert GameTerms("minishogi", BLITZ.control, True).rating_of(pooled).rating == 1500.0
    assert seek(1, pooled, rating_range=(1850, 1950)).accepts(pooled)


def test_manual_seeks_never_pair_automatically() -> None:
    assert not seeks_fit(seek(1, player("a"), manual=True), seek(2, player("b")))
    assert not seeks_fit(seek(1, player("a")), seek(2, player("b"), manual=True))


def test_seek_book_limit_per_player() -> None:
    book = SeekBook(limit_per_player=3)
    alice = player("a")
    for _ in range(3):
        book.add(seek(book.new_id(), alice))
    with pytest.raises(CommandError) as caught:
        book.add(seek(book.new_id(), alice))
    assert caught.value.code == "seek_limit"
    assert len(book) == 3
    book.add(seek(book.new_id(), player("b")))
    assert len(book) == 4


def test_seek_book_finds_oldest_fitting_partner() -> None:
    book = SeekBook()
    book.add(seek(1, player("a"), colour="first"))
    book.add(seek(2, player("b")))
    book.add(seek(3, player("c")))
    partner = book.find_partner(seek(9, player("d"), colour="first"))
    assert partner is not None and partner.id == 2


def test_seek_book_remove_player() -> None:
    book = SeekBook()
    book.add(seek(1, player("a")))
    book.add(seek(2, player("b")))
    book.add(seek(3, player("a")))
    assert [s.id for s in book.remove_player("a")] == [1, 3]
    assert [s.id for s in book.all()] == [2]
    assert book.remove(2) is not None and book.remove(2) is None


def test_seek_view() -> None:
    view = seek(5, player("a", 1712.6), rating_range=(1500, 1900)).view()
    assert view == {
        "id": 5,
        "player": {"id": "a", "name": "A", "guest": False, "rating": 1713, "provisional": False},
        "variant": "spartan",
        "tc": {"kind": "fischer", "base_s": 180, "inc_s": 2},
        "speed": "blitz",
        "rated": True,
        "colour": "random",
        "range": [1500, 1900],
        "manual": False,
    }


def test_challenge_book_limits() -> None:
    book = ChallengeBook(limit_per_sender=2)
    alice = player("a")

    def challenge(target: str) -> Challenge:
        return Challenge(book.new_id(), alice, player(target), BLITZ, "random", 0)

    book.add(challenge("b"))
    with pytest.raises(CommandError) as caught:
        book.add(challenge("b"))
    assert caught.value.code == "challenge_exists"
    book.add(challenge("c"))
    with pytest.raises(CommandError) as caught:
        book.add(challenge("d"))
    assert caught.value.code == "challenge_limit"
    assert len(book) == 2
    assert {c.target.id for c in book.involving("a")} == {"b", "c"}
    assert [c.sender.id for c in book.involving("c")] == ["a"]
