"""The ICS commands about people: who, finger, say, tell, kibitz, whisper."""

from __future__ import annotations

from server.transport.ics.args import bad_handle, cut, handle_arg
from server.transport.ics.games import GameView
from server.transport.ics.lines import title_mark
from server.transport.ics.online import ListedPlayer
from server.transport.ics.parse import (
    CommandLine,
)
from server.transport.ics.state import CommandHandler, SessionPart


def _mark(player: ListedPlayer) -> str:
    """FICS's title after a name (:func:`title_mark`)."""
    return title_mark(player.guest, player.computer or player.bot)


class PeopleCommands(SessionPart):
    """The ICS commands about people (the session's ``people`` part): who, finger,
    say, tell, kibitz, whisper; and a ``tell`` from another connection (:meth:`tell_from`)."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        """The words about people, each with its handler."""
        return {
            "who": self.on_who,
            "finger": self.on_finger,
            "say": self.on_say,
            "tell": self.on_tell,
            "kibitz": self.on_kibitz,
            "whisper": self.on_whisper,
        }

    def on_who(self, cmd: CommandLine) -> None:
        players = sorted(self.state.host.online(), key=lambda p: p.name.lower())
        lines = [f"{'^' if p.playing else ' '}{p.name}{_mark(p)}" for p in players]
        lines += ["", f"{len(players)} player{'' if len(players) == 1 else 's'} displayed."]
        self.state.write(lines)

    async def on_finger(self, cmd: CommandLine) -> None:
        name = handle_arg(cmd.args) if cmd.args else self.state.name
        if name is None:
            self.state.write([bad_handle(cmd.args)])
            return
        online = {p.name.lower(): p for p in self.state.host.online()}
        self.state.write(await self.state.views.finger(name, online.get(name.lower())))

    def on_say(self, cmd: CommandLine) -> None:
        game = self.state.games.get(self.state.playing or self.state.last_game or "")
        other = (
            "" if game is None else (game.black if game.white == self.state.name else game.white)
        )
        self.state.chat(game, cmd.args, f"(told {other})")

    def on_tell(self, cmd: CommandLine) -> None:
        name, _, text = cmd.args.partition(" ")
        if not name or not text.strip():
            self.state.write(["Usage: tell <name> <message>"])
            return
        game = self.state.games.get(self.state.playing or self.state.last_game or "")
        if game is not None and name.lower() in (game.white.lower(), game.black.lower()):
            self.state.chat(game, text, f"(told {name})")
            return
        if self.state.refused_text(text.strip()):
            return
        if self.state.host.tell(self.state.name, name, text.strip()):
            self.state.write([f"(told {name})"])
        else:
            self.state.write(
                [f"{cut(name)} is not logged in (tells reach ICS users and your opponent)."]
            )

    def _watched(self) -> GameView | None:
        return self.state.current() or next(
            (g for g in self.state.games.values() if g.role == "spectator"), None
        )

    def on_kibitz(self, cmd: CommandLine) -> None:
        self.state.chat(self._watched(), cmd.args, "(kibitzed)")

    def on_whisper(self, cmd: CommandLine) -> None:
        self.state.chat(self._watched(), cmd.args, "(whispered)")

    def tell_from(self, sender: str, text: str) -> None:
        """A ``tell`` from another ICS connection."""
        self.state.write([f"{sender} tells you: {text}"])
