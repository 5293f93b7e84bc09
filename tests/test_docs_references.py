"""Cheap checks of the project's text (file reading only, no server).

* Docs, comments, tests and benches refer to commits or dates, never to numbered rounds of
  work ("issue 14", "session 3"): a newcomer cannot look those numbers up.
* ``bench/README.md`` indexes the benches: every script in ``bench/`` has its row, every script
  it names exists (those under "Removed" are gone), and every figure it points to is a heading
  of ``docs/benchmarks.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THIS_FILE = Path(__file__).resolve()

#: Where the rule holds: folders searched whole, and single files.
CHECKED_FOLDERS = ("docs", "server", "tests", "bench", "web/src", "scripts", "config", "migrations")
CHECKED_FILES = ("README.md", "pyproject.toml")

#: Files left out, each with the reason (none today).
EXCLUDED: set[Path] = set()

#: "issue 14", "Issues 25 and 26", "issue #37", "session 3" (any case).
WORK_ROUND = re.compile(r"\b(?:issue|session)s?\s+#?\d", re.IGNORECASE)

_SKIPPED_DIRS = {
    "__pycache__",
    "node_modules",
    ".hypothesis",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
}


def _text_files() -> list[Path]:
    files = [ROOT / name for name in CHECKED_FILES]
    for folder in CHECKED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and not _SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                files.append(path)
    return [path for path in files if path.resolve() != THIS_FILE and path not in EXCLUDED]


def _read_text(path: Path) -> str | None:
    """The file's text, or None for a binary file (an image, a font)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def test_no_numbered_rounds_of_work() -> None:
    found: list[str] = []
    for path in _text_files():
        text = _read_text(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for match in WORK_ROUND.finditer(line):
                found.append(
                    f"{path.relative_to(ROOT)}:{number}: {match.group(0)!r} in {line.strip()[:120]!r}"
                )
    assert not found, (
        "refer to the commit (short hash) or the date, or say what was changed, instead of a "
        "numbered issue or session:\n" + "\n".join(found)
    )


BENCH = ROOT / "bench"
BENCH_README = BENCH / "README.md"
_SCRIPT = re.compile(r"`([A-Za-z0-9_]+\.py)`")
_FIGURE = re.compile(r'"([^"]+)"')


def _readme_sections() -> dict[str, str]:
    """bench/README.md's ``##`` sections by heading."""
    sections: dict[str, str] = {}
    heading = ""
    for line in BENCH_README.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
            sections[heading] = ""
        else:
            sections[heading] = sections.get(heading, "") + line + "\n"
    return sections


def test_every_bench_script_is_in_the_readme() -> None:
    named = set(_SCRIPT.findall(BENCH_README.read_text(encoding="utf-8")))
    missing = sorted(path.name for path in BENCH.glob("*.py") if path.name not in named)
    assert not missing, f"bench/README.md has no row for {missing}"


def test_every_script_the_readme_names_exists() -> None:
    sections = _readme_sections()
    assert "Removed" in sections, (
        "bench/README.md's 'Removed' section was renamed: update this test"
    )
    absent = sorted(
        {
            name
            for heading, text in sections.items()
            if heading != "Removed"
            for name in _SCRIPT.findall(text)
        }
        - {path.name for path in BENCH.glob("*.py")}
    )
    assert not absent, f"bench/README.md names scripts that are not in bench/: {absent}"
    removed = [
        name
        for line in sections["Removed"].splitlines()
        if line.startswith("|")
        for name in _SCRIPT.findall(line.split("|")[1])  # the row's first column
    ]
    still_there = sorted(name for name in removed if (BENCH / name).exists())
    assert not still_there, (
        f"bench/README.md lists as removed scripts still in bench/: {still_there}"
    )


def test_the_readme_figures_are_headings_of_benchmarks_md() -> None:
    headings = [
        line.lstrip("#").strip()
        for line in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    ]
    unknown: list[str] = []
    for line in BENCH_README.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        for figure in _FIGURE.findall(line.rsplit("|", 2)[-2]):
            # A heading quoted whole, or its words before a qualifier (": not adopted (date)").
            if not any(heading == figure or heading.startswith(figure) for heading in headings):
                unknown.append(figure)
    assert not unknown, f"bench/README.md points to no heading of docs/benchmarks.md: {unknown}"
