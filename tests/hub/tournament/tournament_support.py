"""Helpers of the tournament-core tests and bench: seeded simulated tournaments, and the
independent Dutch pairing (``pairing-core``) used as the oracle of ``caissify-pairings``."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from pairing_core import DUTCH_TILL2026_COMPAT, CanonicalPlayer, CanonicalRequest, pair_canonical
from pairing_core.errors import EngineTimeoutError, ImpossiblePairingError

from server.hub.tournament.state import TournamentState
from server.hub.tournament.swiss import DutchInput, SwissRound, dutch_input, pair_dutch
from server.hub.tournament.values import (
    Bye,
    Event,
    Finished,
    Joined,
    Paired,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.rules.record import ResultCode
from server.rules.time_control import Fischer

BLITZ = Fischer(180_000, 2_000)
Pairing = tuple[list[tuple[int, int]], int | None] | None
Pairer = Callable[[DutchInput], Pairing]


def settings(fmt: str = "swiss", **kw: object) -> TournamentSettings:
    base: dict[str, object] = {"name": "Test", "format": fmt, "variant": "minishogi", "control": BLITZ,
                               "start_at_ms": 1000}
    if fmt == "swiss":
        base["rounds"] = 5
    if fmt == "arena":
        base["duration_ms"] = 3_600_000
    base.update(kw)
    return TournamentSettings(**base)  # type: ignore[arg-type]


def pair_core(data: DutchInput) -> Pairing:
    """The same pairing by pairing-core's Dutch (its ``dutch-till2026-compat`` ruleset);
    ``None`` when it finds no legal pairing."""
    players = tuple(
        CanonicalPlayer(
            id=p.number,
            pairing_no=p.number,
            rating=p.rating,
            points=p.score,
            color_hist="".join("w" if c == "white" else "b" for c in p.colors),
            opponents=tuple(o for o in p.opponents if o in {q.number for q in data.players}),
            received_bye=p.pab > 0,
            float_hist="".join({"down": "D", "up": "U"}.get(f, "-") for f in p.floats),
        )
        for p in data.players
    )
    try:
        result = pair_canonical(
            CanonicalRequest(players=players, ruleset=DUTCH_TILL2026_COMPAT, round_number=data.round)
        )
    except (ImpossiblePairingError, EngineTimeoutError):
        return None
    games = [(b.white_id, b.black_id) for b in result.pairings if not b.is_bye]
    byes = [b.white_id for b in result.pairings if b.is_bye]
    return games, (byes[0] if byes else None)


@dataclass
class Sim:
    """A Swiss being simulated: its events, its state, and what happened each round."""

    rng: random.Random
    events: list[Event] = field(default_factory=list)
    state: TournamentState = field(default_factory=TournamentState)
    clock: int = 1000
    games: int = 0

    def add(self, event: Event) -> None:
        self.events.append(event)
        self.state.apply(event)

    def join(self, count: int) -> None:
        for _ in range(count):
            n = len(self.state.entries)
            self.clock += 1
            self.add(Joined(f"p{n}", f"Player {n:03d}", self.rng.randint(1000, 2400), self.clock))

    def apply_round(self, pairing: SwissRound, draw_rate: float = 0.3) -> None:
        """Store a round's pairing and play its games (the stronger player wins more often)."""
        self.clock += 1
        absent = {e.player for e in self.state.active()} - {p for g in pairing.games for p in g}
        for white, black in pairing.games:
            self.games += 1
            gid = f"g{self.games}"
            self.add(Paired(gid, pairing.round, white, black, self.clock))
            diff = self.state.entries[white].rating - self.state.entries[black].rating
            roll = self.rng.random()
            white_win = 1 / (1 + 10 ** (-diff / 400)) * (1 - draw_rate)
            result: ResultCode = "1-0" if roll < white_win else "1/2-1/2" if roll < white_win + draw_rate else "0-1"
            self.add(Finished(gid, TournamentGame(white, black, result, self.rng.randint(10, 120)), self.clock))
        if pairing.bye is not None:
            self.add(Bye(pairing.bye, pairing.round, 1.0, self.clock))
        for player in sorted(absent - {pairing.bye}):
            self.add(Bye(player, pairing.round, 0.0, self.clock))

    def withdraw_some(self, probability: float) -> None:
        for entry in self.state.active():
            if self.rng.random() < probability:
                self.add(Withdrew(entry.player, self.clock))


def simulate_swiss(
    seed: int,
    players: int,
    rounds: int,
    pairer: Pairer = pair_dutch,
    *,
    churn: float = 0.0,
    on_round: Callable[[DutchInput, Sim], None] | None = None,
) -> Sim:
    """A whole Swiss of ``players`` over ``rounds``, paired by ``pairer``. With ``churn`` > 0,
    each round some players withdraw and a few join late. ``on_round`` sees each round's input
    before it is paired (the comparison with the oracle)."""
    sim = Sim(random.Random(seed))
    sim.join(players)
    sim.add(Started(sim.clock))
    by_number: dict[int, str]
    for _ in range(rounds):
        if churn and sim.state.rounds_paired:
            sim.withdraw_some(churn)
            sim.join(sim.rng.randint(0, 2) if sim.rng.random() < churn * 5 else 0)
        data, by_number = dutch_input(sim.state, rounds)
        if len(data.players) < 2:
            break
        if on_round is not None:
            on_round(data, sim)
        paired = pairer(data)
        if paired is None:
            break
        games, bye = paired
        sim.apply_round(
            SwissRound(
                data.round,
                tuple((by_number[w], by_number[b]) for w, b in games),
                by_number[bye] if bye is not None else None,
            )
        )
    return sim


def pair_core_2026(data: DutchInput, max_steps: int | None = 200_000) -> Pairing:
    """The same pairing by pairing-core's ``dutch-2026`` ruleset; ``None`` when it finds none
    within ``max_steps`` of its search (its default, 2,000,000, can take half a minute)."""
    from pairing_core.errors import PairingError
    from pairing_core.fide2026 import DUTCH_2026, P26Player, P26Request, pair_2026

    present = {q.number for q in data.players}
    players = tuple(
        P26Player(
            id=p.number,
            tpn=p.number,
            score=p.score,
            rating=p.rating,
            colors="".join("W" if c == "white" else "B" for c in p.colors),
            opponents=tuple(o for o in p.opponents if o in present),
            last_float={"down": "D", "up": "U"}.get(p.floats[-1], "") if p.floats else "",
            prev_float={"down": "D", "up": "U"}.get(p.floats[-2], "") if len(p.floats) > 1 else "",
            got_pab=p.pab > 0,
            played=len(p.colors),
        )
        for p in data.players
    )
    try:
        result = pair_2026(
            P26Request(players=players, ruleset=DUTCH_2026, round_number=data.round,
                       total_rounds=data.total_rounds, is_last_round=data.round == data.total_rounds,
                       max_steps=max_steps)
        )
    except PairingError:
        return None
    return [(p.white_id, p.black_id) for p in result.pairs], result.bye_id
