"""A worker leaves nothing in its temporary directory when it stops (since 9f9142a)."""

from __future__ import annotations

from pathlib import Path

from computer_support import play_the_computer
from worker_support import WorkerProcess
from ws_support import OpenClient, StartApp


async def test_a_stopped_worker_leaves_no_temporary_file(
    start_app: StartApp, open_client: OpenClient, tmp_path: Path
) -> None:
    """Wild Castle's engine, Fairy-Stockfish, reads the variant file the worker writes into its
    temporary directory; the file is there while the worker plays and gone once SIGTERM has
    stopped it."""
    app = await start_app()
    tmpdir = tmp_path / "worker-tmp"
    tmpdir.mkdir()
    worker = await WorkerProcess.start(app.port, tmp_path / "w.log", "w1", tmpdir=tmpdir)
    try:
        human = await open_client(app, "human")
        await human.guest()
        game = await play_the_computer(human, "wildcastle", colour="second", resign_after=3)
        assert game.computer_moves >= 1
        assert [p.name for p in tmpdir.iterdir() if p.name.startswith("hub-fsf-")]
    finally:
        await worker.stop()
    assert worker.process.returncode == 0, (tmp_path / "w.log").read_text()
    assert list(tmpdir.iterdir()) == []
