"""What one client knows of a game room, rebuilt only from the messages it received.

Shared by the transport and cluster tests of replay after restarts, takeovers and outages:
a client's view must equal the stored game, and its room versions must form one gapless
sequence between snapshots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RoomView:
    """Apply a client's messages in order (:meth:`apply`): ``moves`` is the move list the client
    can reconstruct, ``version`` the last ``v`` it saw, ``breaks`` every place where an event's
    ``v`` was not the previous one plus one (or a move's ply did not follow), and ``snapshots``
    how many full snapshots (``game`` messages) it was sent."""

    game_id: str
    moves: list[str] = field(default_factory=list)
    version: int | None = None
    breaks: list[str] = field(default_factory=list)
    repeats: int = 0
    snapshots: int = 0

    def apply(self, message: dict[str, Any]) -> None:
        data = message.get("d")
        version = message.get("v")
        if not isinstance(data, dict) or data.get("game") != self.game_id or version is None:
            return
        kind = message["t"]
        if kind == "game":  # a snapshot: replaces everything known
            self.moves = list(data["moves"])
            self.version = version
            self.snapshots += 1
            return
        if self.version is not None and version <= self.version:
            self.repeats += 1
            return
        if self.version is not None and version != self.version + 1:
            self.breaks.append(f"{kind} v={version} after v={self.version}")
        self.version = version
        if kind == "move":
            if data["ply"] != len(self.moves) + 1:
                self.breaks.append(f"move ply {data['ply']} after {len(self.moves)} moves")
            self.moves.append(data["uci"])
        elif kind == "takeback":
            del self.moves[data["ply"] :]

    def apply_all(self, messages: Iterable[dict[str, Any]]) -> RoomView:
        for message in messages:
            self.apply(message)
        return self
