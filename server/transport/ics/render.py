"""Hub messages (the JSON a websocket would carry) as FICS text for one ICS connection."""

from __future__ import annotations

from collections.abc import Callable

from server.hub.errors import ErrorCode
from server.hub.messages import MessageKind
from server.hub.payloads import (
    BackPayload,
    ChallengeAcceptedPayload,
    ChallengeEndedPayload,
    ChallengeOverPayload,
    ChallengeView,
    ChatPayload,
    DegradedPayload,
    EndPayload,
    GameSnapshot,
    GameStartPayload,
    GonePayload,
    HelloPayload,
    IdPayload,
    MovePayload,
    OfferPayload,
    SeekView,
    TakebackPayload,
)
from server.transport.ics.games import GameView, side_index
from server.transport.ics.lines import (
    challenge_text,
    computer_notice,
    continuing_line,
    creating_lines,
    end_line,
    end_reason,
    finished_game_line,
    rating_text,
    seek_announcement,
    seek_line,
)
from server.transport.ics.state import Json, SessionPart, error_text

REJOIN = frozenset({ErrorCode.NODE_UNAVAILABLE, ErrorCode.CLUSTER_UNAVAILABLE, ErrorCode.BUSY})
"""The refusals of a join while the game changes servers: join again."""
REJOIN_EVERY_S = 1.0
REJOIN_TRIES = 60
RESUME_WAIT_S = 2.0
"""A game running at login is shown (``{Game N (a vs. b) Continuing …}`` and its board) once the
client's first lines after login are read — XBoard sends its setup (``iset ms 1``, ``style 12``
…) as soon as it is logged in, and a board before it was drawn as the wrong game (a Spartan
army as chess pieces, most of them missing) with clocks in seconds — or after this long if the
client says nothing (a person at a telnet prompt)."""


