"""The ICS commands on stored games: history, smoves, examine and stepping through it, and
their computer analysis (analyze, analysis)."""

from __future__ import annotations

from server.transport.analysis_api import Requester
from server.transport.ics.analysis import analysis_lines, request_lines
from server.transport.ics.args import bad_handle, handle_arg
from server.transport.ics.help import usage
from server.transport.ics.parse import (
    CommandLine,
)
from server.transport.ics.state import CommandHandler, SessionPart, number
from server.transport.ics.variants import ics_variant


class StoredCommands(SessionPart):
    """The ICS commands on stored games (the session's ``stored`` part): history,
    smoves, analyze, analysis, examine and stepping through it."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        """The words on stored games, each with its handler."""
        return {
            "history": self.on_history,
            "smoves": self.on_smoves,
            "analyze": self.on_analyze,
            "analysis": self.on_analysis,
            "examine": self.on_examine,
            "forward": self.on_forward,
            "backward": self.on_backward,
            "revert": self.on_revert,
            "unexamine": self.on_unexamine,
        }

    async def on_history(self, cmd: CommandLine) -> None:
        name = handle_arg(cmd.args) if cmd.args else self.state.name
        if name is None:
            self.state.write([bad_handle(cmd.args)])
            return
        self.state.write(await self.state.views.history(name))

    async def on_smoves(self, cmd: CommandLine) -> None:
        found, problem = await self.state.views.stored_game_id(cmd.words, "smoves")
        if found is None:
            self.state.write([problem])
            return
        self.state.write(
            await self.state.views.move_list(
                found, bool(self.state.vars["startpos"]), self.state.ms, self.state.wide
            )
        )

    async def on_analyze(self, cmd: CommandLine) -> None:
        """Request the computer analysis of a finished stored game (docs/engines.md)."""
        found, problem = await self.state.views.stored_game_id(cmd.words, "analyze")
        store = self.state.host.store
        if found is None or store is None:
            self.state.write([problem or "Stored games are not available."])
            return
        number = self.state.host.numbers.number(found)
        who = Requester(
            self.state.player["id"], self.state.name, bool(self.state.player.get("guest"))
        )
        self.state.write(await request_lines(store, found, number, who))

    async def on_analysis(self, cmd: CommandLine) -> None:
        """Show a stored game's analysis: its progress, the per-side summary, the plies."""
        found, problem = await self.state.views.stored_game_id(cmd.words, "analysis")
        store = self.state.host.store
        if found is None or store is None:
            self.state.write([problem or "Stored games are not available."])
            return
        number = self.state.host.numbers.number(found)
        record = await store.get_game(found)
        chess = record is not None and ics_variant(record.variant).variant.family == "chess"
        self.state.write(await analysis_lines(store, found, number, chess))

    async def on_examine(self, cmd: CommandLine) -> None:
        if self.state.current() is not None:
            self.state.write(["You are playing a game."])
            return
        found, problem = await self.state.views.stored_game_id(cmd.words, "examine")
        if found is None:
            self.state.write([problem])
            return
        examination = await self.state.views.examine(
            found, self.state.host.requester(self.state.name)
        )
        if isinstance(examination, str):
            self.state.write([examination])
            return
        self.state.examination = examination
        self.state.write(
            [
                f"Starting to examine game {examination.number}.",
                *examination.board_lines(self.state.ms, self.state.wide),
            ]
        )

    def _step(self, cmd: CommandLine, direction: int) -> None:
        if self.state.examination is None:
            self.state.write(["You are not examining a game."])
            return
        count = number(cmd.args) if cmd.args else 1
        if count is None or " " in cmd.args:
            self.state.write([f"Usage: {usage(cmd.name)}"])
            return
        self.state.write(
            self.state.examination.step(direction * count, self.state.ms, self.state.wide)
        )

    def on_forward(self, cmd: CommandLine) -> None:
        self._step(cmd, 1)

    def on_backward(self, cmd: CommandLine) -> None:
        self._step(cmd, -1)

    def on_revert(self, cmd: CommandLine) -> None:
        self._step(CommandLine("backward", "100000"), -1)

    def on_unexamine(self, cmd: CommandLine) -> None:
        if self.state.examination is None:
            self.state.write(["You are not examining a game."])
            return
        number = self.state.examination.number
        self.state.examination = None
        self.state.write([f"You are no longer examining game {number}."])
