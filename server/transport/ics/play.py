"""The ICS commands of playing and watching: moves, resign, abort, adjourn, draw, takeback, flag,
rematch, observe, unobserve, refresh, games, moves; a player's own games (``mygames``) and the
one typed moves go to (``primary``)."""

from __future__ import annotations

import asyncio
import contextlib

from server.hub.errors import ErrorCode
from server.hub.messages import MessageKind
from server.hub.review_payloads import MyGameView
from server.rules import RulesError
from server.transport.ics.args import NO_SUCH_GAME, bad_arg, handle_arg
from server.transport.ics.games import GameView
from server.transport.ics.lines import kind_words
from server.transport.ics.parse import (
    CommandLine,
    move_to_uci,
)
from server.transport.ics.state import CommandHandler, Json, SessionPart, error_text, number

JOIN_WAIT_S = 10.0
"""How long ``primary`` waits for a game not followed yet to be joined (a cold one loaded)
before it reads the next line."""

ADJOURN_ANSWER = (
    "Games are not adjourned on this server: a game goes on while you are away. If you lose "
    "the connection, log in again within the reconnection grace to carry on; after it your "
    "opponent may claim the game."
)


class PlayCommands(SessionPart):
    """The ICS commands of playing and watching (the session's ``play`` part): moves
    (:meth:`move`), resign, abort, adjourn, draw, takeback, flag, rematch, observe, unobserve,
    refresh, games, moves."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        """The words of playing and watching, each with its handler."""
        return {
            "resign": self.on_resign,
            "abort": self.on_abort,
            "adjourn": self.on_adjourn,
            "draw": self.on_draw,
            "takeback": self.on_takeback,
            "flag": self.on_flag,
            "rematch": self.on_rematch,
            "observe": self.on_observe,
            "unobserve": self.on_unobserve,
            "refresh": self.on_refresh,
            "games": self.on_games,
            "moves": self.on_moves,
            "mygames": self.on_mygames,
            "primary": self.on_primary,
        }

    def move(self, game: GameView, text: str) -> None:
        """A move typed in ``game`` (coordinates, SAN or a drop): the next ply's ``MoveCommand``."""
        try:
            uci = move_to_uci(text, game.position(), game.ics)
        except RulesError:
            self.state.write([f"Illegal move ({text})."])
            return
        ply = game.ply + 1

        def answer(kind: str, data: Json) -> list[str]:
            if kind != MessageKind.ERROR:
                return []
            if data.get("code") == ErrorCode.ILLEGAL_MOVE:
                return [f"Illegal move ({text})."]
            return [error_text(data.get("code", ""), data.get("message", ""))]

        self.state.command("move", {"game": game.game_id, "ply": ply, "move": uci}, answer)

    def on_resign(self, cmd: CommandLine) -> None:
        def act(game: GameView) -> None:
            # FICS's "resign <opponent>": any other word is not taken as a resignation.
            if cmd.args and cmd.args.lower() not in (
                game.white.lower(),
                game.black.lower(),
                str(game.number),
            ):
                self.state.write([f"You are not playing {bad_arg(cmd.args)}."])
                return
            self.state.command("resign", {"game": game.game_id}, self.state.plain())

        self.state.in_game(act)

    def on_abort(self, cmd: CommandLine) -> None:
        self.state.in_game(
            lambda g: self.state.command("abort", {"game": g.game_id}, self.state.plain())
        )

    def on_adjourn(self, cmd: CommandLine) -> None:
        # XBoard sends it for F7 ("Adjourn"); FICS stores the game for later, which a server
        # whose clocks run while a player is away has no use for.
        self.state.write([ADJOURN_ANSWER])

    def _offer(self, kind: str, done: str) -> None:
        def act(game: GameView) -> None:
            self.state.command(f"{kind}_offer", {"game": game.game_id}, self.state.plain(done))

        self.state.in_game(act)

    def on_draw(self, cmd: CommandLine) -> None:
        self._offer("draw", "Offering a draw.")

    def on_takeback(self, cmd: CommandLine) -> None:
        self._offer("takeback", "Takeback request sent.")

    def on_flag(self, cmd: CommandLine) -> None:
        # The hub ends a game at the exact moment a flag falls: an opponent still playing
        # is not out of time.
        self.state.in_game(lambda g: self.state.write(["Your opponent is not out of time."]))

    def on_rematch(self, cmd: CommandLine) -> None:
        game_id = self.state.last_game
        if game_id is None:
            self.state.write(["You have not played a game to rematch."])
            return
        self.state.command(
            "rematch_offer", {"game": game_id}, self.state.plain("Rematch request sent.")
        )

    # --- observing ------------------------------------------------------------------------------

    async def _game_of(self, arg: str) -> str | None:
        """The game a number or a player's name names (None: no such game, or no such name)."""
        game_number = number(arg)
        if game_number is not None:
            return self.state.host.numbers.game_id(game_number)
        name = handle_arg(arg)
        return None if name is None else await self.state.views.running_game_of(name)

    async def on_observe(self, cmd: CommandLine) -> None:
        if not cmd.args:
            self.state.write(["Usage: observe <game number or player name>"])
            return
        game_id = await self._game_of(cmd.args)
        if game_id is None:
            self.state.write([NO_SUCH_GAME])
            return
        if game_id in self.state.games:
            self.state.write(
                [f"You are already observing game {self.state.host.numbers.number(game_id)}."]
            )
            return
        self.state.observing_asked.add(game_id)

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR:
                self.state.observing_asked.discard(game_id)
                return [NO_SUCH_GAME]
            return []

        self.state.command("join", {"game": game_id}, answer)

    def on_unobserve(self, cmd: CommandLine) -> None:
        watched = [g for g in self.state.games.values() if g.role == "spectator"]
        if cmd.args:
            game_number = number(cmd.args)
            if game_number is None and handle_arg(cmd.args) is None:
                self.state.write([NO_SUCH_GAME])
                return
            named = cmd.args.lower()
            watched = [
                g
                for g in watched
                if g.number == game_number or named in (g.white.lower(), g.black.lower())
            ]
        if not watched:
            self.state.write(["You are not observing any games."])
            return
        for game in watched:
            del self.state.games[game.game_id]
            self.state.command("leave", {"game": game.game_id})
        self.state.write([f"Removing game {g.number} from observation list." for g in watched])

    def on_refresh(self, cmd: CommandLine) -> None:
        if self.state.examination is not None:
            self.state.write(self.state.examination.board_lines(self.state.ms, self.state.wide))
            return
        game = self.state.current() or next(iter(self.state.games.values()), None)
        if cmd.args:  # FICS's "refresh <game>": one of the games followed here
            wanted = number(cmd.args)
            game = next((g for g in self.state.games.values() if g.number == wanted), None)
            if game is None or " " in cmd.args:
                self.state.write([NO_SUCH_GAME])
                return
        if game is None:
            self.state.write(["You are neither playing, observing nor examining a game."])
            return
        self.state.write(game.board_lines(self.state.ms, wide=self.state.wide))

    async def on_games(self, cmd: CommandLine) -> None:
        self.state.write(await self.state.views.games())

    async def on_moves(self, cmd: CommandLine) -> None:
        if cmd.args:
            game_id = await self._game_of(cmd.args)
            if game_id is None:
                self.state.write([NO_SUCH_GAME])
                return
        else:
            game_id = self.state.playing or next(iter(self.state.games), None)
        if game_id is None:
            self.state.write(["You are not playing or observing a game."])
            return
        self.state.write(
            await self.state.views.move_list(
                game_id, bool(self.state.vars["startpos"]), self.state.ms, self.state.wide
            )
        )

    # --- the player's games ---------------------------------------------------------------------

    def _mine(self) -> list[str]:
        """The player's running games: the real-time one first, then the correspondence ones."""
        state = self.state
        current = state.current()
        ids = [current.game_id] if current is not None and not current.correspondence else []
        return ids + [g for g in state.correspondence if g not in ids]

    async def on_mygames(self, cmd: CommandLine) -> None:
        """One line per running game of the player's: its number (``*`` the primary one), the
        players, the variant and clock, whose move, and the time to the deadline. A game not
        followed (a correspondence game listed at login) is described from the store's list
        (one read for them all), without loading it; its time shows once it is followed
        (``primary``)."""
        state = self.state
        mine = self._mine()
        if not mine:
            state.write(["You are not playing any games."])
            return
        listed: dict[str, MyGameView] = {}
        if any(game_id not in state.games for game_id in mine):
            entries = await state.host.my_games(str(state.player["id"]))
            listed = {entry["game"]: entry for entry in entries or ()}
        lines = [f"You are playing {len(mine)} game{'s' if len(mine) > 1 else ''}:"]
        for game_id in mine:
            number = state.host.numbers.number(game_id)
            mark = "*" if game_id == state.playing else " "
            game = state.games.get(game_id)
            if game is not None:
                lines.append(f"{mark}{number:4d} {_my_game_line(game)}")
            elif game_id in listed:
                lines.append(f"{mark}{number:4d} {_listed_line(state.name, listed[game_id])}")
            else:
                lines.append(f"{mark}{number:4d} (not listed; \"primary {number}\" shows it)")
        state.write(lines)

    async def on_primary(self, cmd: CommandLine) -> None:
        """Make one of the player's running games the primary one (FICS's ``primary``). A game
        not followed yet is joined (a cold one loaded) before the next line is read, so that a
        move typed right after lands in it."""
        state = self.state
        if not cmd.args:
            current = state.current()
            if current is None:
                state.write(["You have no primary game."])
            else:
                state.write([f"Your primary game is game {current.number}."])
            return
        wanted = number(cmd.args)
        game_id = None if wanted is None else state.host.numbers.game_id(wanted)
        if game_id is None or game_id not in self._mine():
            state.write([f"You are not playing game {bad_arg(cmd.args)}."])
            return
        state.playing = game_id
        state.write([f"Your primary game is now game {wanted}."])
        game = state.games.get(game_id)
        if game is not None:
            state.write(game.board_lines(state.ms, wide=state.wide))
            return
        joined = asyncio.get_running_loop().create_future()

        def answer(kind: str, data: Json) -> list[str]:
            if not joined.done():
                joined.set_result(None)
            return [] if kind != MessageKind.ERROR else [error_text(data.get("code", ""), data.get("message", ""))]

        state.command("join", {"game": game_id}, answer)
        with contextlib.suppress(TimeoutError):  # the board shows when it comes
            await asyncio.wait_for(joined, JOIN_WAIT_S)


def _listed_line(name: str, entry: MyGameView) -> str:
    """``alice vs bob  unrated minishogi corr/3d  your move`` (a game not followed)."""
    white, black = (name, entry["opponent"])[:: 1 if entry["side"] == "first" else -1]
    words = kind_words(entry["variant"], entry["rated"], entry["tc"])
    return f"{white} vs {black}  {words}  {'your' if entry['your_turn'] else 'their'} move"


def _my_game_line(game: GameView) -> str:
    """``alice vs bob  minishogi  corr 3d  your move, 2d 03:15 left``."""
    mine = game.my_side == int(game.position().turn)
    words = kind_words(game.ics.name, game.rated, game.tc)
    left = ""
    clocks = game.clocks
    if game.tc["kind"] != "unlimited" and clocks is not None and clocks["running"] is not None:
        ms = clocks[clocks["running"]]["ms"]
        days, rest = divmod(ms // 1000, 86_400)
        hours, rest = divmod(rest, 3600)
        left = f", {days}d {hours:02d}:{rest // 60:02d} left"
    return f"{game.white} vs {game.black}  {words}  {'your' if mine else 'their'} move{left}"
