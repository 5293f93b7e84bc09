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
from collections.abc import Mapping
from pathlib import Path
from typing import TypedDict, TypeVar

from server.hub.effects import GameFinished
from server.hub.game_ids import GAME_ID_PATTERN
from server.jsontypes import JsonObject

__all__ = ["JOURNAL_FORMAT", "EndJournal", "JournalEntry", "end_entry", "end_from_entry"]


JOURNAL_FORMAT = 1
"""The layout of an entry, written in it as ``"format"``. :func:`end_from_entry` reads every
layout ever written: 1 (:func:`end_entry`) and 0, the field names of the hub's ``GameFinished``
before entries had a format (an entry written by an older process is replayed by a newer one)."""

_FORMAT_0_NAMES = {
    "game_id": "game",
    "first_id": "first",
    "second_id": "second",
    "final_fen": "fen",
}
"""Format 0's names that format 1 spells otherwise (the others are the same)."""


class JournalEntry(TypedDict):
    """An entry of format :data:`JOURNAL_FORMAT` (the JSON object of one file)."""

    format: int
    game: str
    variant: str
    rated: bool
    first: str
    second: str
    result: str | None
    termination: str
    plies: int
    fen: str
    ended_ms: int
    server_decided: bool


def end_entry(end: GameFinished) -> JournalEntry:
    """The journal entry of ``end``, in format :data:`JOURNAL_FORMAT`."""
    return {
        "format": JOURNAL_FORMAT,
        "game": end.game_id,
        "variant": end.variant,
        "rated": end.rated,
        "first": end.first_id,
        "second": end.second_id,
        "result": end.result,
        "termination": end.termination,
        "plies": end.plies,
        "fen": end.final_fen,
        "ended_ms": end.ended_ms,
        "server_decided": end.server_decided,
    }


_T = TypeVar("_T")


def end_from_entry(entry: Mapping[str, object]) -> GameFinished:
    """The game end a journal entry of any format holds.

    :raises ValueError: an unknown format, a missing field or one of the wrong type.
    """
    version = entry.get("format", 0)
    if version == 0:
        entry = {_FORMAT_0_NAMES.get(name, name): value for name, value in entry.items()}
    elif version != JOURNAL_FORMAT:
        raise ValueError(f"unknown journal format {version!r}")

    def field(name: str, kind: type[_T]) -> _T:
        value = entry.get(name)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ValueError(f"journal field {name!r} is {value!r}")
        return value

    return GameFinished(
        game_id=field("game", str),
        variant=field("variant", str),
        rated=field("rated", bool),
        first_id=field("first", str),
        second_id=field("second", str),
        result=None if entry.get("result") is None else field("result", str),
        termination=field("termination", str),
        plies=field("plies", int),
        final_fen=field("fen", str),
        ended_ms=field("ended_ms", int),
        server_decided=field("server_decided", bool),
    )


class EndJournal:
    """Entries keyed by game id in ``directory`` (created when first needed).

    The methods do blocking file I/O (a few hundred bytes and an ``fsync``); call them from a
    worker thread in an event loop.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, game_id: str) -> Path:
        if not GAME_ID_PATTERN.fullmatch(game_id):
            raise ValueError(f"not a game id for the journal: {game_id!r}")
        return self.directory / f"{game_id}.json"

    def keep(self, game_id: str, entry: JournalEntry) -> None:
        """Store ``entry`` for ``game_id`` durably, replacing any earlier one.

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

    def entries(self) -> dict[str, JsonObject]:
        """Every entry, by game id (unreadable files are skipped: a crash mid-write leaves only a
        ``.tmp`` file, never a torn entry)."""
        found: dict[str, JsonObject] = {}
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
