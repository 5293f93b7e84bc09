"""The HTTP API on aiohttp: the lichess-compatible Bot API (docs/bots.md) and, next to it, the
engine workers' endpoints. One route module per area; :mod:`.app` builds the application and
:mod:`.runner` serves it on the public address (:mod:`server.transport.public`)."""
