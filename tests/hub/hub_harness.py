"""A manual-clock driver for Hub tests: records what each connection received, holds Persist
effects until the test commits (or fails) them. No event loop."""

from __future__ import annotations

import random
from typing import Any

from server.hub.commands import parse_command
from server.hub.effects import (
    Broadcast,
    Close,
    Effect,
    OfferDropped,
    OfferStored,
    Persist,
    Publish,
    Send,
)
from server.hub.hub import Hub, HubConfig
from server.hub.identity import PlayerInfo, Rating, RatingKey
from server.hub.messages import Message
from server.hub.room import GameRoom
from server.rules import Game

START = 1_000_000


def player(
    pid: str, rating: float = 1500.0, guest: bool = False, variant: str = "minishogi"
) -> PlayerInfo:
    ratings: dict[RatingKey, Rating] = {} if guest else {variant: Rating(rating, 60.0)}
    return PlayerInfo(pid, pid.capitalize(), guest, ratings)


class Harness:
    def __init__(
        self,
        config: HubConfig | None = None,
        seed: int = 7,
        auto_commit: bool = True,
        prepare: bool = False,
    ) -> None:
        """:param prepare: call ``hub.prepare`` for each Persist as the driver does for a move
        queued for its commit (it must change nothing visible)."""
        self.hub = Hub(config, random.Random(seed))
        self.now = START
        self.auto_commit = auto_commit
        self.prepare = prepare
        self.inboxes: dict[int, list[Message]] = {}
        self.pending: list[Persist] = []
        self.offer_writes: list[OfferStored | OfferDropped] = []
        """Stored offers' writes not yet reported (``commit_offers`` / ``fail_offer``)."""
        self.committed: list[Persist] = []
        self.published: list[Publish] = []
        self.closed: list[Close] = []

    # --- running effects -----------------------------------------------------------------------

    def run(self, effects: list[Effect]) -> list[Effect]:
        for effect in effects:
            if isinstance(effect, Send):
                self.inboxes.setdefault(effect.conn_id, []).append(effect.message)
            elif isinstance(effect, Broadcast):
                assert effect.conn_ids, "empty broadcasts should not be emitted"
                for conn in effect.conn_ids:
                    self.inboxes.setdefault(conn, []).append(effect.message)
            elif isinstance(effect, Persist):
                self.pending.append(effect)
                if self.prepare:
                    self.hub.prepare(effect.token)
            elif isinstance(effect, Publish):
                self.published.append(effect)
            elif isinstance(effect, Close):
                self.closed.append(effect)
            elif isinstance(effect, OfferStored | OfferDropped):
                self.offer_writes.append(effect)
        if self.auto_commit:
            self.commit_all()
        return effects

    def commit_all(self) -> None:
        while self.pending:
            self.commit()
        self.commit_offers()

    def commit_offers(self) -> None:
        """Report every stored offer's write done, in order."""
        while self.offer_writes:
            write = self.offer_writes.pop(0)
            self.run(self.hub.offer_written(write.token, self.now))

    def fail_offer(self, reason: str = "disk full") -> list[Effect]:
        """Report the oldest unreported offer write failed."""
        write = self.offer_writes.pop(0)
        return self.run(self.hub.offer_failed(write.token, reason, self.now))

    def commit(self) -> list[Effect]:
        persist = self.pending.pop(0)
        self.committed.append(persist)
        return self.run(self.hub.persisted(persist.token, self.now))

    def fail(self, reason: str = "disk full", offers_gone: tuple[str, ...] = ()) -> list[Effect]:
        persist = self.pending.pop(0)
        return self.run(
            self.hub.persist_failed(persist.token, reason, self.now, offers_gone=offers_gone)
        )

    # --- driving ---------------------------------------------------------------------------------

    def connect(self, conn: int, who: PlayerInfo) -> list[Effect]:
        return self.run(self.hub.connect(conn, who, self.now))

    def disconnect(self, conn: int) -> list[Effect]:
        return self.run(self.hub.disconnect(conn, self.now))

    def send(
        self, conn: int, t: str, ack: Any = None, lag_ms: int = 0, **payload: Any
    ) -> list[Effect]:
        frame: dict[str, Any] = {"t": t, "d": payload}
        if ack is not None:
            frame["a"] = ack
        return self.run(self.hub.handle(conn, parse_command(frame), self.now, lag_ms=lag_ms))

    def tick(self, now: int | None = None) -> list[Effect]:
        if now is not None:
            self.now = now
        return self.run(self.hub.tick(self.now))

    def advance(self, ms: int) -> None:
        self.now += ms

    # --- reading ---------------------------------------------------------------------------------

    def inbox(self, conn: int) -> list[Message]:
        """Messages received by ``conn`` since the last call (then forgets them)."""
        return self.inboxes.pop(conn, [])

    def of_type(self, conn: int, t: str) -> list[Message]:
        return [m for m in self.inbox(conn) if m.t == t]

    def clear(self) -> None:
        self.inboxes.clear()


