"""The ICS settings and housekeeping commands: set, iset, style, alias, help, date, quit."""

from __future__ import annotations

from server.hub.commands import (
    SoughtCommand,
)
from server.transport.ics.help import help_text
from server.transport.ics.lines import (
    seek_line,
)
from server.transport.ics.parse import (
    CommandLine,
)
from server.transport.ics.state import Json, SessionState

_TRUE = frozenset({"", "1", "on", "true", "yes"})
"""The values that set a variable that is on or off (none: set it)."""
_FALSE = frozenset({"0", "off", "false", "no"})


class SettingsCommands(SessionState):
    """The ICS settings and housekeeping commands: set, iset, style, alias, help, date, quit."""

    def _cmd_set(self, cmd: CommandLine, quiet: bool = False) -> None:
        words = cmd.words
        if not words:
            self._write(["Usage: set <variable> <value>"])
            return
        name = words[0].lower()
        value = words[1] if len(words) > 1 else ""
        if name == "style":
            if value != "12":
                self._write(["Only style 12 boards are available here."])
                return
            self._write(["Style 12 set."])
            return
        if name in self.vars:
            word = value.lower()
            if word not in _TRUE and word not in _FALSE:
                self._write([f"Bad value given for variable {name}: it is 0 or 1."])
                return
            on = word in _TRUE
            self.vars[name] = int(on)
            if name == "seekinfo" and on:
                self._command(lambda a: SoughtCommand(True, ack=a), self._seekinfo_list)
            self._write([f"{name} {'set' if on else 'unset'}."])
            return
        # Other FICS variables (interface, shout, bell …) change nothing here.
        self._write([f"{name} set."])

    def _seekinfo_list(self, kind: str, data: Json) -> list[str]:
        return ["<sc>", *(seek_line(seek) for seek in data.get("seeks", []))]

    def _cmd_iset(self, cmd: CommandLine) -> None:
        self._cmd_set(cmd)

    def _cmd_style(self, cmd: CommandLine) -> None:
        self._cmd_set(CommandLine("set", f"style {cmd.args}"))

    def _cmd_alias(self, cmd: CommandLine) -> None:
        self._write(["Aliases are not kept here; the command is ignored."] if cmd.args else [])

    def _cmd_unalias(self, cmd: CommandLine) -> None:
        self._cmd_alias(cmd)

    def _cmd_help(self, cmd: CommandLine) -> None:
        self._write(help_text(cmd.args))

    def _cmd_date(self, cmd: CommandLine) -> None:
        from datetime import UTC, datetime

        self._write([f"Server time - {datetime.now(UTC):%a %b %d, %H:%M:%S UTC %Y}"])

    def _cmd_gameend(self, cmd: CommandLine) -> None:
        """Taken quietly, as FICS does: the game ended already (the ``{Game N …}`` line)."""

    async def _cmd_password(self, cmd: CommandLine) -> None:
        words = cmd.words
        if len(words) != 2 or self.change_password is None:
            self._write(["Usage: password <oldpassword> <newpassword>"])
            return
        self._write(await self.change_password(words[0], words[1]))

    def _cmd_quit(self, cmd: CommandLine) -> None:
        self._write(["Logging you out.", "Thank you for using this server."])
        self.quit = True
