"""An online player as the ICS ``who`` and ``finger`` list them (its own module: the session's
state and the store views both name it, and neither imports the other for it)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ListedPlayer"]


@dataclass(frozen=True)
class ListedPlayer:
    """An online player as the ICS ``who`` and ``finger`` list them."""

    name: str
    guest: bool
    playing: bool
    computer: bool = False
    bot: bool = False
