"""The protocol's vocabulary is defined once in code, and docs/protocol.md lists the same words."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import pytest

from server.hub.commands import COMMAND_TYPES, command_schema, parse_command
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.lobby import MAX_SEEKS_PER_PLAYER
from server.hub.messages import PAYLOADS, message_kinds
from server.rules import ENGINE_TERMINATIONS, Termination
from server.transport.ics.render import MessageRenderer
from server.transport.ics.state import error_text

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = ROOT / "docs" / "protocol.md"


def _section(title: str) -> str:
    text = PROTOCOL.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _first_column_words(section: str) -> set[str]:
    words: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            words.update(re.findall(r"`([a-z_]+)`", first))
    return words


def test_protocol_error_table_lists_exactly_the_error_codes() -> None:
    documented = _first_column_words(_section("Error codes"))
    defined = {code.value for code in ErrorCode}
    assert documented - defined == set(), "documented codes missing from ErrorCode"
    assert defined - documented == set(), "ErrorCode members missing from docs/protocol.md"


def test_every_error_code_has_a_sentence() -> None:
    for code in ErrorCode:
        assert code.text and code.text[0].isupper() and code.text.endswith("."), code


def test_ics_words_follow_the_codes_and_the_seek_limit() -> None:
    assert error_text(ErrorCode.SEEK_LIMIT, "x") == (
        f"You can only have {MAX_SEEKS_PER_PLAYER} active seeks."
    )
    assert error_text("not_a_code", "the hub's words") == "the hub's words"


def _error_code_literals(path: Path) -> list[tuple[int, str]]:
    """String constants spelling an error code, where they are passed as one: the first argument
    of a call (``CommandError("busy", ...)``) or compared with ``==`` / ``in``."""
    codes = {code.value for code in ErrorCode}
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        candidates: list[ast.expr] = []
        if isinstance(node, ast.Call):
            candidates += node.args[:2]
            candidates += [k.value for k in node.keywords if k.arg in ("code", "refusal")]
        elif isinstance(node, ast.Compare):
            candidates += [node.left, *node.comparators]
            for side in node.comparators:
                if isinstance(side, ast.Tuple | ast.Set | ast.List):
                    candidates += side.elts
        found += [
            (c.lineno, c.value)
            for c in candidates
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in codes
        ]
    return found


def test_no_error_code_is_spelled_as_a_string_literal() -> None:
    """Hub, transport, ICS and cluster name error codes through :class:`ErrorCode` only."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for package in ("hub", "transport", "cluster", "app", "store", "bus")
        for path in sorted((ROOT / "server" / package).rglob("*.py"))
        if path.name != "errors.py"
        for line, value in _error_code_literals(path)
    ]
    assert offenders == []


def test_protocol_message_table_lists_exactly_the_message_kinds() -> None:
    documented = _first_column_words(_section("Messages"))
    defined = set(message_kinds().values())
    assert documented - defined == set(), "documented kinds missing from MessageKind"
    assert defined - documented == set(), "MessageKind members missing from docs/protocol.md"


def test_every_message_kind_has_one_payload_schema() -> None:
    """Each kind a client can receive has its payload TypedDict (the bus-only ``game_end`` has
    its notice type instead); web/src/protocol.gen.ts is generated from the same table."""
    assert set(PAYLOADS) == set(message_kinds().values()) - {"game_end"}


def test_ics_renders_only_message_kinds() -> None:
    handled = {
        name.removeprefix("_on_") for name in dir(MessageRenderer) if name.startswith("_on_")
    }
    assert handled <= set(message_kinds().values())


def _message_kind_literals(path: Path) -> list[tuple[int, str]]:
    """String constants spelling a message kind where a message is built (``Message("move", ...)``,
    a room's ``_emit``, the lobby's ``_lobby``) or its ``t`` compared."""
    kinds = set(message_kinds().values())
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        candidates: list[ast.expr] = []
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in ("Message", "_emit", "_lobby") and node.args:
                candidates.append(node.args[0])
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "t" for s in sides):
                candidates += sides
        found += [
            (c.lineno, c.value)
            for c in candidates
            if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value in kinds
        ]
    return found


