"""The lobby's ICS commands: seek, unseek, sought, play, match, computer, accept, decline, withdraw,
pending."""

from __future__ import annotations

from server.hub.clock import time_control_view
from server.hub.errors import ErrorCode
from server.hub.fields import MAX_LEVEL, MAX_NAME_LENGTH, MIN_LEVEL
from server.hub.messages import MessageKind
from server.transport.ics.args import cut
from server.transport.ics.lines import (
    challenge_text,
    sought_line,
)
from server.transport.ics.parse import (
    CommandLine,
    TermsError,
    parse_terms,
)
from server.transport.ics.state import CommandHandler, Json, SessionPart, error_text, number

DEFAULT_COMPUTER_LEVEL = 1
"""The computer's level when ``computer`` names none."""


class LobbyCommands(SessionPart):
    """The lobby's ICS commands (the session's ``lobby`` part): seek, unseek, sought,
    play, match, computer, accept, decline, withdraw, pending."""

    __slots__ = ()

    def commands(self) -> dict[str, CommandHandler]:
        """The lobby's command words, each with its handler."""
        return {
            "seek": self.on_seek,
            "unseek": self.on_unseek,
            "sought": self.on_sought,
            "play": self.on_play,
            "match": self.on_match,
            "computer": self.on_computer,
            "accept": self.on_accept,
            "decline": self.on_decline,
            "withdraw": self.on_withdraw,
            "pending": self.on_pending,
        }

    def on_seek(self, cmd: CommandLine) -> None:
        try:
            terms = parse_terms(cmd.words)
        except TermsError as error:
            self.state.write([str(error)])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR:
                return [error_text(data.get("code", ""), data.get("message", ""))]
            if "seek" in data:
                return [f"Your seek has been posted with index {data['seek']}."]
            return []

        fields = {
            "variant": terms.ics.name,
            "tc": time_control_view(terms.control),
            "rated": terms.rated,
            "colour": terms.colour,
            "range": None if terms.rating_range is None else list(terms.rating_range),
            "manual": terms.manual,
        }
        self.state.command("seek", fields, answer)

    def on_unseek(self, cmd: CommandLine) -> None:
        seek_id = number(cmd.args)
        if cmd.args and seek_id is None:
            self.state.write(["Usage: unseek [index]"])
            return
        if seek_id == 0:  # no seek has it (the hub's ids start at 1)
            self.state.write([error_text(ErrorCode.NO_SUCH_SEEK, "")])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR:
                return [error_text(data.get("code", ""), data.get("message", ""))]
            removed = data.get("removed", [])
            if not removed:
                return ["You have no active seeks."]
            return [f"Your seek {n} has been removed." for n in removed]

        self.state.command("unseek", {"id": seek_id}, answer)

    def on_sought(self, cmd: CommandLine) -> None:
        if cmd.args and cmd.args.lower() != "all":  # FICS's "sought all": the same list here
            self.state.write(["Usage: sought [all]"])
            return

        def answer(kind: str, data: Json) -> list[str]:
            seeks = data.get("seeks", [])
            lines = [sought_line(seek) for seek in seeks]
            return [*lines, f"{len(seeks)} ad{'' if len(seeks) == 1 else 's'} displayed."]

        self.state.command("sought", {}, answer)

    def on_play(self, cmd: CommandLine) -> None:
        seek_id = number(cmd.args)
        if seek_id is None:
            self.state.write(['Usage: play <seek index> (see "sought").'])
            return
        if seek_id == 0:  # no seek has it (the hub's ids start at 1)
            self.state.write([error_text(ErrorCode.NO_SUCH_SEEK, "")])
            return
        self.state.command("play", {"id": seek_id}, self.state.plain())

    def on_match(self, cmd: CommandLine) -> None:
        words = cmd.words
        if not words:
            self.state.write(
                ["Usage: match <name> [time inc] [rated|unrated] [white|black] [variant]"]
            )
            return
        if len(words[0]) > MAX_NAME_LENGTH:
            self.state.write([f"{words[0][:MAX_NAME_LENGTH]}... is not logged in."])
            return
        try:
            terms = parse_terms(words[1:])
        except TermsError as error:
            self.state.write([str(error)])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind != MessageKind.ERROR:
                return []
            code = data.get("code", "")
            if code == ErrorCode.NO_SUCH_PLAYER:
                return [f"{words[0]} is not logged in."]
            if code == ErrorCode.PLAYER_BUSY:
                return [f"{words[0]} is playing a game."]
            return [error_text(code, data.get("message", ""))]

        fields = {
            "to": words[0],
            "variant": terms.ics.name,
            "tc": time_control_view(terms.control),
            "rated": terms.rated,
            "colour": terms.colour,
        }
        self.state.command("match", fields, answer)

    def on_computer(self, cmd: CommandLine) -> None:
        """``computer [level] [time inc] [white|black] [variant]``: a game against the computer
        at once (the hub's ``challenge_ai``), unrated; level 1 (weakest) to 8, default 1. A
        first number is the level when one or three numbers lead (``computer 3 5 0``)."""
        words = list(cmd.words)
        leading = 0
        while leading < len(words) and words[leading].isascii() and words[leading].isdigit():
            leading += 1
        level = DEFAULT_COMPUTER_LEVEL
        if leading in (1, 3):
            level = int(words.pop(0)) if len(words[0]) <= 2 else 0
            if not MIN_LEVEL <= level <= MAX_LEVEL:
                self.state.write([f"The computer's level is {MIN_LEVEL} to {MAX_LEVEL}."])
                return
        try:
            terms = parse_terms(words)
        except TermsError as error:
            self.state.write([str(error)])
            return
        if terms.rated or terms.rating_range is not None or terms.manual:
            self.state.write(["Games against the computer are unrated, without range or manual."])
            return

        def answer(kind: str, data: Json) -> list[str]:
            if kind == "error":
                return [error_text(data.get("code", ""), data.get("message", ""))]
            return [f"The computer (level {level}) accepts."]

        fields = {
            "variant": terms.ics.name,
            "level": level,
            "tc": time_control_view(terms.control),
            "colour": terms.colour,
        }
        self.state.command("challenge_ai", fields, answer)

    def _find_challenge(self, arg: str, incoming: bool) -> int | str:
        """The challenge an ``accept``/``decline``/``withdraw`` argument names, or an error."""
        # Newest first: a player who challenges again after a decline means the new one.
        mine = [
            c
            for c in reversed(self.state.challenges.values())
            if (c["to"]["name"] == self.state.name) == incoming
        ]
        if arg:
            challenge_id = number(arg)
            for challenge in mine:
                other = challenge["from"] if incoming else challenge["to"]
                if challenge["id"] == challenge_id or other["name"].lower() == arg.lower():
                    return int(challenge["id"])
            return f"There is no offer {'from' if incoming else 'to'} {cut(arg)}."
        if len(mine) == 1:
            return int(mine[0]["id"])
        if not mine:
            return (
                "You have no pending offers from other players."
                if incoming
                else ("You have no pending offers to other players.")
            )
        return 'You have more than one pending offer; use "pending" and give its number.'

    def on_accept(self, cmd: CommandLine) -> None:
        game = self.state.current()
        if not cmd.args and game is not None and game.game_id in self.state.offers:
            kind = self.state.offers[game.game_id]
            self.state.command(f"{kind}_accept", {"game": game.game_id}, self.state.plain())
            return
        found = self._find_challenge(cmd.args, incoming=True)
        if isinstance(found, str):
            self.state.write([found])
            return
        self.state.command("accept", {"id": found}, self.state.answered(found))

    def on_decline(self, cmd: CommandLine) -> None:
        game = self.state.current()
        if not cmd.args and game is not None and game.game_id in self.state.offers:
            kind = self.state.offers.pop(game.game_id)
            self.state.command(
                f"{kind}_decline",
                {"game": game.game_id},
                self.state.plain(f"You decline the {kind} offer."),
            )
            return
        found = self._find_challenge(cmd.args, incoming=True)
        if isinstance(found, str):
            self.state.write([found])
            return
        self.state.command("decline", {"id": found}, self.state.answered(found, "declined"))

    def on_withdraw(self, cmd: CommandLine) -> None:
        found = self._find_challenge(cmd.args, incoming=False)
        if isinstance(found, str):
            self.state.write([found])
            return
        self.state.command("withdraw", {"id": found}, self.state.answered(found, "withdrawn"))

    def on_pending(self, cmd: CommandLine) -> None:
        outgoing = [
            c for c in self.state.challenges.values() if c["from"]["name"] == self.state.name
        ]
        incoming = [c for c in self.state.challenges.values() if c["to"]["name"] == self.state.name]
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
        game = self.state.current()
        if game is not None and game.game_id in self.state.offers:
            lines.append(f"  Your opponent offers: {self.state.offers[game.game_id]}")
        lines += [
            'If you wish to accept any of these offers type "accept n"',
            'or just "accept" if there is only one offer.',
        ]
        self.state.write(lines)
