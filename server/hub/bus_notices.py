"""What the hub publishes on the bus's ``games`` channel (docs/protocol.md), each a
``TypedDict``: a game started (``game_start``, the shape of the client's message differs) and a
game ended (``game_end``, never sent to a client). Not in
:data:`server.hub.messages.PAYLOADS`, the client-facing kinds' table.
"""

from typing import TypedDict

from server.hub.payloads import PlayerView, TermsView


class GameStartedNotice(TermsView):
    """The bus publication of a new game (channel ``games``; docs/protocol.md)."""

    game: str
    players: list[PlayerView]


class GameEndNotice(TypedDict):
    """The bus publication of a finished game (``game_end``, channel ``games``)."""

    game: str
    result: str | None
    termination: str
