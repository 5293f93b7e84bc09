"""Check a message's payload against its schema (:data:`server.hub.messages.PAYLOADS`): what tests
run on every frame the server actually sent (``tests/transport/test_transport_payloads.py``)."""

import enum
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Union

from server.hub.messages import PAYLOADS


def payload_problems(kind: str, payload: object) -> list[str]:
    """What is wrong with ``payload`` as the ``d`` of a ``kind`` message: missing or unknown
    keys, values of the wrong type (``[]`` when it conforms). Used by tests on what the server
    actually sent."""
    schema = PAYLOADS.get(kind)
    if schema is None:
        return [f"no payload schema for message kind {kind!r}"]
    return _problems(payload, schema, "d")


def _problems(value: object, tp: Any, where: str) -> list[str]:
    if typing.is_typeddict(tp):
        return _dict_problems(value, tp, where)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        found = [_problems(value, option, where) for option in options]
        if any(not problems for problems in found):
            return []
        return [f"{where}: {value!r} is none of {tp}"] if len(found) > 1 else found[0]
    if origin is Literal:
        return [] if value in typing.get_args(tp) else [f"{where}: {value!r} not in {tp}"]
    if tp is None or tp is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list) or len(value) != len(args):
            return [f"{where}: {value!r} is not a list of {len(args)}"]
        return [p for i, v in enumerate(value) for p in _problems(v, args[i], f"{where}[{i}]")]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: {value!r} is not a list"]
        (item,) = typing.get_args(tp)
        return [p for i, v in enumerate(value) for p in _problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        if not isinstance(value, dict):
            return [f"{where}: {value!r} is not an object"]
        key_tp, item = typing.get_args(tp)
        return [
            p
            for k, v in value.items()
            for p in _problems(k, key_tp, f"{where} key") + _problems(v, item, f"{where}.{k}")
        ]
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        ok = value in {member.value for member in tp}
        return [] if ok else [f"{where}: {value!r} is not a {tp.__name__}"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{where}: {value!r} is not a boolean"]
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not an integer"]
    if tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        return [] if ok else [f"{where}: {value!r} is not a number"]
    if tp is str:
        return [] if isinstance(value, str) else [f"{where}: {value!r} is not a string"]
    raise TypeError(f"payload_problems cannot check {tp!r}")


def _dict_problems(value: object, tp: Any, where: str) -> list[str]:
    if not isinstance(value, Mapping):
        return [f"{where}: {value!r} is not an object ({tp.__name__})"]
    hints = typing.get_type_hints(tp)
    problems = [f"{where}: missing {k!r}" for k in sorted(tp.__required_keys__ - value.keys())]
    problems += [f"{where}: unknown key {k!r}" for k in sorted(value.keys() - hints.keys())]
    for key, item in value.items():
        if key in hints:
            problems += _problems(item, _unwrap(hints[key]), f"{where}.{key}")
    return problems


def _unwrap(tp: Any) -> Any:
    """``NotRequired[X]`` → ``X`` (``get_type_hints`` strips it already on 3.11; kept for
    safety when called on raw annotations)."""
    if typing.get_origin(tp) in (typing.NotRequired, typing.Required):
        return typing.get_args(tp)[0]
    return tp