def test_no_message_kind_is_spelled_as_a_string_literal() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for package in ("hub", "transport", "cluster", "app")
        for path in sorted((ROOT / "server" / package).rglob("*.py"))
        if path.name != "messages.py"
        for line, value in _message_kind_literals(path)
    ]
    assert offenders == []


_STAND_INS: dict[str, object] = {
    "string": "g1",
    "integer": 1,
    "boolean": True,
    "time_control": {"kind": "fischer", "base_s": 60, "inc_s": 0},
    "rating_range": [0, 4000],
    "move_lines": [["e7e5", "g1f3"]],
    "move_list": ["e7e5"],
}


def test_command_schemas_are_the_parsers_own() -> None:
    """A payload holding every field of a command's schema parses (unknown fields would be
    refused), and one without a required field does not."""
    for kind in sorted(COMMAND_TYPES):
        schema = command_schema(kind)
        payload = {
            spec.name: spec.options[0] if spec.kind == "choice" else _STAND_INS[spec.kind]
            for spec in schema
        }
        parse_command({"t": kind, "d": payload})
        for spec in schema:
            if spec.required:
                with pytest.raises(ProtocolError, match=spec.name):
                    parse_command(
                        {"t": kind, "d": {k: v for k, v in payload.items() if k != spec.name}}
                    )


def test_generated_typescript_is_fresh() -> None:
    spec = importlib.util.spec_from_file_location("gen_types", ROOT / "scripts" / "gen_types.py")
    assert spec is not None and spec.loader is not None
    gen_types = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_types)
    assert (ROOT / "web" / "src" / "protocol.gen.ts").read_text() == gen_types.render(), (
        "web/src/protocol.gen.ts is stale: run python scripts/gen_types.py"
    )


def test_the_walks_in_architecture_md_name_real_functions() -> None:
    """Each "[file](../file) : `Class.function`" step of docs/architecture.md's walks opens a
    function that exists in that file."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    walks = text[text.index("## Three walks through the code") : text.index("## Rules engine")]
    steps = re.findall(r"\]\(\.\./([\w/.]+\.py)\)\s*:\s*`(\w+(?:\.\w+)?)`", walks)
    assert len(steps) >= 15
    for path, name in steps:
        source = (ROOT / path).read_text()
        assert f"def {name.split('.')[-1]}(" in source, f"{path} has no {name}"
        if "." in name:
            assert f"class {name.split('.')[0]}" in source, f"{path} has no {name}"


def test_every_ending_has_its_words_in_every_door() -> None:
    """One ending enum: the engine's and the server's endings are all ``Termination``s, and
    every rendering of an ending (PGN, ICS, protocol.md) knows each of them."""
    from server.rules.export.pgn import _ENDING_WORDS
    from server.transport.ics.review import _END_CODES

    endings = {t.value for t in Termination}
    assert set(Termination) > ENGINE_TERMINATIONS
    assert set(_END_CODES) == endings
    assert set(_ENDING_WORDS) == endings - {Termination.ABORT}
    common = _section("Frames")
    documented = set(re.findall(r"`([a-z_]+)`", common[common.index("* Terminations") :][:400]))
    assert endings <= documented


def test_protocol_md_lists_the_speeds() -> None:
    from server.hub.glicko2 import SPEEDS

    line = next(x for x in PROTOCOL.read_text().splitlines() if x.startswith("* Speed:"))
    assert re.findall(r'"([a-z]+)"', line) == list(SPEEDS)


def test_side_names_are_the_rules_sides() -> None:
    from server.rules import SIDE_NAMES, Side

    assert tuple(side.name.lower() for side in Side) == SIDE_NAMES
    assert [SIDE_NAMES[side] for side in Side] == ["first", "second"]


# A character class of the game-id alphabet (digits, both cases of letters, "_" and "-").
_ID_CLASS = re.compile(r"\[(?=[^\]]*0-9)(?=[^\]]*A-Z)(?=[^\]]*a-z)(?=[^\]]*_)[^\]]*\]")


def _code_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of a module's code (f-strings' text parts too), not docstrings."""
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
    ]


