"""The one open JSON type: :data:`JsonObject`.

Every JSON object whose shape the server decides has a ``TypedDict`` (the messages' payloads, by
kind in :data:`server.hub.messages.PAYLOADS`, the cluster's registry entries in
:mod:`server.cluster.lobby`, ...), and so does every object the lichess-compatible Bot API sends, in lichess's shapes
(:mod:`server.transport.http_api.lichess`). A read-only object that is one of several such types,
chosen by a value a type cannot follow, is a ``Mapping[str, object]`` (a message's payload,
``server.hub.messages.Payload``): its reader narrows what it reads.
This module lives outside the layers so that every one of them, ``rules`` and the worker
included, can name the same alias.
"""

from typing import Any

__all__ = ["JsonObject"]

JsonObject = dict[str, Any]
"""A JSON object whose shape is not fixed when it is typed, and why ``Any`` stays:

- input before validation: a frame, envelope header, request or job body, TOML table just
  decoded, which its reader then takes field by field, checking each value's type
  (``parse_command``, the cluster's envelope parser ``server.cluster.envelopes.parse_header``, the
  HTTP API's body readers, the worker's job handler, ``load_settings``), or a hub message
  decoded by one of the hub's own clients (the computer seat, the Bot API link, an ICS
  session), whose handler then takes it as its kind's payload type;
- a body that merges typed parts (a FISHNET.md job body: a job payload TypedDict spread with
  its ``work``, ``game_id`` and ``variant``).

(The store's column values have their own alias, ``server.store.schema.ColumnValues``.)

A recursive ``JsonValue`` union would force a ``cast`` or ``isinstance`` at every read of
already-checked data, on the move path too, for no safety the parsers do not already give.
"""
