"""The ICS commands of playing and watching: moves, resign, abort, draw, takeback, flag, rematch, observe, unobserve, refresh, games, moves."""

from __future__ import annotations

from server.hub.commands import (
    AbortCommand,
    JoinCommand,
    LeaveCommand,
    MoveCommand,
    OfferCommand,
    ResignCommand,
)
from server.hub.errors import ErrorCode
from server.hub.messages import MessageKind
from server.rules import RulesError
from server.transport.ics.args import NO_SUCH_GAME, bad_arg, handle_arg
from server.transport.ics.games import GameView
from server.transport.ics.parse import (
    CommandLine,
    move_to_uci,
)
from server.transport.ics.state import Json, SessionState, error_text, number

ADJOURN_ANSWER = (
    "Games are not adjourned on this server: a game goes on while you are away. If you lose "
    "the connection, log in again within the reconnection grace to carry on; after it your "
    "opponent may claim the game."
)


class PlayCommands(SessionState):
    """The ICS commands of playing and watching: moves, resign, abort, draw, takeback, flag, rematch, observe, unobserve, refresh, games, moves."""

    def _move(self, game: GameView, text: str) -> None:
        try:
            uci = move_to_uci(text, game.position(), game.ics)
        except RulesError:
            self._write([f"Illegal move ({text})."])
            return
        ply = game.ply + 1

        def answer(kind: str, data: Json) -> list[str]:
            if kind != MessageKind.ERROR:
                return []
            if data.get("code") == ErrorCode.ILLEGAL_MOVE:
                return [f"Illegal move ({text})."]
            return [error_text(data.get("code", ""), data.get("message", ""))]

        self._command(lambda a: MoveCommand(game.game_id, ply, uci, ack=a), answer)

    def _cmd_resign(self, cmd: CommandLine) -> None:
        def act(game: GameView) -> None:
            # FICS's "resign <opponent>": any other word is not taken as a resignation.
            if cmd.args and cmd.args.lower() not in (
                game.white.lower(),
                game.black.lower(),
                str(game.number),
            ):
                self._write([f"You are not playing {bad_arg(cmd.args)}."])
                return
            self._command(lambda a: ResignCommand(game.game_id, ack=a), self._plain())

        self._in_game(act)

    def _cmd_abort(self, cmd: CommandLine) -> None:
        self._in_game(
            lambda g: self._command(lambda a: AbortCommand(g.game_id, ack=a), self._plain())
        )

    def _cmd_adjourn(self, cmd: CommandLine) -> None:
        # XBoard sends it for F7 ("Adjourn"); FICS stores the game for later, which a server
        # whose clocks run while a player is away has no use for.
        self._write([ADJOURN_ANSWER])

    def _offer(self, kind: str, done: str) -> None:
        def act(game: GameView) -> None:
            self._command(
                lambda a: OfferCommand(game.game_id, kind, "offer", ack=a),  # type: ignore[arg-type]
                self._plain(done),
            )

        self._in_game(act)

    def _cmd_draw(self, cmd: CommandLine) -> None:
        self._offer("draw", "Offering a draw.")

    def _cmd_takeback(self, cmd: CommandLine) -> None:
        self._offer("takeback", "Takeback request sent.")

    def _cmd_flag(self, cmd: CommandLine) -> None:
        # The hub ends a game at the exact moment a flag falls: an opponent still playing
        # is not out of time.
        self._in_game(lambda g: self._write(["Your opponent is not out of time."]))

    def _cmd_rematch(self, cmd: CommandLine) -> None:
        game_id = self.last_game
        if game_id is None:
            self._write(["You have not played a game to rematch."])
            return
        self._command(
            lambda a: OfferCommand(game_id, "rematch", "offer", ack=a),
            self._plain("Rematch request sent."),
        )

    # --- observing ------------------------------------------------------------------------------

    async def _game_of(self, arg: str) -> str | None:
        """The game a number or a player's name names (None: no such game, or no such name)."""
        game_number = number(arg)
        if game_number is not None:
            return self._host.numbers.game_id(game_number)
        name = handle_arg(arg)
        return None if name is None else await self.views.running_game_of(name)

    async def _cmd_observe(self, cmd: CommandLine) -> None:
        if not cmd.args:
            self._write(["Usage: observe <game number or player name>"])
            return
        game_id = await self._game_of(cmd.args)
        if game_id is None:
            self._write([NO_SUCH_GAME])
            return
        if game_id in self.games:
            self._write([f"You are already observing game {self._host.numbers.number(game_id)}."])
            return
        self._observing_asked.add(game_id)

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR:
                self._observing_asked.discard(game_id)
                return [NO_SUCH_GAME]
            return []

        self._command(lambda a: JoinCommand(game_id, ack=a), answer)

    def _cmd_unobserve(self, cmd: CommandLine) -> None:
        watched = [g for g in self.games.values() if g.role == "spectator"]
        if cmd.args:
            game_number = number(cmd.args)
            if game_number is None and handle_arg(cmd.args) is None:
                self._write([NO_SUCH_GAME])
                return
            named = cmd.args.lower()
            watched = [
                g
                for g in watched
                if g.number == game_number or named in (g.white.lower(), g.black.lower())
            ]
        if not watched:
            self._write(["You are not observing any games."])
            return
        for game in watched:
            del self.games[game.game_id]
            self._command(lambda a, g=game: LeaveCommand(g.game_id, ack=a))  # type: ignore[misc]
        self._write([f"Removing game {g.number} from observation list." for g in watched])

    def _cmd_refresh(self, cmd: CommandLine) -> None:
        if self.examination is not None:
            self._write(self.examination.board_lines(self._ms, self._wide))
            return
        game = self._current() or next(iter(self.games.values()), None)
        if cmd.args:  # FICS's "refresh <game>": one of the games followed here
            wanted = number(cmd.args)
            game = next((g for g in self.games.values() if g.number == wanted), None)
            if game is None or " " in cmd.args:
                self._write([NO_SUCH_GAME])
                return
        if game is None:
            self._write(["You are neither playing, observing nor examining a game."])
            return
        self._write(game.board_lines(self._ms, wide=self._wide))

    async def _cmd_games(self, cmd: CommandLine) -> None:
        self._write(await self.views.games())

    async def _cmd_moves(self, cmd: CommandLine) -> None:
        if cmd.args:
            game_id = await self._game_of(cmd.args)
            if game_id is None:
                self._write([NO_SUCH_GAME])
                return
        else:
            game_id = self.playing or next(iter(self.games), None)
        if game_id is None:
            self._write(["You are not playing or observing a game."])
            return
        self._write(
            await self.views.move_list(game_id, bool(self.vars["startpos"]), self._ms, self._wide)
        )
