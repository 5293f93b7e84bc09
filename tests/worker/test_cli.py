"""The worker's command line: flags, environment, key file."""

from __future__ import annotations

import sys
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


def test_a_key_beginning_with_a_dash_reaches_the_worker(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``secrets.token_urlsafe`` begins with "-" one time in 64: after ``--key`` argparse takes
    such a key for an option (a cluster test's worker failed to start so). The launchers pass
    it as ``--key=KEY`` (``scripts/serve.sh``) or in ``HUB_WORKER_KEY`` (``scripts/cluster.py``)."""
    assert parse_args(["--key=-dash-key"]).key == "-dash-key"
    monkeypatch.setenv("HUB_WORKER_KEY", "-env-key")
    assert parse_args([]).key == "-env-key"
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    try:
        from cluster import LocalCluster

        local = LocalCluster(
            hubs=1, workers=1, database_url="postgresql://x/y", redis_url="redis://z", log_dir=tmp_path
        )
        (worker,) = local.workers
        key = worker.env["HUB_WORKER_KEY"]
        assert key and key in local.hubs[0].child.env["HUB_WORKER_KEYS"].split(",")
        assert "--key" not in worker.argv and key not in worker.argv
    finally:
        sys.path.remove(str(Path(__file__).resolve().parents[2] / "scripts"))


def test_an_engine_binary_can_be_replaced(capsys: pytest.CaptureFixture[str]) -> None:
    """``--program ENGINE=PATH``: another build of a known engine (same protocol)."""
    from server.worker.dialects import PROGRAMS

    config = parse_args(["--key=k", "--program", "hachu=/opt/hachu/hachu"])
    assert config.programs["hachu"] == PROGRAMS["hachu"].__class__("hachu", "/opt/hachu/hachu", "cecp")
    for bad in ("stockfish=/usr/bin/stockfish", "hachu=", "hachu"):
        with pytest.raises(SystemExit):
            parse_args(["--key=k", "--program", bad])
        assert "ENGINE=PATH" in capsys.readouterr().err
