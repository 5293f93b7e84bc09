"""The paths the HTTP API answers (the public listener chooses by them)."""

from __future__ import annotations

__all__ = ["API_PREFIXES", "answers_request", "is_api_path"]

API_PREFIXES = (
    "/api/bot/",
    "/api/stream/",
    "/api/challenge",
    "/api/account",
    "/api/user/",
    "/api/token",
    "/game/export/",
    "/fishnet/",
    "/api/game/",
    "/api/tournament",
    "/api/swiss/",
    "/swiss/",
    "/api/roundrobin",
    "/roundrobin/",
)
"""Paths answered by this application; everything else goes to the websocket server."""


def is_api_path(path: str) -> bool:
    """Whether the public listener gives a connection whose first request is for ``path`` to
    this application."""
    return path.startswith(API_PREFIXES)


def answers_request(method: str, path: str) -> bool:
    """Whether the public listener gives a connection whose first request is ``method path``
    to this application: the API's paths, and any method but GET on any path (websockets'
    server reads only GETs; this application answers the others: 404, or 405 with ``Allow``
    where the path is served by another method). ``""`` (no request line) is websockets'."""
    return is_api_path(path) or method not in ("GET", "")