def room_of(h: Harness, game_id: str) -> GameRoom:
    room = h.hub.room(game_id)
    assert room is not None
    return room


def only(messages: list[Message], t: str) -> list[Message]:
    return [m for m in messages if m.t == t]


def one(messages: list[Message], t: str) -> Message:
    found = only(messages, t)
    assert len(found) == 1, f"expected one {t!r} in {[m.t for m in messages]}"
    return found[0]


FISCHER_TC = {"kind": "fischer", "base_s": 60, "inc_s": 1}


def start_game(
    h: Harness,
    variant: str = "minishogi",
    tc: dict[str, Any] | None = None,
    rated: bool = False,
    first: PlayerInfo | None = None,
    second: PlayerInfo | None = None,
) -> str:
    """Connect alice (conn 1, first player) and bob (conn 2, second) and start a game."""
    first = first or player("alice", variant=variant)
    second = second or player("bob", variant=variant)
    h.connect(1, first)
    h.connect(2, second)
    common: dict[str, Any] = {"variant": variant, "tc": tc or FISCHER_TC, "rated": rated}
    h.send(1, "seek", colour="first", **common)
    h.send(2, "seek", colour="second", **common)
    h.commit_all()
    game_id = h.hub.active_game(first.id)
    assert game_id is not None
    h.clear()
    return game_id


def knight_cycle(game: Game) -> list[str]:
    """Four moves (out and back for each side) that return to the current position."""
    for out1 in game.legal_moves():
        game.play(out1)
        try:
            for out2 in game.legal_moves():
                game.play(out2)
                back1, back2 = out1[2:] + out1[:2], out2[2:] + out2[:2]
                found = back1 in game.legal_moves()
                if found:
                    game.play(back1)
                    found = back2 in game.legal_moves()
                    game.undo()
                game.undo()
                if found:
                    return [out1, out2, back1, back2]
        finally:
            game.undo()
    raise AssertionError("no reversible pair of moves")


def play(h: Harness, game_id: str, moves: list[str]) -> None:
    room = h.hub.room(game_id)
    assert room is not None
    for uci in moves:
        h.advance(500)
        ply = len(room.records) + 1
        h.send(1 if ply % 2 else 2, "move", game=game_id, ply=ply, move=uci)
        h.commit_all()
        assert len(room.records) == ply


def wild_game(h: Harness) -> tuple[str, list[str]]:
    game_id = start_game(h, variant="wildcastle")
    room = h.hub.room(game_id)
    assert room is not None
    return game_id, knight_cycle(Game(room.variant, room.start_fen))


# --- game-room shortcuts: Mini-Shogi lines, moves sent alternately, no-change checks ------------

#: Mini-Shogi: the second player mates with the 4th move.
MATE_LINE = ["a1b2", "a5a2", "b2c3", "d5c4"]
#: Mini-Shogi: a 4-fold repetition after 12 moves; the first player loses.
REPETITION_LINE = ["b1b2", "d5d4", "b2b1", "d4d5"] * 3


def move(h: Harness, conn: int, game_id: str, ply: int, uci: str, **kw: Any) -> None:
    h.send(conn, "move", game=game_id, ply=ply, move=uci, **kw)


def play_line(h: Harness, game_id: str, line: list[str], step_ms: int = 1_000) -> None:
    """Play moves alternately from conn 1 (first) and conn 2 (second), ``step_ms`` apart."""
    for uci in line:
        h.advance(step_ms)
        ply = len(room_of(h, game_id).records) + 1
        move(h, 1 if ply % 2 == 1 else 2, game_id, ply, uci)
    assert len(room_of(h, game_id).records) == len(line) or room_of(h, game_id).finished


def unchanged_after(h: Harness, game_id: str, action: Any) -> list[Message]:
    """Run ``action``; assert that the room's version, moves and clocks did not change."""
    room = room_of(h, game_id)
    before = (room.log.version, list(room.records), room.clock.state(), room.game.fen())
    h.clear()
    action()
    assert h.pending == []
    assert (room.log.version, list(room.records), room.clock.state(), room.game.fen()) == before
    return h.inbox(1) + h.inbox(2)
