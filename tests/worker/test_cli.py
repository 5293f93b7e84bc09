"""The worker's command line: flags, environment, key file."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.worker.__main__ import parse_args


def test_flags_and_key_file(tmp_path: Path) -> None:
    key = tmp_path / "worker.key"
    key.write_text("s3cret\n")
    config = parse_args(["--url", "http://h:1", "--key-file", str(key), "--slots", "1", "--nice", "5",
                         "--engine", "minishogi=sjaakii", "--name", "w1"])
    assert (config.url, config.key, config.slots, config.nice, config.name) == ("http://h:1", "s3cret", 1, 5, "w1")
    assert config.engines == {"minishogi": "sjaakii"}


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUB_WORKER_URL", "http://e:2")
    monkeypatch.setenv("HUB_WORKER_KEY", "k")
    monkeypatch.setenv("HUB_WORKER_SLOTS", "2")
    config = parse_args([])
    assert (config.url, config.key, config.slots) == ("http://e:2", "k", 2)


def test_a_missing_key_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HUB_WORKER_KEY", raising=False)
    with pytest.raises(SystemExit) as exc:
        parse_args(["--key-file", str(tmp_path / "absent.key")])
    assert exc.value.code == 2
    assert "no worker key" in capsys.readouterr().err
