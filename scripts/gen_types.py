"""Write web/src/protocol.gen.ts: the web client's types of the protocol's vocabulary, generated
from its one definition on the server.

* ``MessageKind``: every server → client ``t`` (:class:`server.hub.messages.MessageKind`);
* ``ErrorCode``: every error ``code`` (:class:`server.hub.errors.ErrorCode`);
* one interface per payload ``TypedDict`` of the modules of ``PAYLOAD_MODULES``
  (:mod:`server.hub.payloads`, :mod:`server.hub.review_payloads`,
  :mod:`server.hub.tournament_payloads`, :mod:`server.hub.bus_notices`; the same names, their
  shared parts as ``extends``), ``Payloads`` (kind → payload, :data:`server.hub.messages.PAYLOADS`)
  and ``ServerMessage``, the discriminated union of every server → client message on ``t``;
* ``Commands``: every client → server frame type with its payload, read off the hub's parsers
  (:func:`server.hub.commands.command_schema`), the auth frames (``AUTH_FRAME_FIELDS``), the
  review commands (``REVIEW_COMMAND_TYPES``) and the account commands
  (``ACCOUNT_COMMAND_TYPES``) of :mod:`server.hub.incoming` and the tournament frames
  (:mod:`server.hub.tournament_requests`); ``Answers``: the
  kind of message that answers each command positively.

Usage: ``python scripts/gen_types.py`` (writes the file) or ``--check`` (exit 1 when stale).
``tests/test_vocabulary.py`` checks the committed file is fresh.
"""

from __future__ import annotations

import ast
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from server.hub import bus_notices, payloads, review_payloads, tournament_payloads
from server.hub.commands import COMMAND_TYPES, command_schema
from server.hub.errors import ErrorCode
from server.hub.fields import FieldSpec
from server.hub.incoming import ACCOUNT_COMMAND_TYPES, AUTH_FRAME_FIELDS, REVIEW_COMMAND_TYPES
from server.hub.messages import OTHER_ANSWERS, OWN_ANSWERS, PAYLOADS, MessageKind, message_kinds
from server.hub.tournament_requests import TOURNAMENT_REQUEST_TYPES, tournament_request_schema

TARGET = Path(__file__).resolve().parents[1] / "web" / "src" / "protocol.gen.ts"

PAYLOAD_MODULES: tuple[types.ModuleType, ...] = (
    payloads,
    review_payloads,
    tournament_payloads,
    bus_notices,
)
"""The modules that define the payload types, in the order their types are written (each
module's in definition order)."""

_TS_TYPES = {
    "string": "string",
    "integer": "number",
    "boolean": "boolean",
    "time_control": "TimeControlView",
    "rating_range": "[number, number] | null",
    "move_lines": "string[][]",
    "move_list": "string[]",
}


def _union(values: list[str]) -> str:
    return "\n".join(f'  | "{value}"' for value in values)


def _field(spec: FieldSpec) -> str:
    ts = (
        " | ".join(f'"{o}"' for o in spec.options)
        if spec.kind == "choice"
        else _TS_TYPES[spec.kind]
    )
    return f"{spec.name}{'' if spec.required else '?'}: {ts}"


def _payload(fields: list[str]) -> str:
    return "{ " + "; ".join(fields) + " }" if fields else "Record<string, never>"


_ALIASES = {
    "SideName": payloads.SideName,
    "ColourName": payloads.ColourName,
    "TimeControlView": payloads.TimeControlView,
}
"""The named unions of the payloads (all of :mod:`server.hub.payloads`): written once, referred
to by name."""

_SCALARS = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}


def _ts(tp: Any, alias: bool = True) -> str:
    """The TypeScript spelling of a payload type annotation."""
    if alias:
        for name, value in _ALIASES.items():
            if tp == value:
                return name
    if typing.is_typeddict(tp) or tp is ErrorCode:
        return str(tp.__name__)
    if tp in _SCALARS:
        return _SCALARS[tp]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (Union, types.UnionType):
        return " | ".join(_ts(arg) for arg in args)
    if origin is Literal:
        return " | ".join(f'"{arg}"' for arg in args)
    if origin is tuple:
        return "[" + ", ".join(_ts(arg) for arg in args) + "]"
    if origin is list:
        item = _ts(args[0])
        return f"({item})[]" if " | " in item else f"{item}[]"
    if origin is dict:
        return f"Record<{_ts(args[0])}, {_ts(args[1])}>"
    raise TypeError(f"gen_types: no TypeScript for {tp!r}")


def _typeddict_bases() -> dict[str, list[Any]]:
    """Each payload class's TypedDict bases, by the class's name (read off the source of the
    module defining it: Python 3.11 keeps no trace of a TypedDict's bases on the class)."""
    bases: dict[str, list[Any]] = {}
    for module in PAYLOAD_MODULES:
        for node in ast.parse(inspect.getsource(module)).body:
            if isinstance(node, ast.ClassDef):
                found = [getattr(module, b.id) for b in node.bases if isinstance(b, ast.Name)]
                bases[node.name] = [base for base in found if typing.is_typeddict(base)]
    return bases


_BASES = _typeddict_bases()


