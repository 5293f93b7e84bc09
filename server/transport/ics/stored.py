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
from server.transport.ics.state import SessionState, number
from server.transport.ics.variants import ics_variant


class StoredCommands(SessionState):
    """The ICS commands on stored games: history, smoves, examine and stepping through it."""

    async def _cmd_history(self, cmd: CommandLine) -> None:
        name = handle_arg(cmd.args) if cmd.args else self.name
        if name is None:
            self._write([bad_handle(cmd.args)])
            return
        self._write(await self.views.history(name))

    async def _cmd_smoves(self, cmd: CommandLine) -> None:
        found, problem = await self.views.stored_game_id(cmd.words, "smoves")
        if found is None:
            self._write([problem])
            return
        self._write(
            await self.views.move_list(found, bool(self.vars["startpos"]), self._ms, self._wide)
        )

    async def _cmd_analyze(self, cmd: CommandLine) -> None:
        """Request the computer analysis of a finished stored game (docs/engines.md)."""
        found, problem = await self.views.stored_game_id(cmd.words, "analyze")
        store = self._host.store
        if found is None or store is None:
            self._write([problem or "Stored games are not available."])
            return
        number = self._host.numbers.number(found)
        who = Requester(self.player["id"], self.name, bool(self.player.get("guest")))
        self._write(await request_lines(store, found, number, who))

    async def _cmd_analysis(self, cmd: CommandLine) -> None:
        """Show a stored game's analysis: its progress, the per-side summary, the plies."""
        found, problem = await self.views.stored_game_id(cmd.words, "analysis")
        store = self._host.store
        if found is None or store is None:
            self._write([problem or "Stored games are not available."])
            return
        number = self._host.numbers.number(found)
        record = await store.get_game(found)
        chess = record is not None and ics_variant(record.variant).variant.family == "chess"
        self._write(await analysis_lines(store, found, number, chess))

    async def _cmd_examine(self, cmd: CommandLine) -> None:
        if self._current() is not None:
            self._write(["You are playing a game."])
            return
        found, problem = await self.views.stored_game_id(cmd.words, "examine")
        if found is None:
            self._write([problem])
            return
        examination = await self.views.examine(found, self._host.requester(self.name))
        if isinstance(examination, str):
            self._write([examination])
            return
        self.examination = examination
        self._write(
            [
                f"Starting to examine game {examination.number}.",
                *examination.board_lines(self._ms, self._wide),
            ]
        )

    def _step(self, cmd: CommandLine, direction: int) -> None:
        if self.examination is None:
            self._write(["You are not examining a game."])
            return
        count = number(cmd.args) if cmd.args else 1
        if count is None or " " in cmd.args:
            self._write([f"Usage: {usage(cmd.name)}"])
            return
        self._write(self.examination.step(direction * count, self._ms, self._wide))

    def _cmd_forward(self, cmd: CommandLine) -> None:
        self._step(cmd, 1)

    def _cmd_backward(self, cmd: CommandLine) -> None:
        self._step(cmd, -1)

    def _cmd_revert(self, cmd: CommandLine) -> None:
        self._step(CommandLine("backward", "100000"), -1)

    def _cmd_unexamine(self, cmd: CommandLine) -> None:
        if self.examination is None:
            self._write(["You are not examining a game."])
            return
        number = self.examination.number
        self.examination = None
        self._write([f"You are no longer examining game {number}."])
