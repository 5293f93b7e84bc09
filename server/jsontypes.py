"""The one open JSON type: :data:`JsonObject`.

Every JSON object whose shape the server decides has a ``TypedDict`` (the messages' payloads in
:mod:`server.hub.payloads`, the cluster's registry entries in :mod:`server.cluster.lobby`, ...).
This module lives outside the layers so that every one of them, ``rules`` and the worker
included, can name the same alias.
"""

from typing import Any

__all__ = ["JsonObject"]

JsonObject = dict[str, Any]
"""A JSON object whose shape is not fixed when it is typed, and why ``Any`` stays:

- input before validation: a frame, envelope header or request body just decoded, which the
  parser then reads field by field, checking each value's type (``parse_command``,
  the cluster's envelope handlers, the HTTP API's form and body readers);
- output in a third party's format that is built as it is written and has no schema of ours
  (the lichess-compatible Bot API events, fishnet/engine job bodies, health reports);
- rows of column values handed to SQLAlchemy, whose ``values()`` takes ``Any`` itself.

A recursive ``JsonValue`` union would force a ``cast`` or ``isinstance`` at every read of
already-checked data, on the move path too, for no safety the parsers do not already give.
"""
