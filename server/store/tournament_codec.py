"""The one codec of a tournament's stored values: the core's settings and events ↔ JSON objects.

A tournament is stored as its :class:`~server.hub.tournament.values.TournamentSettings` (the
``tournaments.settings`` column) and its :data:`~server.hub.tournament.values.Event` values
(one ``tournament_events.event`` each); these functions are the only way between the two
forms. An event's object names its kind in ``"type"`` (:data:`EVENT_TYPES`: ``"joined"``,
``"paired"``…) and has one key per field of its class (a ``Finished``'s ``result`` is a nested
object); the settings' object has one key per field, its ``control`` an object with a ``kind``
(``"fischer"``: ``base_ms``, ``increment_ms``; ``"byoyomi"``: ``base_ms``, ``period_ms``,
``periods``).

Every object also carries ``"layout"``: :data:`TOURNAMENT_LAYOUT`, the version of this shape
(as the end journal's ``JOURNAL_FORMAT``): rows outlive the process that wrote them, so a
reader refuses a layout it does not know instead of guessing, and a later layout's reader keeps
reading the earlier ones. A key missing from an object takes the field's default (a field added
later with a default reads old rows unchanged); an unknown key, a missing field without default
or a value of the wrong type is refused (``ValueError``).
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import MISSING, fields
from functools import cache
from typing import Any, Final, Literal, Union, get_args, get_origin, get_type_hints

from server.hub.tournament.values import (
    Bye,
    Ended,
    Event,
    Finished,
    Joined,
    Paired,
    Paused,
    Resumed,
    Started,
    TournamentGame,
    TournamentSettings,
    Withdrew,
)
from server.jsontypes import JsonObject
from server.rules.time_control import Byoyomi, Fischer, TimeControl

__all__ = [
    "EVENT_TYPES",
    "TOURNAMENT_LAYOUT",
    "event_json",
    "event_of_json",
    "settings_json",
    "settings_of_json",
]

TOURNAMENT_LAYOUT: Final = 1
"""The shape of the stored objects, written in each as ``"layout"``. Layouts read: 1."""

EVENT_TYPES: Final[Mapping[str, type[Event]]] = {
    "joined": Joined,
    "withdrew": Withdrew,
    "paused": Paused,
    "resumed": Resumed,
    "started": Started,
    "ended": Ended,
    "paired": Paired,
    "bye": Bye,
    "finished": Finished,
}
"""An event's ``"type"`` → its class (every member of ``Event``, once)."""

_TYPE_OF: Final[Mapping[type, str]] = {cls: name for name, cls in EVENT_TYPES.items()}


def settings_json(settings: TournamentSettings) -> JsonObject:
    """The stored object of ``settings`` (layout :data:`TOURNAMENT_LAYOUT`)."""
    out: JsonObject = {"layout": TOURNAMENT_LAYOUT}
    for f in fields(settings):
        value = getattr(settings, f.name)
        out[f.name] = _control_json(value) if f.name == "control" else value
    return out


def settings_of_json(data: object) -> TournamentSettings:
    """The settings a stored object holds.

    :raises ValueError: an unknown layout, an unknown or missing key, a wrong type, or settings
        the core refuses.
    """
    obj = _object(data, "settings")
    _check_layout(obj, "settings")
    return TournamentSettings(**_fields_of(TournamentSettings, obj, "settings", ("layout",)))


def event_json(event: Event) -> JsonObject:
    """The stored object of ``event``: ``{"type": …, "layout": …, <its fields>}``."""
    out: JsonObject = {"type": _TYPE_OF[type(event)], "layout": TOURNAMENT_LAYOUT}
    for f in fields(event):
        value = getattr(event, f.name)
        if isinstance(value, TournamentGame):
            value = {g.name: getattr(value, g.name) for g in fields(value)}
        out[f.name] = value
    return out


def event_of_json(data: object) -> Event:
    """The event a stored object holds.

    :raises ValueError: an unknown type or layout, an unknown or missing key, a wrong type.
    """
    obj = _object(data, "event")
    _check_layout(obj, "event")
    kind = obj.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(f"unknown tournament event type {kind!r}")
    return cls(**_fields_of(cls, obj, kind, ("type", "layout")))  # type: ignore[arg-type]


def _control_json(control: TimeControl) -> JsonObject:
    if isinstance(control, Fischer):
        return {"kind": "fischer", "base_ms": control.base_ms, "increment_ms": control.increment_ms}
    if not isinstance(control, Byoyomi):
        raise ValueError("tournaments are played on a clock, not by correspondence")
    return {
        "kind": "byoyomi",
        "base_ms": control.base_ms,
        "period_ms": control.period_ms,
        "periods": control.periods,
    }


def _control_of_json(data: object, where: str) -> TimeControl:
    obj = _object(data, where)
    kind = obj.get("kind")
    cls: type[Fischer] | type[Byoyomi]
    if kind == "fischer":
        cls = Fischer
    elif kind == "byoyomi":
        cls = Byoyomi
    else:
        raise ValueError(f"{where}: unknown clock kind {kind!r}")
    rest = {name: value for name, value in obj.items() if name != "kind"}
    return cls(**_fields_of(cls, rest, where))


def _object(data: object, where: str) -> Mapping[str, object]:
    if not isinstance(data, Mapping) or not all(isinstance(key, str) for key in data):
        raise ValueError(f"{where}: not a JSON object: {data!r}")
    return data


def _check_layout(obj: Mapping[str, object], where: str) -> None:
    layout = obj.get("layout")
    if layout != TOURNAMENT_LAYOUT or isinstance(layout, bool):
        raise ValueError(
            f"{where}: unknown layout {layout!r} (this server reads {TOURNAMENT_LAYOUT})"
        )


@cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def _fields_of(
    cls: type, obj: Mapping[str, object], where: str, envelope: tuple[str, ...] = ()
) -> dict[str, Any]:
    """The keyword arguments of ``cls`` an object holds (its ``envelope`` keys aside), each
    value checked against the field's annotation."""
    names = {f.name for f in fields(cls)}
    unknown = set(obj) - names - set(envelope)
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in obj:
            kwargs[f.name] = _decode(_hints(cls)[f.name], obj[f.name], f"{where}.{f.name}")
        elif f.default is MISSING and f.default_factory is MISSING:
            raise ValueError(f"{where}: missing {f.name!r}")
    return kwargs


def _decode(hint: Any, raw: object, where: str) -> Any:
    """``raw`` as a value of type ``hint`` (the annotations the core's values use)."""
    if hint == TimeControl:
        return _control_of_json(raw, where)
    if hint is TournamentGame:
        return TournamentGame(**_fields_of(TournamentGame, _object(raw, where), where))
    origin = get_origin(hint)
    if origin is Literal:
        if any(type(raw) is type(choice) and raw == choice for choice in get_args(hint)):
            return raw
    elif origin in (Union, types.UnionType):
        options = get_args(hint)
        if raw is None and type(None) in options:
            return None
        (other,) = (option for option in options if option is not type(None))
        return _decode(other, raw, where)
    elif hint is bool:
        if isinstance(raw, bool):
            return raw
    elif hint is int:
        if isinstance(raw, int) and not isinstance(raw, bool):
            return raw
    elif hint is float:
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            return float(raw)
    elif hint is str:
        if isinstance(raw, str):
            return raw
    else:  # a field of a type this codec does not know: a change of the core to follow here
        raise TypeError(f"{where}: no decoding for {hint!r}")
    raise ValueError(f"{where}: {raw!r} is not a {hint}")
