"""One logged-in ICS connection: FICS command lines in, hub commands out; hub messages in, FICS
text out.

The session holds no socket. It is given three things: ``send`` (run a hub command for this
connection; the answer comes back later as a message carrying the command's ack id), ``write``
(lines of text for the client) and an :class:`IcsHost` (what the server process knows besides
the hub: the game numbers, who is online, the store for listings and reviews, other ICS
connections for ``tell``). :meth:`IcsSession.on_line` reads one typed line;
:meth:`IcsSession.on_message` turns one hub message (the decoded JSON object the websocket
would carry) into FICS text. Text per command and message: docs/ics.md.
"""

from __future__ import annotations

import logging

from server.transport.ics.args import TAKES_NO_ARGUMENT
from server.transport.ics.help import usage
from server.transport.ics.lobby import LobbyCommands
from server.transport.ics.parse import (
    looks_like_move,
    split_command,
)
from server.transport.ics.people import PeopleCommands
from server.transport.ics.play import PlayCommands
from server.transport.ics.render import MessageRenderer
from server.transport.ics.settings import SettingsCommands
from server.transport.ics.state import IcsHost, ListedPlayer
from server.transport.ics.stored import StoredCommands

__all__ = ["IcsHost", "IcsSession", "ListedPlayer"]

logger = logging.getLogger(__name__)


class IcsSession(
    LobbyCommands, PlayCommands, PeopleCommands, StoredCommands, SettingsCommands, MessageRenderer
):
    """See the module docstring."""

    async def on_line(self, line: str) -> None:
        """One line typed by the client (the first after login shows a game running at login,
        once this read's lines are all done: :data:`~server.transport.ics.render.RESUME_WAIT_S`)."""
        if self._resume is not None:
            self._host.later(0.0, self.resume_game)
        text = line.strip().lstrip("$@").strip()
        if not text:
            return
        game = self.games.get(self.playing or "")
        word = text.split()[0]
        if game is not None and not game.finished and looks_like_move(word) and " " not in text:
            self._move(game, text)
            return
        if self.examination is not None and looks_like_move(word) and " " not in text:
            self._write(['You can only step through a stored game here: "forward", "backward".'])
            return
        command = split_command(text)
        if isinstance(command, str):
            if looks_like_move(word):
                command = "You are not playing a game."
            self._write([command])
            return
        if command.name in TAKES_NO_ARGUMENT and command.args:
            self._write([f"Usage: {usage(command.name)}"])
            return
        handler = getattr(self, f"_cmd_{command.name}")
        try:
            result = handler(command)
            if hasattr(result, "__await__"):
                await result
        except Exception:
            # A store that cannot be read (history, games …) or a bug: say so, keep the line.
            logger.exception("ICS command %r failed", command.name)
            self._write([f"{command.name}: the server could not do that just now; try again."])
