"""The docs' references are true: every repository path and every ``server.`` name in backticks
in ``docs/*.md`` and ``README.md`` exists, and so does every ``Class.member`` of a class of
``server/``.

A path is a backticked text starting with one of the repository's folders (``server/``,
``tests/``, ``bench/``, ``scripts/``, ``web/src/``, ``config/``, ``migrations/``), with or
without a ``:line`` or ``::test`` suffix; it must name a file or a folder of the repository. A
dotted name starting with ``server.`` must resolve: the longest prefix that imports as a module,
then an attribute for each remaining part (``server.hub.clock.time_control_view``,
``server.hub.hub.Hub.restore_game``). A ``Class.member`` whose class is defined in ``server/``
(one module each: tests/test_names.py) must be defined by that class or a base of it: in its
body, or assigned to ``self`` by one of its methods (``HubDriver.cold``). Pure file reading,
parsing and imports: no server is started.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]

_PATH_ROOTS = ("server/", "tests/", "bench/", "scripts/", "web/src/", "config/", "migrations/")
_BACKTICKED = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"[A-Za-z0-9_./-]+")
_DOTTED = re.compile(r"server(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: A call's parentheses, an index or a trailing punctuation are not part of the name.
_NAME_END = re.compile(r"[(\[\s,;:].*$")
#: ``server.py`` is a file's name (of the folder the text is about), not a module path.
_FILE_SUFFIXES = (".py", ".md", ".toml", ".json")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_MEMBER = re.compile(r"\b([A-Z][A-Za-z0-9]*)\.([A-Za-z_][A-Za-z0-9_]*)")
#: A file since removed may be named as history when the text right after it says so
#: (docs/benchmarks.md: "`bench/bench_dai.py` (removed since, at 4b4af56", "`server/proxy.py`
#: (a Python balancer since replaced by HAProxy)", "`server/store/pg_moves.py` then").
_GONE = re.compile(r"^[\s(,]*[A-Za-z ]{0,30}?(removed since|since replaced|then,)")
_GONE_WINDOW = 60


def _references() -> list[tuple[str, int, str, str]]:
    """Every backticked text of the documents: (document, line, text, what follows it)."""
    found: list[tuple[str, int, str, str]] = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in _BACKTICKED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            after = " ".join(text[match.end() : match.end() + _GONE_WINDOW].split())
            found.append((document.name, line, match.group(1), after))
    return found


def _links() -> list[tuple[str, int, str]]:
    """Every relative Markdown link target of the documents: (document, line, target)."""
    found: list[tuple[str, int, str]] = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in _LINK.finditer(text):
            target = match.group(1).split("#", 1)[0]
            if target and "://" not in target and not target.startswith("mailto:"):
                line = text.count("\n", 0, match.start()) + 1
                found.append((document.name, line, target))
    return found


def _repository_path(text: str) -> str | None:
    """The repository path a backticked text names, without its ``:line`` or ``::test``
    suffix (a command line's script: ``scripts/cluster.py --hubs 2``), or None if it names
    none (a glob, a placeholder)."""
    if not text.startswith(_PATH_ROOTS):
        return None
    path = text.split()[0].split("::", 1)[0]  # a command line's first word is its script
    path = re.sub(r":\d+(-\d+)?$", "", path)
    if not _PATH.fullmatch(path) or "*" in path or "<" in path:
        return None
    return path.rstrip("/") or None


def _dotted_name(text: str) -> str | None:
    """The ``server.…`` name a backticked text is, without a call's arguments."""
    name = _NAME_END.sub("", text).rstrip(".")
    if name.endswith(_FILE_SUFFIXES):
        return None
    return name if _DOTTED.fullmatch(name) else None


def _class_members() -> dict[str, tuple[str, set[str], list[str]]]:
    """Each class of ``server/``: its module, what it defines (its body's functions, classes
    and assignments, and the ``self.name`` its methods assign) and its bases' names."""
    classes: dict[str, tuple[str, set[str], list[str]]] = {}
    for path in sorted((ROOT / "server").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            members: set[str] = set()
            for item in ast.walk(node):
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    members.add(item.name)
                targets: list[ast.expr] = []
                if isinstance(item, ast.Assign):
                    targets = item.targets
                elif isinstance(item, ast.AnnAssign):
                    targets = [item.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        members.add(target.id)
                    elif (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    ):
                        members.add(target.attr)
            bases = [base.id for base in node.bases if isinstance(base, ast.Name)]
            classes[node.name] = (module, members, bases)
    return classes


def _defines(classes: dict[str, tuple[str, set[str], list[str]]], name: str, member: str) -> bool:
    """Whether the class ``name`` or one of its bases defines ``member``; a base from outside
    ``server/`` (an exception, an enum, a selector) is asked through the imported class."""
    _, members, bases = classes[name]
    if member in members:
        return True
    if any(base in classes and _defines(classes, base, member) for base in bases):
        return True
    module = importlib.import_module(classes[name][0])
    return hasattr(getattr(module, name, None), member)


_REFERENCES = _references()
_PATHS = sorted(
    {
        (doc, line, path, after)
        for doc, line, text, after in _REFERENCES
        if (path := _repository_path(text)) is not None
    }
)
_NAMES = sorted(
    {
        (doc, line, name)
        for doc, line, text, _ in _REFERENCES
        if (name := _dotted_name(text)) is not None
    }
)


def test_references_found() -> None:
    """The patterns still match what the docs write (a test that checks nothing passes)."""
    assert len(_PATHS) > 50
    assert len(_NAMES) > 5


def test_paths_exist() -> None:
    missing = [
        f"{doc}:{line}: {path}"
        for doc, line, path, after in _PATHS
        if not (ROOT / path).exists() and not _GONE.search(after)
    ]
    assert not missing, "paths in the docs that the repository does not have:\n" + "\n".join(
        missing
    )


def test_links_exist() -> None:
    """Relative Markdown links (``[server/hub/messages.py](../server/hub/messages.py)``)."""
    links = _links()
    assert links
    missing = [
        f"{doc}:{line}: {target}"
        for doc, line, target in links
        if not ((ROOT / "docs" if doc != "README.md" else ROOT) / target).exists()
    ]
    assert not missing, "links in the docs to files the repository does not have:\n" + (
        "\n".join(missing)
    )


def test_class_members_exist() -> None:
    classes = _class_members()
    missing = sorted(
        {
            f"{doc}:{line}: {name}.{member}"
            for doc, line, text, _ in _REFERENCES
            for name, member in _MEMBER.findall(text)
            if name in classes and not _defines(classes, name, member)
        }
    )
    assert not missing, "members of server/ classes that the code does not define:\n" + (
        "\n".join(missing)
    )


def _resolve(name: str) -> object:
    """The object ``name`` names: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    module: ModuleType | None = None
    index = len(parts)
    while index > 0:
        try:
            module = importlib.import_module(".".join(parts[:index]))
            break
        except ModuleNotFoundError as error:
            if error.name is None or not ".".join(parts[:index]).startswith(error.name):
                raise
            index -= 1
    assert module is not None
    found: object = module
    for attribute in parts[index:]:
        found = getattr(found, attribute)
    return found


@pytest.mark.parametrize("name", sorted({name for _, _, name in _NAMES}))
def test_dotted_names_resolve(name: str) -> None:
    where = [f"{doc}:{line}" for doc, line, found in _NAMES if found == name]
    try:
        _resolve(name)
    except (ImportError, AttributeError) as error:
        pytest.fail(f"{name} (at {', '.join(where)}) does not resolve: {error}")
