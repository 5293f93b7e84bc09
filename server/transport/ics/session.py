"""One logged-in ICS connection: FICS command lines in, hub commands out; hub messages in, FICS
text out.

The session holds no socket. It is given three things: ``send`` (run a hub command for this
connection; the answer comes back later as a message carrying the command's ack id), ``write``
(lines of text for the client) and an :class:`IcsHost` (what the server process knows besides
the hub: the game numbers, who is online, the store for listings and reviews, other ICS
connections for ``tell``). :meth:`IcsSession.on_line` reads one typed line;
:meth:`IcsSession.on_message` turns one hub message (the decoded JSON object the websocket
would carry) into FICS text. Text per command and message: docs/ics.md.

The session is its parts, each holding the one :class:`SessionState` (who, the followed games,
pending answers, the variables, how a command is sent): ``lobby``, ``play``, ``people``,
``stored``, ``settings``, ``tournaments`` answer command words, ``render`` turns hub messages into text. No part
imports another (an import-linter contract); a command word reaches the part that answers it
through one table, built here from each part's ``commands()``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from server.hub.commands import Command
from server.hub.payloads import PlayerView
from server.transport.ics.args import TAKES_NO_ARGUMENT
from server.transport.ics.help import usage
from server.transport.ics.lobby import LobbyCommands
from server.transport.ics.online import ListedPlayer
from server.transport.ics.parse import (
    looks_like_move,
    split_command,
)
from server.transport.ics.people import PeopleCommands
from server.transport.ics.play import PlayCommands
from server.transport.ics.render import MessageRenderer
from server.transport.ics.settings import SettingsCommands
from server.transport.ics.state import CommandHandler, IcsHost, Json, SessionState
from server.transport.ics.stored import StoredCommands
from server.transport.ics.tournaments import TournamentCommands

__all__ = ["IcsHost", "IcsSession", "ListedPlayer"]

logger = logging.getLogger(__name__)


class IcsSession:
    """See the module docstring."""

    __slots__ = (
        "_commands",
        "lobby",
        "people",
        "play",
        "render",
        "settings",
        "state",
        "stored",
        "tournaments",
    )

    def __init__(
        self,
        player: PlayerView,
        send: Callable[[Command], None],
        write: Callable[[list[str]], None],
        host: IcsHost,
    ) -> None:
        self.state = SessionState(player, send, write, host)
        self.lobby = LobbyCommands(self.state)
        self.play = PlayCommands(self.state)
        self.people = PeopleCommands(self.state)
        self.stored = StoredCommands(self.state)
        self.settings = SettingsCommands(self.state)
        self.tournaments = TournamentCommands(self.state)
        self.render = MessageRenderer(self.state)
        self._commands: dict[str, CommandHandler] = {}
        """Every command word (``parse.COMMANDS`` and ``parse.QUIET``) -> its part's handler."""
        parts = (self.lobby, self.play, self.people, self.stored, self.settings, self.tournaments)
        for part in parts:
            self._commands.update(part.commands())

    @property
    def commands(self) -> dict[str, CommandHandler]:
        """The dispatch table: each command word with the handler of the part answering it."""
        return self._commands

    @property
    def quit(self) -> bool:
        """Whether the client asked to log out (``quit``)."""
        return self.state.quit

    @property
    def change_password(self) -> Callable[[str, str], Awaitable[list[str]]] | None:
        """Given by the connection: give the player a new password (old, new); the lines to
        write."""
        return self.state.change_password

    @change_password.setter
    def change_password(self, change: Callable[[str, str], Awaitable[list[str]]] | None) -> None:
        self.state.change_password = change

    def start(self) -> None:
        """After login: follow the lobby (seek announcements) like a FICS ``seek 1`` default."""
        self.state.command("sought", {"watch": True}, lambda t, d: [])

    def on_message(self, message: Json) -> None:
        """One hub message for this connection (:meth:`MessageRenderer.on_message`)."""
        self.render.on_message(message)

    def tell_from(self, sender: str, text: str) -> None:
        """A ``tell`` from another ICS connection."""
        self.people.tell_from(sender, text)

    async def on_line(self, line: str) -> None:
        """One line typed by the client (the first after login shows a game running at login,
        once this read's lines are all done: :data:`~server.transport.ics.render.RESUME_WAIT_S`)."""
        state = self.state
        if state.resume is not None:
            state.host.later(0.0, self.render.resume_game)
        text = line.strip().lstrip("$@").strip()
        if not text:
            return
        game = state.games.get(state.playing or "")
        word = text.split()[0]
        if game is not None and not game.finished and looks_like_move(word) and " " not in text:
            self.play.move(game, text)
            return
        if state.examination is not None and looks_like_move(word) and " " not in text:
            state.write(['You can only step through a stored game here: "forward", "backward".'])
            return
        command = split_command(text)
        if isinstance(command, str):
            if looks_like_move(word):
                command = "You are not playing a game."
            state.write([command])
            return
        if command.name in TAKES_NO_ARGUMENT and command.args:
            state.write([f"Usage: {usage(command.name)}"])
            return
        handler = self._commands[command.name]
        try:
            result = handler(command)
            if result is not None:
                await result
        except Exception:
            # A store that cannot be read (history, games …) or a bug: say so, keep the line.
            logger.exception("ICS command %r failed", command.name)
            state.write([f"{command.name}: the server could not do that just now; try again."])