def _game_id_spellings(source: str) -> list[tuple[int, str]]:
    """Code strings that spell a game id's characters where a game is meant: the text names a game (``/api/game/…``) or is assigned to a name that does."""
    tree = ast.parse(source)
    gamey: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any("game" in ast.unparse(target).lower() for target in targets):
                gamey.update(id(inner) for inner in ast.walk(node.value))
    return [
        (node.lineno, node.value)
        for node in _code_strings(tree)
        if _ID_CLASS.search(node.value) and (id(node) in gamey or "game" in node.value.lower())
    ]


def test_game_ids_are_spelled_only_in_game_ids_py() -> None:
    """Every door checks a game id with ``GAME_ID_PATTERN`` (or its length): a copy of the
    pattern drifts (the analysis paths took 32 characters where the store holds 16)."""
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        if path.name != "game_ids.py"
        for line, value in _game_id_spellings(path.read_text())
    ]
    assert offenders == []
    # The check sees the copies it is for.
    old = 'ANALYSIS_PATH = re.compile(r"/api/game/([0-9A-Za-z_-]{1,32})/analysis/?")'
    assert _game_id_spellings(old) and _game_id_spellings('_GAME = r"[0-9A-Za-z_-]+"')
    assert not _game_id_spellings('_CURSOR = re.compile(r"[0-9A-Za-z_-]{1,256}")')


def test_the_analysis_paths_take_exactly_game_ids() -> None:
    from server.hub.game_ids import GAME_ID_MAX_LENGTH, GAME_ID_PATTERN
    from server.transport.analysis_api import analysis_path_game
    from server.transport.http_api.analysis import routes

    longest = "aZ0_-" * (GAME_ID_MAX_LENGTH // 5) + "x" * (GAME_ID_MAX_LENGTH % 5)
    assert analysis_path_game(f"/api/game/{longest}/analysis") == longest
    assert analysis_path_game(f"/api/game/{longest}x/analysis") is None
    assert analysis_path_game("/api/game/a.b/analysis") is None
    paths = {getattr(route, "path", None) for route in routes}
    assert paths == {f"/api/game/{{id:{GAME_ID_PATTERN.pattern}}}/analysis"}


def _unfinished_status_lists(source: str) -> list[tuple[int, str]]:
    """String constants with an SQL ``IN (…)`` list of exactly the unfinished statuses."""
    from server.rules.record import UNFINISHED_STATUSES

    return [
        (node.lineno, node.value)
        for node in _code_strings(ast.parse(source))
        for listed in re.findall(r"\bIN\s*\(([^)]*)\)", node.value, re.IGNORECASE)
        if set(re.findall(r"'(\w+)'", listed)) == set(UNFINISHED_STATUSES)
    ]


def test_unfinished_statuses_are_spelled_only_in_the_record() -> None:
    """SQL written by hand builds its filter from ``UNFINISHED_STATUSES`` (the SQLAlchemy
    queries use ``in_(UNFINISHED_STATUSES)``): a status added there reaches every statement."""
    from server.rules.record import UNFINISHED_STATUSES
    from server.store import pg_direct

    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {value!r}"
        for path in sorted((ROOT / "server").rglob("*.py"))
        for line, value in _unfinished_status_lists(path.read_text())
    ]
    assert offenders == []
    assert _unfinished_status_lists("""X = "WHERE status in ('started', 'created')" """)
    assert re.findall(r"'(\w+)'", pg_direct.UNFINISHED) == list(UNFINISHED_STATUSES)
    for sql in (
        pg_direct.FINISH_UNRATED,
        pg_direct.ABORT,
        pg_direct.UNFINISHED_GAMES,
        pg_direct.UNFINISHED_GAMES_OF,
    ):
        assert pg_direct.UNFINISHED in sql, sql


def test_architecture_md_names_the_http_api_paths() -> None:
    """The public listener's hand-over in docs/architecture.md lists ``API_PREFIXES`` (HAProxy's
    list is checked in tests/transport/test_analysis_http.py)."""
    from server.transport.http_api.paths import API_PREFIXES

    text = (ROOT / "docs" / "architecture.md").read_text()
    start = text.index("paths under `/api/")
    listed = re.findall(r"`(/[^`]*)`", text[start : text.index("go to aiohttp", start)])
    assert sorted(listed) == sorted(API_PREFIXES)
