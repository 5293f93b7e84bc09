"""The ICS settings and housekeeping commands: set, iset, style, alias, help, date, quit."""

from __future__ import annotations

from server.transport.ics.help import help_text
from server.transport.ics.lines import (
    seek_line,
)
from server.transport.ics.parse import (
    CommandLine,
)
from server.transport.ics.state import CommandHandler, Json, SessionPart

_TRUE = frozenset({"", "1", "on", "true", "yes"})
"""The values that set a variable that is on or off (none: set it)."""
_FALSE = frozenset({"0", "off", "false", "no"})


class SettingsCommands(SessionPart):
    """The ICS settings and housekeeping commands (the session's ``settings``
    part): set, iset, style, alias, unalias, help, date, gameend, password, quit."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        """The settings and housekeeping words, each with its handler."""
        return {
            "set": self.on_set,
            "iset": self.on_iset,
            "style": self.on_style,
            "alias": self.on_alias,
            "unalias": self.on_unalias,
            "help": self.on_help,
            "date": self.on_date,
            "gameend": self.on_gameend,
            "password": self.on_password,
            "quit": self.on_quit,
        }

    def on_set(self, cmd: CommandLine, quiet: bool = False) -> None:
        words = cmd.words
        if not words:
            self.state.write(["Usage: set <variable> <value>"])
            return
        name = words[0].lower()
        value = words[1] if len(words) > 1 else ""
        if name == "style":
            if value != "12":
                self.state.write(["Only style 12 boards are available here."])
                return
            self.state.write(["Style 12 set."])
            return
        if name in self.state.vars:
            word = value.lower()
            if word not in _TRUE and word not in _FALSE:
                self.state.write([f"Bad value given for variable {name}: it is 0 or 1."])
                return
            on = word in _TRUE
            self.state.vars[name] = int(on)
            if name == "seekinfo" and on:
                self.state.command("sought", {"watch": True}, self._seekinfo_list)
            self.state.write([f"{name} {'set' if on else 'unset'}."])
            return
        # Other FICS variables (interface, shout, bell …) change nothing here.
        self.state.write([f"{name} set."])

    def _seekinfo_list(self, kind: str, data: Json) -> list[str]:
        return ["<sc>", *(seek_line(seek) for seek in data.get("seeks", []))]

    def on_iset(self, cmd: CommandLine) -> None:
        self.on_set(cmd)

    def on_style(self, cmd: CommandLine) -> None:
        self.on_set(CommandLine("set", f"style {cmd.args}"))

    def on_alias(self, cmd: CommandLine) -> None:
        self.state.write(["Aliases are not kept here; the command is ignored."] if cmd.args else [])

    def on_unalias(self, cmd: CommandLine) -> None:
        self.on_alias(cmd)

    def on_help(self, cmd: CommandLine) -> None:
        self.state.write(help_text(cmd.args))

    def on_date(self, cmd: CommandLine) -> None:
        from datetime import UTC, datetime

        self.state.write([f"Server time - {datetime.now(UTC):%a %b %d, %H:%M:%S UTC %Y}"])

    def on_gameend(self, cmd: CommandLine) -> None:
        """Taken quietly, as FICS does: the game ended already (the ``{Game N …}`` line)."""

    async def on_password(self, cmd: CommandLine) -> None:
        words = cmd.words
        if len(words) != 2 or self.state.change_password is None:
            self.state.write(["Usage: password <oldpassword> <newpassword>"])
            return
        self.state.write(await self.state.change_password(words[0], words[1]))

    def on_quit(self, cmd: CommandLine) -> None:
        self.state.write(["Logging you out.", "Thank you for using this server."])
        self.state.quit = True
