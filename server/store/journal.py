"""A local journal of game endings the server decided but could not store yet.

A flag fall is the server's own decision: nobody can be asked to repeat it. While the database
is unreachable the hub holds it back (nobody is told) and its write is retried until stored; if
the process dies meanwhile, the decision would be lost with it, and after a restart the game
would resume with the loser's time restored. So such an ending is first written here — one
small JSON file per game, replaced atomically and synced to disk — and removed once the
database has it. At start, before unfinished games are resumed, every entry still here is
written to the database (:meth:`EndJournal.entries`).

The journal is a plain directory on the local disk; the process that wrote an entry (or any
process started later with the same directory) replays it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

__all__ = ["EndJournal"]

_GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class EndJournal:
    """Entries keyed by game id in ``directory`` (created when first needed).

    The methods do blocking file I/O (a few hundred bytes and an ``fsync``); call them from a
    worker thread in an event loop.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, game_id: str) -> Path:
        if not _GAME_ID.fullmatch(game_id):
            raise ValueError(f"not a game id for the journal: {game_id!r}")
        return self.directory / f"{game_id}.json"

    def keep(self, game_id: str, entry: dict[str, Any]) -> None:
        """Store ``entry`` (JSON-serialisable) for ``game_id`` durably, replacing any earlier one.

        Returns after the file and its directory entry are on disk.
        """
        path = self._path(game_id)
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        with open(temporary, "wb") as file:
            file.write(json.dumps(entry, sort_keys=True).encode())
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
        self._sync_directory()

    def forget(self, game_id: str) -> None:
        """Remove the entry of ``game_id`` (no error if there is none).

        Not synced: an entry that comes back after a crash is replayed once more, which the
        database refuses harmlessly (the game is over already).
        """
        self._path(game_id).unlink(missing_ok=True)

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every entry, by game id (unreadable files are skipped: a crash mid-write leaves only a
        ``.tmp`` file, never a torn entry)."""
        found: dict[str, dict[str, Any]] = {}
        if not self.directory.is_dir():
            return found
        for path in sorted(self.directory.glob("*.json")):
            try:
                entry = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(entry, dict):
                found[path.stem] = entry
        return found

    def _sync_directory(self) -> None:
        descriptor = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