class MessageRenderer(SessionPart):
    """Hub messages (the JSON a websocket would carry) as FICS text for one ICS connection: the
    session's ``render`` part. A message of kind ``k`` is rendered by its ``_on_k`` method
    (none: nothing to show)."""

    __slots__ = ()

    def on_message(self, message: Json) -> None:
        """One hub message for this connection."""
        kind = message.get("t")
        data = message.get("d") or {}
        ack = message.get("a")
        if isinstance(ack, int) and ack in self.state.pending:
            self.state.write(self.state.pending.pop(ack)(str(kind), data))
            return
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(data)
        elif kind == MessageKind.ERROR:
            self.state.write([error_text(data.get("code", ""), data.get("message", ""))])

    def _on_hello(self, data: HelloPayload) -> None:
        for challenge in data.get("challenges", []):
            self.state.challenges[challenge["id"]] = challenge
        game_id = data.get("game")
        if isinstance(game_id, str):
            self.state.resume = game_id
            self.state.host.later(RESUME_WAIT_S, self.resume_game)
        # The correspondence games are listed from login ("mygames"), not followed: each is
        # joined (and, cold, loaded) when the player makes it primary or looks at it.
        for corr_id in data.get("correspondence") or []:
            self.state.correspondence.append(corr_id)
        for challenge in data.get("challenges", []):
            if challenge["to"]["name"] == self.state.name:  # waiting since an earlier login
                self.state.write(
                    [
                        f"Challenge: {challenge_text(challenge)}",
                        'You can "accept" or "decline" it (see "pending").',
                    ]
                )

    def resume_game(self) -> None:
        """Join the game running at login, if not done yet (see :data:`RESUME_WAIT_S`)."""
        game_id, self.state.resume = self.state.resume, None
        if game_id is not None:
            self.state.resuming.add(game_id)
            self._rejoin(game_id, 0)

    def _rejoin(self, game_id: str, tries: int) -> None:
        """Join the running game ``hello`` named; again a second later while it changes
        servers (its server died and another one takes it over within seconds)."""

        def answer(kind: str, data: Json) -> list[str]:
            if kind == MessageKind.ERROR and data.get("code") in REJOIN and tries < REJOIN_TRIES:
                self.state.host.later(REJOIN_EVERY_S, lambda: self._rejoin(game_id, tries + 1))
            return []

        self.state.command("join", {"game": game_id}, answer)

    def _on_seek_added(self, seek: SeekView) -> None:
        if self.state.vars["seekinfo"]:
            self.state.write([seek_line(seek)])
        elif self.state.vars["seek"] and seek["player"]["name"] != self.state.name:
            self.state.write([seek_announcement(seek)])

    def _on_seek_removed(self, data: IdPayload) -> None:
        # FICS: "<sr> N" with seekinfo; "Ads removed: N" with seekremove for those who see
        # the announcements (XBoard's seek graph drops the dot on either line).
        if self.state.vars["seekinfo"]:
            self.state.write([f"<sr> {data['id']}"])
        elif self.state.vars["seekremove"] and self.state.vars["seek"]:
            self.state.write([f"Ads removed: {data['id']}"])

    def _on_challenge(self, challenge: ChallengeView) -> None:
        self.state.challenges[challenge["id"]] = challenge
        if challenge["to"]["name"] == self.state.name:
            self.state.write(
                [
                    f"Challenge: {challenge_text(challenge)}",
                    *computer_notice(challenge["from"]),
                    'You can "accept" or "decline", or propose different parameters.',
                ]
            )
        else:
            self.state.write(
                [f"Issuing: {challenge_text(challenge)}", *computer_notice(challenge["to"])]
            )

    def _challenge_over(
        self, data: ChallengeOverPayload, text: Callable[[ChallengeView], str]
    ) -> None:
        challenge = self.state.challenges.pop(data.get("id", -1), None)
        if challenge is not None:
            self.state.write([text(challenge)])

    def _on_challenge_accepted(self, data: ChallengeAcceptedPayload) -> None:
        self._challenge_over(data, lambda c: f"{c['to']['name']} accepts the match offer.")

    def _on_challenge_declined(self, data: ChallengeEndedPayload) -> None:
        self._challenge_over(data, lambda c: f"{c['to']['name']} declines the match offer.")

    def _on_challenge_withdrawn(self, data: IdPayload) -> None:
        self._challenge_over(data, lambda c: f"{c['from']['name']} withdraws the match offer.")

    def _on_challenge_cancelled(self, data: ChallengeEndedPayload) -> None:
        self._challenge_over(data, lambda c: f"Challenge {c['id']} removed.")

    def _on_game_start(self, data: GameStartPayload) -> None:
        self.state.starting.add(data["game"])
        if self.state.current() is None:
            self.state.playing = data["game"]
        self.state.examination = None

    def _on_game(self, snapshot: GameSnapshot) -> None:
        game_id = snapshot["game"]
        number = self.state.host.numbers.number(game_id)
        game = self.state.games.get(game_id)
        if game is None:
            game = self.state.games[game_id] = GameView.from_snapshot(snapshot, number)
            asked = self.state.resuming | self.state.observing_asked | self.state.quiet
            if (
                snapshot.get("tournament") is not None
                and side_index(game.role) is not None
                and not game.finished
                and game_id not in asked
            ):
                # A tournament game created on another hub of a cluster: joined with its
                # snapshot only (no game_start), it starts here as a match does.
                self.state.starting.add(game_id)
                if self.state.current() is None:
                    self.state.playing = game_id
        else:
            game.update_snapshot(snapshot)
        lines: list[str] = []
        if game_id in self.state.starting:
            self.state.starting.discard(game_id)
            lines += creating_lines(
                number, game.players[0], game.players[1], snapshot["variant"], game.rated, game.tc
            )
        if side_index(game.role) is not None and not game.finished:
            if not game.correspondence:
                self.state.playing = game_id  # the real-time game is the primary one
            else:
                if game_id not in self.state.correspondence:
                    self.state.correspondence.append(game_id)
                if self.state.current() is None:
                    self.state.playing = game_id
            if game_id in self.state.resuming:
                white, black = game.players
                variant, rated = snapshot["variant"], game.rated
                lines.append(continuing_line(number, white, black, variant, rated, game.tc))
        self.state.resuming.discard(game_id)
        if game_id in self.state.quiet:
            self.state.quiet.discard(game_id)
            if self.state.playing != game_id:
                return
        if game_id in self.state.observing_asked:
            self.state.observing_asked.discard(game_id)
            if game.finished:  # a finished game stays in memory a while; it is not followed
                del self.state.games[game_id]
                self.state.command("leave", {"game": game_id})
                self.state.write([finished_game_line(number, game_id, snapshot.get("result"))])
                return
            lines.append(f"You are now observing game {number}.")
            lines.append(
                f"Game {number}: {game.white} ({rating_text(game.players[0])}) "
                f"{game.black} ({rating_text(game.players[1])}) "
                f"{'rated' if game.rated else 'unrated'} {game.ics.kind}"
            )
        self.state.write(lines + game.board_lines(self.state.ms, wide=self.state.wide))

    def _on_move(self, event: MovePayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is None:
            return
        if event.get("side") != game.role:
            self.state.offers.pop(game.game_id, None)  # playing on declines an offer
        game.apply_move(event)
        self.state.write(game.board_lines(self.state.ms, wide=self.state.wide))

    def _on_takeback(self, event: TakebackPayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is None:
            return
        game.apply_takeback(event)
        removed = event.get("removed", 1)
        self.state.write(
            [
                f"Game {game.number}: {removed} half move(s) taken back.",
                *game.board_lines(self.state.ms, wide=self.state.wide),
            ]
        )

    def _on_end(self, event: EndPayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is None:
            return
        game.finished = True
        game.clocks = event.get("clocks", game.clocks)
        reason = end_reason(
            event.get("termination", ""),
            event.get("result"),
            game.white,
            game.black,
            game.ply,
            event.get("detail"),
        )
        lines = [end_line(game.number, game.white, game.black, reason, event.get("result"))]
        self.state.offers.pop(game.game_id, None)
        if game.game_id in self.state.correspondence:
            self.state.correspondence.remove(game.game_id)
        if self.state.playing == game.game_id:
            self.state.playing = None
            self.state.last_game = game.game_id
        elif game.my_side is not None:  # another of the player's games (correspondence)
            self.state.last_game = game.game_id
        else:
            del self.state.games[game.game_id]
            lines.append(f"Removing game {game.number} from observation list.")
        self.state.write(lines)

    def _on_offer(self, event: OfferPayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is None or game.my_side is None or event.get("side") == game.role:
            return
        opponent = game.players[1 - game.my_side]["name"]
        kind, action = event.get("kind", ""), event.get("action", "")
        if action == "offer":
            self.state.offers[game.game_id] = kind
            text = {
                "draw": f"{opponent} offers you a draw.",
                "takeback": f"{opponent} would like to take back a move.",
                "rematch": f"{opponent} offers you a rematch.",
            }.get(kind, f"{opponent} offers you a {kind}.")
            self.state.write([text, 'You can "accept" or "decline" it.'])
            return
        self.state.offers.pop(game.game_id, None)
        verb = {"accept": "accepts", "decline": "declines", "cancel": "withdraws"}.get(action)
        self.state.write([f"{opponent} {verb or action} the {kind} offer."])

    def _on_gone(self, event: GonePayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is not None and game.my_side is not None and event.get("side") != game.role:
            seconds = int(event.get("claim_in_ms", 0)) // 1000
            self.state.write(
                [f"Your opponent has lost contact or quit ({seconds} s to come back)."]
            )

    def _on_back(self, event: BackPayload) -> None:
        game = self.state.games.get(event.get("game", ""))
        if game is not None and game.my_side is not None and event.get("side") != game.role:
            self.state.write(["Your opponent has reconnected."])

    def _on_chat(self, line: ChatPayload) -> None:
        if line.get("user") == self.state.name:
            return
        game = self.state.games.get(line.get("game", ""))
        number = game.number if game else "?"
        if line.get("room") == "players":
            self.state.write([f"{line.get('user')} says: {line.get('text')}"])
        else:
            self.state.write([f"{line.get('user')}[{number}] kibitzes: {line.get('text')}"])

    def _on_degraded(self, data: DegradedPayload) -> None:
        if data.get("on"):
            self.state.write(["The server is running with reduced service; games go on."])
