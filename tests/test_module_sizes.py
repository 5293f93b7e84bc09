"""Every module of the project stays under :data:`MAX_LINES` lines (file reading only).

A module does the one job its name says; past ~600 lines it is usually doing two, and a
newcomer reads it whole to find either. The generated TypeScript (``web/src/protocol.gen.ts``,
one definition per message of the vocabulary) is the one file left out.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600
CHECKED = (
    ("server", "*.py"),
    ("tests", "*.py"),
    ("bench", "*.py"),
    ("scripts", "*.py"),
    ("migrations", "*.py"),
    ("web/src", "*.ts"),
    ("web/test", "*.ts"),
)
GENERATED = {ROOT / "web" / "src" / "protocol.gen.ts"}


def _modules() -> list[Path]:
    found = []
    for folder, pattern in CHECKED:
        for path in sorted((ROOT / folder).rglob(pattern)):
            if "node_modules" not in path.parts and path not in GENERATED:
                found.append(path)
    return found


def test_the_modules_are_found() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in _modules()}
    assert "server/hub/hub.py" in names
    assert "web/src/main.ts" in names
    assert "web/src/protocol.gen.ts" not in names


def test_every_module_is_under_the_limit() -> None:
    long = []
    for path in _modules():
        with path.open("rb") as source:
            lines = sum(1 for _ in source)
        if lines > MAX_LINES:
            long.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not long, f"modules over {MAX_LINES} lines (split them by meaning):\n" + "\n".join(long)
