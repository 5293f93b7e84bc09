"""A small per-process cache of who a bearer token stands for.

Resolving a token costs two database queries (the token's account, then its ratings) on every
API request; a bot posting a move every second would pay them on each move. The cache keeps a
resolved token for :data:`TTL_S` seconds, at most :data:`MAX_ENTRIES` of them (the least
recently used goes first). Only answers that found an account are kept: an unknown token is
looked up again each time, so a token created on another hub works at once.

Staleness is bounded by the TTL, and this process forgets what it changes itself at once: a
token revoked here (:meth:`forget_token`, :meth:`forget_account`) and an account upgraded to a
bot here (:meth:`forget_account`). A token revoked, or an account upgraded, through **another**
hub process takes effect here within :data:`TTL_S` (docs/bots.md).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["MAX_ENTRIES", "TTL_S", "CallerCache"]

TTL_S = 5.0
"""How long a resolved token is trusted without asking the database again."""
MAX_ENTRIES = 10_000
"""At most this many tokens are kept (each entry is a few hundred bytes)."""


class CallerCache:
    """token -> (expiry, the caller and its account id); see the module docstring. The caller
    (``auth.Caller``, which imports this module) is kept as an ``object``; its reader checks it."""

    def __init__(
        self,
        ttl_s: float = TTL_S,
        max_entries: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, int, object]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str) -> object | None:
        """The cached caller of ``token``, or None (unknown or expired)."""
        entry = self._entries.get(token)
        if entry is None:
            return None
        expiry, _, value = entry
        if self._clock() >= expiry:
            del self._entries[token]
            return None
        self._entries.move_to_end(token)
        return value

    def put(self, token: str, account_id: int, value: object) -> None:
        if self.ttl_s <= 0:
            return
        self._entries[token] = (self._clock() + self.ttl_s, account_id, value)
        self._entries.move_to_end(token)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def forget_token(self, token: str) -> None:
        self._entries.pop(token, None)

    def forget_account(self, account_id: int) -> None:
        """Every cached token of the account (one of its tokens revoked by id, or the account
        changed): a linear pass, done only on those rare requests."""
        for token in [t for t, (_, owner, _) in self._entries.items() if owner == account_id]:
            del self._entries[token]
