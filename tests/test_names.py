"""One name for one class: no class or type alias name is defined in two modules of ``server/``.

Two classes of one name (say a hub's online player and an ICS ``who`` line) make a reader
guess which one a signature means, and an import can silently pick the wrong one. A name
defined twice is renamed to say what each is, or the two are merged when they are the same
thing. Type variables (``T = TypeVar("T")``) are left out: each is a placeholder
local to its module, like a parameter's name.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SERVER = Path(__file__).resolve().parents[1] / "server"

#: Names allowed in more than one module, each with the reason. Empty: add one only for a
#: name that truly must be repeated (say a protocol's required name), with a comment why.
ALLOWED: dict[str, str] = {}

_TYPING_FACTORIES = {"NewType", "NamedTuple", "TypedDict"}


def _is_type_expression(value: ast.expr) -> bool:
    """Whether a module-level ``Name = value`` reads as a type alias: a subscript
    (``Callable[...]``, ``dict[...]``), a union (``A | B``) or another type's name."""
    if isinstance(value, ast.Subscript | ast.Attribute):
        return True
    if isinstance(value, ast.Name):
        return value.id[:1].isupper()
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr):
        return _is_type_expression(value.left) and _is_type_expression(value.right)
    return False


def _defined_names(statements: list[ast.stmt]) -> list[tuple[str, int]]:
    """The classes and type aliases a module's top level defines (``if`` blocks included,
    such as ``if TYPE_CHECKING:``), with their lines."""
    found: list[tuple[str, int]] = []
    for node in statements:
        if isinstance(node, ast.ClassDef):
            found.append((node.name, node.lineno))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            if ast.unparse(node.annotation).split(".")[-1] == "TypeAlias":
                found.append((node.target.id, node.lineno))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name, value = node.targets[0].id, node.value
            camel = name.lstrip("_")[:1].isupper() and not name.isupper()
            if isinstance(value, ast.Call):
                factory = ast.unparse(value.func).split(".")[-1]
                if factory in _TYPING_FACTORIES:
                    found.append((name, node.lineno))
            elif camel and _is_type_expression(value):
                found.append((name, node.lineno))
        elif isinstance(node, ast.If):
            found += _defined_names(node.body) + _defined_names(node.orelse)
        elif type(node).__name__ == "TypeAlias":  # ``type X = ...`` (Python 3.12+)
            found.append((node.name.id, node.lineno))  # type: ignore[attr-defined]
    return found


def definitions() -> dict[str, list[str]]:
    """Each class or type alias name of ``server/`` -> where it is defined (``path:line``)."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SERVER.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for name, line in _defined_names(tree.body):
            where[name].append(f"{path.relative_to(SERVER.parent)}:{line}")
    return where


def test_no_class_or_type_name_is_defined_in_two_modules() -> None:
    repeated = {
        name: places
        for name, places in definitions().items()
        if len({place.split(":")[0] for place in places}) > 1 and name not in ALLOWED
    }
    assert not repeated, "defined in more than one module (rename or merge): " + "; ".join(
        f"{name} in {', '.join(places)}" for name, places in sorted(repeated.items())
    )


def test_the_check_sees_classes_and_aliases() -> None:
    """The check finds what it is meant to (so an empty answer above means something)."""
    where = definitions()
    assert [p.split(":")[0] for p in where["FirstPlayerScore"]] == ["server/rules/analysis.py"]
    assert any(p.startswith("server/worker/search.py:") for p in where["SideToMoveScore"])
    assert any(p.startswith("server/bus/base.py:") for p in where["MessageHandler"])  # a Callable
    assert any(p.startswith("server/transport/http_api/link.py:") for p in where["MoveOrTakeback"])
    assert "T" not in where  # type variables are left out
