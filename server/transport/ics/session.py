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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from server.hub.commands import (
    AbortCommand,
    AcceptCommand,
    ChatCommand,
    Command,
    DeclineCommand,
    JoinCommand,
    LeaveCommand,
    MatchCommand,
    MoveCommand,
    OfferCommand,
    PlayCommand,
    ResignCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WithdrawCommand,
)
from server.rules import RulesError
from server.transport.ics.games import GameNumbers, GameView, side_index
from server.transport.ics.help import help_text
from server.transport.ics.lines import (
    challenge_text,
    creating_lines,
    end_line,
    end_reason,
    rating_text,
    seek_announcement,
    seek_line,
    sought_line,
)
from server.transport.ics.parse import (
    CommandLine,
    TermsError,
    looks_like_move,
    move_to_uci,
    parse_terms,
    split_command,
)
from server.transport.ics.review import Examination, ReviewStore, StoreViews

__all__ = ["IcsHost", "IcsSession", "OnlinePlayer"]

Json = dict[str, Any]
Handler = Callable[[str, Json], list[str]]
"""Answers a command's reply: (message type ``ack``/``error``/…, payload) -> lines."""


@dataclass(frozen=True)
class OnlinePlayer:
    name: str
    guest: bool
    playing: bool


class IcsHost(Protocol):
    """What an ICS session needs from its server process besides the hub."""

    @property
    def numbers(self) -> GameNumbers: ...

    @property
    def store(self) -> ReviewStore | None: ...

    def online(self) -> list[OnlinePlayer]: ...

    def tell(self, sender: str, name: str, text: str) -> bool:
        """Deliver a private message to an ICS connection of ``name``; False if none."""
        ...


_ERRORS = {
    "not_your_turn": "It is not your move.",
    "stale_move": "It is not your move.",
    "game_over": "The game is over.",
    "busy": "Your previous action is being saved; try again in a moment.",
    "no_such_seek": "That seek is not available.",
    "own_seek": "You cannot respond to your own seek.",
    "self_challenge": "You can't match yourself.",
    "already_playing": "You are already playing a game.",
    "seek_limit": "You can only have 3 active seeks.",
    "no_such_challenge": "There is no such offer.",
    "abort_too_late": 'It is too late to abort this game; use "resign".',
    "draw_offers_unavailable": "Draw offers are not part of this variant.",
    "not_a_player": "You are not playing a game.",
    "no_move_to_take_back": "There are no moves in your game.",
    "takeback_rated": "Takebacks are for unrated games only.",
    "guests_casual_only": "Guests may only play unrated games.",
}


def _error_text(code: str, message: str) -> str:
    return _ERRORS.get(code, message)