def _interface(td: Any) -> str:
    """``export interface`` for one TypedDict: its TypedDict bases as ``extends``, its own keys
    (those no base has) as fields, the optional ones with ``?``."""
    bases = _BASES.get(td.__name__, [])
    inherited = {key for base in bases for key in typing.get_type_hints(base)}
    hints = typing.get_type_hints(td)
    own = [
        f"{key}{'' if key in td.__required_keys__ else '?'}: {_ts(tp)}"
        for key, tp in hints.items()
        if key not in inherited
    ]
    doc = (td.__doc__ or "").strip().replace("``", "`")
    head = (
        f"/** {' '.join(doc.split())} */\n" if doc and not doc.startswith(td.__name__ + "(") else ""
    )
    extends = f" extends {', '.join(b.__name__ for b in bases)}" if bases else ""
    if not own and not bases:
        return f"{head}export type {td.__name__} = Record<string, never>;"
    body = "".join(f"\n  {field};" for field in own)
    return f"{head}export interface {td.__name__}{extends} {{{body}{chr(10) if own else ' '}}}"


def _payload_types() -> list[str]:
    """Every alias and TypedDict of ``PAYLOAD_MODULES``, module by module in definition order;
    those they import from where they are built (such as the analysis views of
    :mod:`server.rules.analysis`) first."""
    defining = {module.__name__ for module in PAYLOAD_MODULES}
    imported: dict[str, str] = {}
    defined: dict[str, str] = {}
    for module in PAYLOAD_MODULES:
        for name, value in vars(module).items():
            if name in _ALIASES:
                defined.setdefault(name, f"export type {name} = {_ts(value, alias=False)};")
            elif typing.is_typeddict(value) and value.__module__.startswith("server."):
                if value.__module__ not in defining:
                    imported.setdefault(name, _interface(value))
                elif value.__module__ == module.__name__:
                    defined[name] = _interface(value)
    return [*imported.values(), *defined.values()]


_ACCOUNT_COMMANDS = {
    "my_games": "Record<string, never>",
    "mail_settings": "{ email?: string; opt_in?: boolean; forget?: boolean }",
}
"""The payloads of ``ACCOUNT_COMMAND_TYPES`` (read in ``server.hub.incoming._account_frame``)."""
assert set(_ACCOUNT_COMMANDS) == ACCOUNT_COMMAND_TYPES


def _answers() -> dict[str, str]:
    """The kind of message that answers each command when it succeeds: ``ack``, or the message
    of its own name (``OWN_ANSWERS``); a login ``welcome``, ``ping`` ``pong``."""
    answers = {
        kind: kind if kind in OWN_ANSWERS else MessageKind.ACK
        for kind in sorted(COMMAND_TYPES)
    }
    for kind in sorted(AUTH_FRAME_FIELDS):
        answers[kind] = {"ping": MessageKind.PONG, "logout": MessageKind.ACK}.get(
            kind, MessageKind.WELCOME
        )
    for kind in sorted(REVIEW_COMMAND_TYPES | ACCOUNT_COMMAND_TYPES):
        assert kind in OWN_ANSWERS, f"door command {kind} has no answer"
        answers[kind] = kind
    for kind in sorted(TOURNAMENT_REQUEST_TYPES):
        own = kind if kind in OWN_ANSWERS else MessageKind.ACK
        answers[kind] = OTHER_ANSWERS.get(kind, own)
    return answers


def render() -> str:
    """The text of web/src/protocol.gen.ts."""
    commands: dict[str, str] = {}
    for kind in sorted(COMMAND_TYPES):
        commands[kind] = _payload([_field(spec) for spec in command_schema(kind)])
    for kind, names in sorted(AUTH_FRAME_FIELDS.items()):
        commands[kind] = _payload([f"{name}: string" for name in names])
    for kind in sorted(REVIEW_COMMAND_TYPES):
        commands[kind] = "Record<string, string | number | null>"
    for kind in sorted(TOURNAMENT_REQUEST_TYPES):
        commands[kind] = _payload([_field(spec) for spec in tournament_request_schema(kind)])
    commands.update(_ACCOUNT_COMMANDS)
    lines = [
        "// Generated by scripts/gen_types.py from the server's one definition of the protocol",
        "// (server/hub/messages.py, the payload modules, server/hub/errors.py, server/hub/commands.py,",
        "// server/hub/incoming.py). Do not edit: run",
        "// `python scripts/gen_types.py`; tests/test_vocabulary.py checks this file is fresh.",
        "",
        "// The payload of each message (server/hub/payloads.py, review_payloads.py,",
        "// tournament_payloads.py and bus_notices.py, in that order; the analysis views they import",
        "// from server/rules/analysis.py, where they are built, come first).",
        "",
        *(f"{text}\n" for text in _payload_types()),
        "/** Every client-facing message kind's payload `d`. */",
        "export interface Payloads {",
        *(f"  {kind}: {td.__name__};" for kind, td in PAYLOADS.items()),
        "}",
        "",
        "/** Every server → client message, discriminated by `t`. */",
        "export type ServerMessage = {",
        "  [K in keyof Payloads]: { t: K; d: Payloads[K]; v?: number; a?: number | string };",
        "}[keyof Payloads];",
        "",
        "/** The message of kind `K`. */",
        "export type MessageOf<K extends keyof Payloads> = Extract<ServerMessage, { t: K }>;",
        "",
        "/** Every kind (`t`) of server → client message. */",
        "export type MessageKind =",
        _union(list(message_kinds().values())) + ";",
        "",
        "/** Every error `code` (`error` messages, HTTP error bodies). */",
        "export type ErrorCode =",
        _union([code.value for code in ErrorCode]) + ";",
        "",
        "/** Every client → server frame type and its payload `d`. */",
        "export interface Commands {",
        *(f"  {kind}: {payload};" for kind, payload in commands.items()),
        "}",
        "",
        "export type CommandKind = keyof Commands;",
        "",
        "/** The kind of message that answers each command when it succeeds (else `error`). */",
        "export interface Answers {",
        *(f'  {kind}: "{answer}";' for kind, answer in _answers().items()),
        "}",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is stale: run python scripts/gen_types.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
