"""Game ids, defined once: how the hub makes them and what any door accepts as one.

An id is 1 to :data:`GAME_ID_MAX_LENGTH` characters of ``[0-9A-Za-z_-]`` (the store's column
holds that many); the hub generates :data:`GAME_ID_LENGTH` letters and digits
(:func:`new_game_id`). Commands, the review and analysis APIs, the store and the end journal all
check ids with :data:`GAME_ID_PATTERN` or :data:`GAME_ID_MAX_LENGTH` (tests/test_vocabulary.py
finds copies).
"""

from __future__ import annotations

import re
import string
from typing import Protocol

__all__ = ["GAME_ID_LENGTH", "GAME_ID_MAX_LENGTH", "GAME_ID_PATTERN", "new_game_id"]

GAME_ID_ALPHABET = string.ascii_letters + string.digits
GAME_ID_LENGTH = 8
"""Characters of a generated id (62**8 ≈ 2e14 ids)."""
GAME_ID_MAX_LENGTH = 16
"""The longest id accepted anywhere (the store's ``games.id`` column)."""
GAME_ID_PATTERN = re.compile(rf"[0-9A-Za-z_-]{{1,{GAME_ID_MAX_LENGTH}}}")
"""What a game id may look like (``fullmatch``)."""


class _Chooser(Protocol):
    def choice(self, seq: str) -> str: ...


def new_game_id(rng: _Chooser) -> str:
    """A fresh random id drawn with ``rng`` (the hub's seeded ``random.Random``, or
    ``secrets.SystemRandom()``)."""
    return "".join(rng.choice(GAME_ID_ALPHABET) for _ in range(GAME_ID_LENGTH))