class IcsSession:
    """See the module docstring."""

    def __init__(
        self,
        player: Json,
        send: Callable[[Command], None],
        write: Callable[[list[str]], None],
        host: IcsHost,
    ) -> None:
        self.player = player
        self.name: str = player["name"]
        self._send = send
        self._write = write
        self._host = host
        self._acks = 0
        self._pending: dict[int, Handler] = {}
        self.games: dict[str, GameView] = {}
        self.playing: str | None = None
        self.last_game: str | None = None
        self._starting: set[str] = set()
        self._observing_asked: set[str] = set()
        self.challenges: dict[int, Json] = {}
        self.offers: dict[str, str] = {}  # game id -> kind offered to me
        self.vars: dict[str, int] = {
            "style": 12,
            "seek": 1,
            "seekinfo": 0,
            "ms": 0,
            "startpos": 0,
            "nowrap": 0,
            "lock": 0,
        }
        self.examination: Examination | None = None
        self.views = StoreViews(host.store, host.numbers)
        self.quit = False

    # ================================================================ sending

    def _command(self, make: Callable[[int], Command], handler: Handler | None = None) -> None:
        self._acks += 1
        ack = self._acks
        if handler is not None:
            self._pending[ack] = handler
        self._send(make(ack))

    def start(self) -> None:
        """After login: follow the lobby (seek announcements) like a FICS ``seek 1`` default."""
        self._command(lambda a: SoughtCommand(True, ack=a), lambda t, d: [])

    # ================================================================ lines in

    async def on_line(self, line: str) -> None:
        """One line typed by the client."""
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
        handler = getattr(self, f"_cmd_{command.name}")
        result = handler(command)
        if hasattr(result, "__await__"):
            await result

    def _move(self, game: GameView, text: str) -> None:
        try:
            uci = move_to_uci(text, game.position(), game.ics)
        except RulesError:
            self._write([f"Illegal move ({text})."])
            return
        ply = game.ply + 1

        def answer(kind: str, data: Json) -> list[str]:
            if kind != "error":
                return []
            if data.get("code") == "illegal_move":
                return [f"Illegal move ({text})."]
            return [_error_text(data.get("code", ""), data.get("message", ""))]

        self._command(lambda a: MoveCommand(game.game_id, ply, uci, ack=a), answer)

    def _plain(self, done: str = "") -> Handler:
        """A handler printing ``done`` on success and the error otherwise."""

        def answer(kind: str, data: Json) -> list[str]:
            if kind == "error":
                return [_error_text(data.get("code", ""), data.get("message", ""))]
            return [done] if done else []

        return answer

    def _current(self) -> GameView | None:
        game = self.games.get(self.playing or "")
        return game if game is not None and not game.finished else None

    # --- lobby ----------------------------------------------------------------------------------

    def _cmd_seek(self, cmd: CommandLine) -> None:
        try:
            terms = parse_terms(cmd.words)
        except TermsError as error:
            self._write([str(error)])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind == "error":
                return [_error_text(data.get("code", ""), data.get("message", ""))]
            if "seek" in data:
                return [f"Your seek has been posted with index {data['seek']}."]
            return []

        self._command(
            lambda a: SeekCommand(
                terms.ics.name,
                terms.control,
                terms.rated,
                terms.colour,
                terms.rating_range,
                terms.manual,
                ack=a,
            ),
            answer,
        )

    def _cmd_unseek(self, cmd: CommandLine) -> None:
        seek_id = _number(cmd.args)
        if cmd.args and seek_id is None:
            self._write(["Usage: unseek [index]"])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind == "error":
                return [_error_text(data.get("code", ""), data.get("message", ""))]
            removed = data.get("removed", [])
            if not removed:
                return ["You have no active seeks."]
            return [f"Your seek {n} has been removed." for n in removed]

        self._command(lambda a: UnseekCommand(seek_id, ack=a), answer)

    def _cmd_sought(self, cmd: CommandLine) -> None:
        def answer(kind: str, data: Json) -> list[str]:
            seeks = data.get("seeks", [])
            lines = [sought_line(seek) for seek in seeks]
            return [*lines, f"{len(seeks)} ad{'' if len(seeks) == 1 else 's'} displayed."]

        self._command(lambda a: SoughtCommand(None, ack=a), answer)

    def _cmd_play(self, cmd: CommandLine) -> None:
        seek_id = _number(cmd.args)
        if seek_id is None:
            self._write(['Usage: play <seek index> (see "sought").'])
            return
        self._command(lambda a: PlayCommand(seek_id, ack=a), self._plain())

    def _cmd_match(self, cmd: CommandLine) -> None:
        words = cmd.words
        if not words:
            self._write(["Usage: match <name> [time inc] [rated|unrated] [white|black] [variant]"])
            return
        try:
            terms = parse_terms(words[1:])
        except TermsError as error:
            self._write([str(error)])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind != "error":
                return []
            code = data.get("code", "")
            if code == "no_such_player":
                return [f"{words[0]} is not logged in."]
            if code == "player_busy":
                return [f"{words[0]} is playing a game."]
            return [_error_text(code, data.get("message", ""))]

        self._command(
            lambda a: MatchCommand(
                words[0], terms.ics.name, terms.control, terms.rated, terms.colour, ack=a
            ),
            answer,
        )

    def _find_challenge(self, arg: str, incoming: bool) -> int | str:
        """The challenge an ``accept``/``decline``/``withdraw`` argument names, or an error."""
        # Newest first: a player who challenges again after a decline means the new one.
        mine = [
            c
            for c in reversed(self.challenges.values())
            if (c["to"]["name"] == self.name) == incoming
        ]
        if arg:
            number = _number(arg)
            for challenge in mine:
                other = challenge["from"] if incoming else challenge["to"]
                if challenge["id"] == number or other["name"].lower() == arg.lower():
                    return int(challenge["id"])
            return f"There is no offer {'from' if incoming else 'to'} {arg}."
        if len(mine) == 1:
            return int(mine[0]["id"])
        if not mine:
            return (
                "You have no pending offers from other players."
                if incoming
                else ("You have no pending offers to other players.")
            )
        return 'You have more than one pending offer; use "pending" and give its number.'

    def _cmd_accept(self, cmd: CommandLine) -> None:
        game = self._current()
        if not cmd.args and game is not None and game.game_id in self.offers:
            kind = self.offers[game.game_id]
            self._command(
                lambda a: OfferCommand(game.game_id, kind, "accept", ack=a),  # type: ignore[arg-type]
                self._plain(),
            )
            return
        found = self._find_challenge(cmd.args, incoming=True)
        if isinstance(found, str):
            self._write([found])
            return
        self._command(lambda a: AcceptCommand(found, ack=a), self._answered(found))

    def _cmd_decline(self, cmd: CommandLine) -> None:
        game = self._current()
        if not cmd.args and game is not None and game.game_id in self.offers:
            kind = self.offers.pop(game.game_id)
            self._command(
                lambda a: OfferCommand(game.game_id, kind, "decline", ack=a),  # type: ignore[arg-type]
                self._plain(f"You decline the {kind} offer."),
            )
            return
        found = self._find_challenge(cmd.args, incoming=True)
        if isinstance(found, str):
            self._write([found])
            return
        self._command(lambda a: DeclineCommand(found, ack=a), self._answered(found, "declined"))

    def _answered(self, challenge_id: int, done: str = "") -> Handler:
        """The answer to accept/decline/withdraw: the challenge is over either way (an error
        means it was gone already)."""

        def answer(kind: str, data: Json) -> list[str]:
            challenge = self.challenges.pop(challenge_id, None)
            if kind == "error":
                return [_error_text(data.get("code", ""), data.get("message", ""))]
            if done and challenge is not None:
                return [f"Challenge {challenge_id} {done}."]
            return []

        return answer

    def _cmd_withdraw(self, cmd: CommandLine) -> None:
        found = self._find_challenge(cmd.args, incoming=False)
        if isinstance(found, str):
            self._write([found])
            return
        self._command(lambda a: WithdrawCommand(found, ack=a), self._answered(found, "withdrawn"))

    def _cmd_pending(self, cmd: CommandLine) -> None:
        outgoing = [c for c in self.challenges.values() if c["from"]["name"] == self.name]
        incoming = [c for c in self.challenges.values() if c["to"]["name"] == self.name]
        lines = ["Offers TO other players:"]
        lines += [
            f" {c['id']}: You are offering {c['to']['name']} a challenge: {challenge_text(c)}"
            for c in outgoing
        ] or ["  (none)"]
        lines += ["", "Offers FROM other players:"]
        lines += [
            f" {c['id']}: {c['from']['name']} is offering a challenge: {challenge_text(c)}"
            for c in incoming
        ] or ["  (none)"]
        game = self._current()
        if game is not None and game.game_id in self.offers:
            lines.append(f"  Your opponent offers: {self.offers[game.game_id]}")
        lines += [
            'If you wish to accept any of these offers type "accept n"',
            'or just "accept" if there is only one offer.',
        ]
        self._write(lines)

    # --- playing --------------------------------------------------------------------------------

    def _in_game(self, act: Callable[[GameView], None]) -> None:
        game = self._current()
        if game is None:
            self._write(["You are not playing a game."])
            return
        act(game)

    def _cmd_resign(self, cmd: CommandLine) -> None:
        self._in_game(
            lambda g: self._command(lambda a: ResignCommand(g.game_id, ack=a), self._plain())
        )

    def _cmd_abort(self, cmd: CommandLine) -> None:
        self._in_game(
            lambda g: self._command(lambda a: AbortCommand(g.game_id, ack=a), self._plain())
        )

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
        number = _number(arg)
        if number is not None:
            return self._host.numbers.game_id(number)
        return await self.views.running_game_of(arg)

    async def _cmd_observe(self, cmd: CommandLine) -> None:
        if not cmd.args:
            self._write(["Usage: observe <game number or player name>"])
            return
        game_id = await self._game_of(cmd.words[0])
        if game_id is None:
            self._write(["There is no such game."])
            return
        if game_id in self.games:
            self._write([f"You are already observing game {self._host.numbers.number(game_id)}."])
            return
        self._observing_asked.add(game_id)

        def answer(kind: str, data: Json) -> list[str]:
            if kind == "error":
                self._observing_asked.discard(game_id)
                return ["There is no such game."]
            return []

        self._command(lambda a: JoinCommand(game_id, ack=a), answer)

    def _cmd_unobserve(self, cmd: CommandLine) -> None:
        watched = [g for g in self.games.values() if g.role == "spectator"]
        number = _number(cmd.args)
        if number is not None:
            watched = [g for g in watched if g.number == number]
        if not watched:
            self._write(["You are not observing any games."])
            return
        for game in watched:
            del self.games[game.game_id]
            self._command(lambda a, g=game: LeaveCommand(g.game_id, ack=a))  # type: ignore[misc]
        self._write([f"Removing game {g.number} from observation list." for g in watched])

    def _cmd_refresh(self, cmd: CommandLine) -> None:
        if self.examination is not None:
            self._write(self.examination.board_lines(bool(self.vars["ms"])))
            return
        game = self._current() or next(iter(self.games.values()), None)
        if game is None:
            self._write(["You are neither playing, observing nor examining a game."])
            return
        self._write(game.board_lines(bool(self.vars["ms"])))

    async def _cmd_games(self, cmd: CommandLine) -> None:
        self._write(await self.views.games())

    async def _cmd_moves(self, cmd: CommandLine) -> None:
        game_id = await self._game_of(cmd.words[0]) if cmd.args else self.playing
        if game_id is None:
            game_id = next(iter(self.games), None)
        if game_id is None:
            self._write(["You are not playing or observing a game."])
            return
        self._write(
            await self.views.move_list(game_id, bool(self.vars["startpos"]), bool(self.vars["ms"]))
        )

    # --- people and talk ------------------------------------------------------------------------

    def _cmd_who(self, cmd: CommandLine) -> None:
        players = sorted(self._host.online(), key=lambda p: p.name.lower())
        lines = [f"{'^' if p.playing else ' '}{p.name}{'(U)' if p.guest else ''}" for p in players]
        lines += ["", f"{len(players)} player{'' if len(players) == 1 else 's'} displayed."]
        self._write(lines)

    async def _cmd_finger(self, cmd: CommandLine) -> None:
        name = cmd.words[0] if cmd.args else self.name
        online = {p.name.lower(): p for p in self._host.online()}
        self._write(await self.views.finger(name, online.get(name.lower())))

    def _chat(self, game: GameView | None, text: str, done: str) -> None:
        if game is None:
            self._write(["You are not playing or observing a game."])
            return
        if not text.strip():
            self._write(["Say what?"])
            return
        self._command(lambda a: ChatCommand(game.game_id, text[:300], ack=a), self._plain(done))

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
        if self._host.tell(self.name, name, text.strip()):
            self._write([f"(told {name})"])
        else:
            self._write([f"{name} is not logged in (tells reach ICS users and your opponent)."])

    def _watched(self) -> GameView | None:
        return self._current() or next(
            (g for g in self.games.values() if g.role == "spectator"), None
        )

    def _cmd_kibitz(self, cmd: CommandLine) -> None:
        self._chat(self._watched(), cmd.args, "(kibitzed)")

    def _cmd_whisper(self, cmd: CommandLine) -> None:
        self._chat(self._watched(), cmd.args, "(whispered)")

    # --- stored games ---------------------------------------------------------------------------

    async def _cmd_history(self, cmd: CommandLine) -> None:
        self._write(await self.views.history(cmd.words[0] if cmd.args else self.name))

    async def _cmd_smoves(self, cmd: CommandLine) -> None:
        found, problem = await self.views.stored_game_id(cmd.words, "smoves")
        if found is None:
            self._write([problem])
            return
        self._write(
            await self.views.move_list(found, bool(self.vars["startpos"]), bool(self.vars["ms"]))
        )

    async def _cmd_examine(self, cmd: CommandLine) -> None:
        if self._current() is not None:
            self._write(["You are playing a game."])
            return
        found, problem = await self.views.stored_game_id(cmd.words, "examine")
        if found is None:
            self._write([problem])
            return
        examination = await self.views.examine(found)
        if isinstance(examination, str):
            self._write([examination])
            return
        self.examination = examination
        self._write(
            [
                f"Starting to examine game {examination.number}.",
                *examination.board_lines(bool(self.vars["ms"])),
            ]
        )

    def _step(self, cmd: CommandLine, direction: int) -> None:
        if self.examination is None:
            self._write(["You are not examining a game."])
            return
        count = _number(cmd.args) or 1
        self._write(self.examination.step(direction * count, bool(self.vars["ms"])))

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

    # --- settings and the rest ------------------------------------------------------------------

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
        if name in ("seek", "seekinfo", "ms", "startpos", "nowrap", "lock"):
            on = value.lower() in ("1", "on", "true", "yes", "") if value else True
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

    def _cmd_quit(self, cmd: CommandLine) -> None:
        self._write(["Logging you out.", "Thank you for using this server."])
        self.quit = True

    # ================================================================ messages in

    def on_message(self, message: Json) -> None:
        """One hub message for this connection."""
        kind = message.get("t")
        data = message.get("d") or {}
        ack = message.get("a")
        if isinstance(ack, int) and ack in self._pending:
            self._write(self._pending.pop(ack)(str(kind), data))
            return
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(data)
        elif kind == "error":
            self._write([_error_text(data.get("code", ""), data.get("message", ""))])

    def _on_hello(self, data: Json) -> None:
        for challenge in data.get("challenges", []):
            self.challenges[challenge["id"]] = challenge
        game_id = data.get("game")
        if isinstance(game_id, str):
            self._command(lambda a: JoinCommand(game_id, ack=a), lambda t, d: [])

    def _on_seek_added(self, seek: Json) -> None:
        if self.vars["seekinfo"]:
            self._write([seek_line(seek)])
        elif self.vars["seek"] and seek["player"]["name"] != self.name:
            self._write([seek_announcement(seek)])

    def _on_seek_removed(self, data: Json) -> None:
        if self.vars["seekinfo"]:
            self._write([f"<sr> {data['id']}"])

    def _on_challenge(self, challenge: Json) -> None:
        self.challenges[challenge["id"]] = challenge
        if challenge["to"]["name"] == self.name:
            self._write(
                [
                    f"Challenge: {challenge_text(challenge)}",
                    'You can "accept" or "decline", or propose different parameters.',
                ]
            )
        else:
            self._write([f"Issuing: {challenge_text(challenge)}"])

    def _challenge_over(self, data: Json, text: Callable[[Json], str]) -> None:
        challenge = self.challenges.pop(data.get("id", -1), None)
        if challenge is not None:
            self._write([text(challenge)])

    def _on_challenge_accepted(self, data: Json) -> None:
        self._challenge_over(data, lambda c: f"{c['to']['name']} accepts the match offer.")

    def _on_challenge_declined(self, data: Json) -> None:
        self._challenge_over(data, lambda c: f"{c['to']['name']} declines the match offer.")

    def _on_challenge_withdrawn(self, data: Json) -> None:
        self._challenge_over(data, lambda c: f"{c['from']['name']} withdraws the match offer.")

    def _on_challenge_cancelled(self, data: Json) -> None:
        self._challenge_over(data, lambda c: f"Challenge {c['id']} removed.")

    def _on_game_start(self, data: Json) -> None:
        self._starting.add(data["game"])
        self.playing = data["game"]
        self.examination = None

    def _on_game(self, snapshot: Json) -> None:
        game_id = snapshot["game"]
        number = self._host.numbers.number(game_id)
        game = self.games.get(game_id)
        if game is None:
            game = self.games[game_id] = GameView.from_snapshot(snapshot, number)
        else:
            game.update_snapshot(snapshot)
        lines: list[str] = []
        if game_id in self._starting:
            self._starting.discard(game_id)
            lines += creating_lines(
                number, game.players[0], game.players[1], snapshot["variant"], game.rated, game.tc
            )
        if side_index(game.role) is not None and not game.finished:
            self.playing = game_id
        if game_id in self._observing_asked:
            self._observing_asked.discard(game_id)
            lines.append(f"You are now observing game {number}.")
            lines.append(
                f"Game {number}: {game.white} ({rating_text(game.players[0])}) "
                f"{game.black} ({rating_text(game.players[1])}) "
                f"{'rated' if game.rated else 'unrated'} {game.ics.kind}"
            )
        self._write(lines + game.board_lines(bool(self.vars["ms"])))

    def _on_move(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is None:
            return
        if event.get("side") != game.role:
            self.offers.pop(game.game_id, None)  # playing on declines an offer
        game.apply_move(event)
        self._write(game.board_lines(bool(self.vars["ms"])))

    def _on_takeback(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is None:
            return
        game.apply_takeback(event)
        removed = event.get("removed", 1)
        self._write(
            [
                f"Game {game.number}: {removed} half move(s) taken back.",
                *game.board_lines(bool(self.vars["ms"])),
            ]
        )

    def _on_end(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is None:
            return
        game.finished = True
        game.clocks = event.get("clocks", game.clocks)
        reason = end_reason(
            event.get("termination", ""), event.get("result"), game.white, game.black, game.ply
        )
        lines = [end_line(game.number, game.white, game.black, reason, event.get("result"))]
        self.offers.pop(game.game_id, None)
        if self.playing == game.game_id:
            self.playing = None
            self.last_game = game.game_id
        else:
            del self.games[game.game_id]
            lines.append(f"Removing game {game.number} from observation list.")
        self._write(lines)

    def _on_offer(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is None or game.my_side is None or event.get("side") == game.role:
            return
        opponent = game.players[1 - game.my_side]["name"]
        kind, action = event.get("kind", ""), event.get("action", "")
        if action == "offer":
            self.offers[game.game_id] = kind
            text = {
                "draw": f"{opponent} offers you a draw.",
                "takeback": f"{opponent} would like to take back a move.",
                "rematch": f"{opponent} offers you a rematch.",
            }.get(kind, f"{opponent} offers you a {kind}.")
            self._write([text, 'You can "accept" or "decline" it.'])
            return
        self.offers.pop(game.game_id, None)
        verb = {"accept": "accepts", "decline": "declines", "cancel": "withdraws"}.get(action)
        self._write([f"{opponent} {verb or action} the {kind} offer."])

    def _on_gone(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is not None and game.my_side is not None and event.get("side") != game.role:
            seconds = int(event.get("claim_in_ms", 0)) // 1000
            self._write([f"Your opponent has lost contact or quit ({seconds} s to come back)."])

    def _on_back(self, event: Json) -> None:
        game = self.games.get(event.get("game", ""))
        if game is not None and game.my_side is not None and event.get("side") != game.role:
            self._write(["Your opponent has reconnected."])

    def _on_chat(self, line: Json) -> None:
        if line.get("user") == self.name:
            return
        game = self.games.get(line.get("game", ""))
        number = game.number if game else "?"
        if line.get("room") == "players":
            self._write([f"{line.get('user')} says: {line.get('text')}"])
        else:
            self._write([f"{line.get('user')}[{number}] kibitzes: {line.get('text')}"])

    def _on_degraded(self, data: Json) -> None:
        if data.get("on"):
            self._write(["The server is running with reduced service; games go on."])

    def tell_from(self, sender: str, text: str) -> None:
        """A ``tell`` from another ICS connection."""
        self._write([f"{sender} tells you: {text}"])


def _number(text: str) -> int | None:
    word = text.strip().split(" ")[0] if text.strip() else ""
    return int(word) if word.isdigit() and len(word) <= 12 else None
