"""The ICS commands about people: who, finger, say, tell, kibitz, whisper."""

from __future__ import annotations

from server.transport.ics.args import bad_handle, cut, handle_arg
from server.transport.ics.games import GameView
from server.transport.ics.lines import title_mark
from server.transport.ics.parse import (
    CommandLine,
)
from server.transport.ics.state import ListedPlayer, SessionState


def _mark(player: ListedPlayer) -> str:
    """FICS's title after a name (:func:`title_mark`)."""
    return title_mark(player.guest, player.computer or player.bot)


class PeopleCommands(SessionState):
    """The ICS commands about people: who, finger, say, tell, kibitz, whisper."""

    def _cmd_who(self, cmd: CommandLine) -> None:
        players = sorted(self._host.online(), key=lambda p: p.name.lower())
        lines = [f"{'^' if p.playing else ' '}{p.name}{_mark(p)}" for p in players]
        lines += ["", f"{len(players)} player{'' if len(players) == 1 else 's'} displayed."]
        self._write(lines)

    async def _cmd_finger(self, cmd: CommandLine) -> None:
        name = handle_arg(cmd.args) if cmd.args else self.name
        if name is None:
            self._write([bad_handle(cmd.args)])
            return
        online = {p.name.lower(): p for p in self._host.online()}
        self._write(await self.views.finger(name, online.get(name.lower())))

    def _cmd_say(self, cmd: CommandLine) -> None:
        game = self.games.get(self.playing or self.last_game or "")
        other = "" if game is None else (game.black if game.white == self.name else game.white)
        self._chat(game, cmd.args, f"(told {other})")

    def _cmd_tell(self, cmd: CommandLine) -> None:
        name, _, text = cmd.args.partition(" ")
        if not name or not text.strip():
            self._write(["Usage: tell <name> <message>"])
            return
        game = self.games.get(self.playing or self.last_game or "")
        if game is not None and name.lower() in (game.white.lower(), game.black.lower()):
            self._chat(game, text, f"(told {name})")
            return
        if self._refused_text(text.strip()):
            return
        if self._host.tell(self.name, name, text.strip()):
            self._write([f"(told {name})"])
        else:
            self._write(
                [f"{cut(name)} is not logged in (tells reach ICS users and your opponent)."]
            )

    def _watched(self) -> GameView | None:
        return self._current() or next(
            (g for g in self.games.values() if g.role == "spectator"), None
        )

    def _cmd_kibitz(self, cmd: CommandLine) -> None:
        self._chat(self._watched(), cmd.args, "(kibitzed)")

    def _cmd_whisper(self, cmd: CommandLine) -> None:
        self._chat(self._watched(), cmd.args, "(whispered)")

    def tell_from(self, sender: str, text: str) -> None:
        """A ``tell`` from another ICS connection."""
        self._write([f"{sender} tells you: {text}"])
