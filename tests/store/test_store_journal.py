"""The end journal: entries survive as files until forgotten; torn writes are never read."""

from pathlib import Path

import pytest

from server.hub.effects import GameFinished
from server.store import JOURNAL_FORMAT, EndJournal, end_entry, end_from_entry


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


FORMAT_0_LINE = (
    '{"ended_ms": 1764201600000, "final_fen": "rbsgk/4p/5/P4/KGSBR[] w - - 0 4", '
    '"first_id": "u12", "game_id": "u8jzPde0", "plies": 7, "rated": true, "result": "0-1", '
    '"second_id": "u34", "server_decided": true, "termination": "time", "variant": "minishogi"}'
)
"""An entry as the journal wrote it before entries had a format (``asdict(GameFinished)``)."""

END = GameFinished(
    game_id="u8jzPde0",
    variant="minishogi",
    rated=True,
    first_id="u12",
    second_id="u34",
    result="0-1",
    termination="time",
    plies=7,
    final_fen="rbsgk/4p/5/P4/KGSBR[] w - - 0 4",
    ended_ms=1764201600000,
    server_decided=True,
)


def test_an_entry_has_an_explicit_format_and_reads_back(tmp_path: Path) -> None:
    journal = EndJournal(tmp_path)
    journal.keep(END.game_id, end_entry(END))
    (entry,) = journal.entries().values()
    assert entry["format"] == JOURNAL_FORMAT == 1
    assert set(entry) == {
        "format", "game", "variant", "rated", "first", "second", "result", "termination",
        "plies", "fen", "ended_ms", "server_decided",
    }  # fmt: skip
    assert end_from_entry(entry) == END


def test_a_format_0_entry_still_replays(tmp_path: Path) -> None:
    (tmp_path / "u8jzPde0.json").write_text(FORMAT_0_LINE)
    (entry,) = EndJournal(tmp_path).entries().values()
    assert end_from_entry(entry) == END


@pytest.mark.parametrize(
    "change",
    [{"format": 2}, {"plies": "7"}, {"rated": 1}, {"result": 1}, {"game": None}, {"fen": None}],
)
def test_an_unreadable_entry_is_refused(change: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        end_from_entry({**end_entry(END), **change})
