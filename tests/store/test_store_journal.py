"""The end journal: entries survive as files until forgotten; torn writes are never read."""

from pathlib import Path

import pytest

from server.store import EndJournal


def test_entries_are_kept_replaced_and_forgotten(tmp_path: Path) -> None:
    journal = EndJournal(tmp_path / "journal")
    assert journal.entries() == {}  # no directory yet
    journal.keep("abc123", {"result": "1-0", "plies": 4})
    journal.keep("def456", {"result": None, "plies": 0})
    journal.keep("abc123", {"result": "0-1", "plies": 5})
    assert journal.entries() == {
        "abc123": {"result": "0-1", "plies": 5},
        "def456": {"result": None, "plies": 0},
    }
    journal.forget("abc123")
    journal.forget("never-kept")
    assert list(EndJournal(tmp_path / "journal").entries()) == ["def456"]


def test_a_torn_write_is_not_an_entry(tmp_path: Path) -> None:
    journal = EndJournal(tmp_path)
    (tmp_path / "abc123.tmp").write_text('{"result": "1-')  # a crash in the middle of keep
    (tmp_path / "broken.json").write_text("[not json")
    assert journal.entries() == {}


def test_game_ids_cannot_escape_the_directory(tmp_path: Path) -> None:
    journal = EndJournal(tmp_path)
    for bad in ("../x", "a/b", "", "x" * 65):
        with pytest.raises(ValueError):
            journal.keep(bad, {})
