"""The TRF export of a hand-made Swiss: the exact text (columns as TRF-16 sets them), and read
back by a FIDE-format parser (caissify-pairings' TRF reader)."""

from __future__ import annotations

from caissify_pairings.trf import TRFParser
from tournament_support import settings

from server.hub.tournament.state import replay
from server.hub.tournament.trf import trf
from server.hub.tournament.values import (
    Bye,
    Event,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
    Withdrew,
)

EVENTS: list[Event] = [
    Joined("a", "Alice", 2000, 1), Joined("b", "Bob", 1900, 2), Joined("c", "Carol", 1800, 3),
    Joined("d", "Dan", 1700, 4), Joined("e", "Eve", 1600, 5), Started(1_767_225_600_000),
    Paired("g1", 1, "a", "d", 11), Paired("g2", 1, "e", "b", 11), Bye("c", 1, 1.0, 11),
    Finished("g1", TournamentGame("a", "d", "1-0", 30), 12), Finished("g2", TournamentGame("e", "b", "1/2-1/2", 30), 12),
    Withdrew("e", 13),
    Paired("g3", 2, "c", "a", 14), Paired("g4", 2, "b", "d", 14),
    Finished("g3", TournamentGame("c", "a", "0-1", 30), 15),
]

# Written by hand from the TRF-16 columns: 001 at 1-3, number 5-8, name 15-47, rating 49-52,
# points 81-84, rank 86-89, rounds from 92 every 10 columns (opponent 4, colour, result). Bob
# and Eve tie (0.5, Buchholz cut 1 0.5, Sonneborn-Berger 0.25): both rank 3. Bob-Dan is running.
EXPECTED = """\
012 Test
022 https://example.org/swiss/abc
042 2026/01/01
062 5
072 5
092 Individual: Swiss-System
122 180+2
XXR 5
XXC white1
001    1      Alice                             2000                             2.0    1     4 w 1     3 b 1
001    2      Bob                               1900                             0.5    3     5 b =     4 w
001    3      Carol                             1800                             1.0    2  0000 - U     1 w 0
001    4      Dan                               1700                             0.0    5     1 b 0     2 b
001    5      Eve                               1600                             0.5    3     2 w =  0000 - Z
"""


def test_trf_text_is_exact() -> None:
    text = trf(settings("swiss"), replay(EVENTS), address="https://example.org/swiss/abc")
    assert text == EXPECTED
    line = text.splitlines()[9]
    assert line[0:3] == "001" and line[4:8] == "   1" and line[14:47].rstrip() == "Alice"
    assert line[48:52] == "2000" and line[80:84] == " 2.0" and line[85:89] == "   1"
    assert line[91:99] == "   4 w 1" and line[101:109] == "   3 b 1"


def test_a_trf_reader_reads_it_back() -> None:
    text = trf(settings("swiss"), replay(EVENTS), address="x")
    parsed = TRFParser(text).parse()
    players = {p["starting_number"]: p for p in parsed["players"]}
    assert players[1]["name"] == "Alice" and players[1]["rating"] == 2000
    assert players[1]["results"][1]["opponent"] == 4 and players[1]["results"][1]["color"] == "w"
    assert players[3]["results"][1]["opponent"] is None and players[3]["results"][1]["result"] == "U"
    assert players[5]["results"][1]["result"] == "="
