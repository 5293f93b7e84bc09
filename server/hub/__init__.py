"""The sans-I/O hub: seeks, challenges, clocks and game rooms; commands in, effects out.

No asyncio, no sockets, no SQL: time is passed in as integer milliseconds. The transport
adapter reads frames with :func:`server.hub.incoming.read_frame`, calls
:class:`server.hub.hub.Hub` and runs the returned effects (:mod:`server.hub.effects`) in order;
see docs/protocol.md and docs/architecture.md ("Hub core").

This package module imports nothing on purpose, so that importing a light submodule (e.g.
``server.hub.glicko2`` from the store) does not load the rules engine.
"""
