"""The hub's lobby commands (:class:`Lobby`, the hub's ``lobby`` part): seeks (``seek``, ``unseek``, ``sought``, ``play``), challenges
(``match``, ``accept``, ``decline``, ``withdraw``) and the ``who`` listing; a match found starts
a game.

A registered player's correspondence seeks and challenges are *stored* (their ``key`` is set):
they stay open while their players are offline, the adapter writes them to the store
(``OfferStored``/``OfferDropped``; the command that made or withdrew one is answered once its
write is reported, ``Hub.offer_written``) and gives them back after a restart
(``Hub.restore_offer``); answering one starts the game whether or not the other player is
online (docs/correspondence.md, "Seeks and challenges").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from server.hub.commands import (
    AcceptCommand,
    ChallengeAiCommand,
    DeclineCommand,
    MatchCommand,
    PlayCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WhoCommand,
    WithdrawCommand,
)
from server.hub.effects import Effect, Send
from server.hub.errors import CommandError, ErrorCode
from server.hub.hub_games import Games
from server.hub.hub_state import Connection, HubState
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import Challenge, GameTerms, Seek, first_mover, opposite
from server.hub.messages import Message, MessageKind, ack_message
from server.hub.payloads import SoughtPayload
from server.hub.who import who_view
from server.rules import VARIANT_NAMES, Variant, get_variant
from server.rules.time_control import Byoyomi, TimeControl, is_correspondence


class Lobby:
    """Seek and challenge commands (see the module docstring): the hub's ``lobby`` part. A
    match found is created by the ``games`` part."""

    __slots__ = ("games", "state")

    def __init__(self, state: HubState, games: Games) -> None:
        self.state = state
        self.games = games

    # ================================================================= seeks

    @staticmethod
    def _variant(name: str) -> Variant:
        try:
            return get_variant(name)
        except KeyError:
            raise CommandError(
                ErrorCode.UNKNOWN_VARIANT,
                f"Unknown variant {name!r}; known: {', '.join(VARIANT_NAMES)}.",
            ) from None

    @staticmethod
    def _check_terms(
        player: PlayerInfo, variant: Variant, control: TimeControl, rated: bool
    ) -> None:
        if rated and player.guest:
            raise CommandError(
                ErrorCode.GUESTS_CASUAL_ONLY,
                f"{player.name} is a guest; guests play casual games only.",
            )
        if isinstance(control, Byoyomi) and variant.family != "shogi":
            raise CommandError(
                ErrorCode.BYOYOMI_UNAVAILABLE,
                f"Byoyomi is for shogi variants; {variant.title} uses Fischer time.",
            )

    def on_seek(
        self, conn: Connection, cmd: SeekCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        info = state.info(conn)
        variant = self._variant(cmd.variant)
        self._check_terms(info, variant, cmd.control, cmd.rated)
        correspondence = is_correspondence(cmd.control)
        state.check_free(info, correspondence=correspondence)
        key = state.offer_key(info, correspondence)
        state.seeks.check_room(info.id, key is not None)
        terms = GameTerms(variant.name, cmd.control, cmd.rated)
        seek = Seek(
            state.seeks.new_id(), info, terms, cmd.colour, cmd.rating_range, cmd.manual, now, key
        )
        partner = state.seeks.find_partner(seek)
        if partner is not None and correspondence:
            try:  # the waiting player may have reached the limit since seeking
                state.check_owner_free(state.info_of(partner.player), correspondence=True)
            except CommandError:
                partner = None
        if partner is None:
            state.open_seek(seek, out)
            state.answer_after_writes(
                out, Send(conn.conn_id, ack_message(cmd.ack, {"seek": seek.id}))
            )
            return
        waiting = state.info_of(partner.player)
        pair = (waiting, info)
        first = first_mover(partner.colour, seek.colour, state.rng)
        game_id = self.games.create(
            pair[first], pair[1 - first], terms, now, out, seek_id=partner.id
        )
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    def on_unseek(
        self, conn: Connection, cmd: UnseekCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        if cmd.seek_id is None:
            removed = state.remove_seeks(conn.player_id, out)
        else:
            seek = state.seeks.get(cmd.seek_id)
            if seek is None or seek.player.id != conn.player_id:
                raise CommandError(ErrorCode.NO_SUCH_SEEK, f"You have no open seek {cmd.seek_id}.")
            state.drop_seek(seek, out)
            removed = [seek.id]
        state.answer_after_writes(
            out, Send(conn.conn_id, ack_message(cmd.ack, {"removed": removed}))
        )

    def on_sought(
        self, conn: Connection, cmd: SoughtCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        if cmd.watch is True:
            state.seek_watchers.add(conn.conn_id)
        elif cmd.watch is False:
            state.seek_watchers.discard(conn.conn_id)
        data: SoughtPayload = {
            "seeks": [s.view() for s in state.seeks.all()],
            "watching": conn.conn_id in state.seek_watchers,
        }
        out.append(Send(conn.conn_id, Message(MessageKind.SOUGHT, data, a=cmd.ack)))

    def on_who(
        self, conn: Connection, cmd: WhoCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        players = [online.info for online in state.players.values()]
        out.append(
            Send(
                conn.conn_id, Message(MessageKind.WHO, who_view(players, state.playing), a=cmd.ack)
            )
        )

    def on_play(
        self, conn: Connection, cmd: PlayCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        seek = state.seeks.get(cmd.seek_id)
        if seek is None:
            raise CommandError(ErrorCode.NO_SUCH_SEEK, f"Seek {cmd.seek_id} is no longer open.")
        info = state.info(conn)
        if seek.player.id == info.id:
            raise CommandError(ErrorCode.OWN_SEEK)
        self._check_terms(
            info, self._variant(seek.terms.variant), seek.terms.control, seek.terms.rated
        )
        correspondence = is_correspondence(seek.terms.control)
        state.check_free(info, correspondence=correspondence)
        owner = state.info_of(seek.player)  # a stored seek's owner may be offline
        state.check_owner_free(owner, correspondence=correspondence)
        if not seek.accepts(info):
            low, high = seek.rating_range or (0, 0)
            raise CommandError(
                ErrorCode.RATING_OUT_OF_RANGE,
                f"Your rating is outside the seek's range {low}-{high}.",
            )
        if seek.manual:
            challenge = self._new_challenge(
                info, owner, seek.terms, opposite(seek.colour), now, out, seek.id
            )
            out += self._announce_challenge(challenge)
            answer = Send(conn.conn_id, ack_message(cmd.ack, {"challenge": challenge.id}))
            state.answer_after_writes(out, answer)
            return
        pair = (owner, info)
        first = first_mover(seek.colour, "random", state.rng)
        game_id = self.games.create(
            pair[first], pair[1 - first], seek.terms, now, out, seek_id=seek.id
        )
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    # ========================================================= stored offers

    def restore_offer(self, offer: Seek | Challenge) -> list[Effect]:
        """See :meth:`server.hub.hub.Hub.restore_offer`."""
        if offer.key is None:
            raise ValueError("only a stored seek or challenge can be restored")
        state = self.state
        out: list[Effect] = []
        if isinstance(offer, Seek):
            state.open_seek(replace(offer, id=state.seeks.new_id()), out, restored=True)
            return out
        challenge = replace(offer, id=state.challenges.new_id(), seek_id=None)
        state.open_challenge(challenge, out, restored=True)
        out += self._announce_challenge(challenge)
        return out

    def forget_offer(self, key: str) -> list[Effect]:
        """See :meth:`server.hub.hub.Hub.forget_offer`."""
        state = self.state
        out: list[Effect] = []
        for seek in state.seeks.all():
            if seek.key == key:
                state.seeks.remove(seek.id)
                out += state.lobby_event(MessageKind.SEEK_REMOVED, {"id": seek.id})
        for challenge in state.challenges.all():
            if challenge.key == key:
                state.challenges.remove(challenge.id)
                message = Message(
                    MessageKind.CHALLENGE_CANCELLED, {"id": challenge.id, "reason": "moved"}
                )
                for party in (challenge.sender.id, challenge.target.id):
                    out += state.send_player(party, message)
        return out

    # ============================================================ challenges

    def _new_challenge(
        self,
        sender: PlayerInfo,
        target: PlayerInfo,
        terms: GameTerms,
        colour: Any,
        now: int,
        out: list[Effect],
        seek_id: int | None = None,
    ) -> Challenge:
        state = self.state
        correspondence = is_correspondence(terms.control)
        key = state.offer_key(sender, correspondence) if not target.guest else None
        state.challenges.check_room(sender.id, target.id, key is not None)
        challenge = Challenge(
            state.challenges.new_id(), sender, target, terms, colour, now, seek_id, key
        )
        state.open_challenge(challenge, out)
        return challenge

    def _announce_challenge(self, challenge: Challenge) -> list[Effect]:
        state = self.state
        message = Message(MessageKind.CHALLENGE, challenge.view())
        return state.send_player(challenge.target.id, message) + state.send_player(
            challenge.sender.id, message
        )

    def on_match(
        self,
        conn: Connection,
        cmd: MatchCommand,
        now: int,
        lag: int,
        out: list[Effect],
        offline: PlayerInfo | None = None,
        looked_up: bool = False,
    ) -> None:
        """``offline``: the target as the adapter read it from the store when no player of
        that name was online (a correspondence challenge may wait for its target);
        ``looked_up``: the adapter looked (``offline`` None: there is no such account)."""
        state = self.state
        info = state.info(conn)
        target_id = state.names.get(cmd.to.lower())
        if target_id is not None:
            target = state.players[target_id].info
        elif (
            offline is not None
            and offline.name.lower() == cmd.to.lower()
            and is_correspondence(cmd.control)
            and not (offline.guest or offline.computer)
        ):
            target = offline
        elif looked_up:
            raise CommandError(ErrorCode.NO_SUCH_PLAYER, f"There is no player named {cmd.to!r}.")
        else:
            raise CommandError(ErrorCode.NO_SUCH_PLAYER, f"No player named {cmd.to!r} is online.")
        if target.id == info.id:
            raise CommandError(ErrorCode.SELF_CHALLENGE)
        variant = self._variant(cmd.variant)
        self._check_terms(info, variant, cmd.control, cmd.rated)
        self._check_terms(target, variant, cmd.control, cmd.rated)
        correspondence = is_correspondence(cmd.control)
        state.check_free(info, correspondence=correspondence)
        state.check_free(target, yourself=False, correspondence=correspondence)
        terms = GameTerms(variant.name, cmd.control, cmd.rated)
        challenge = self._new_challenge(info, target, terms, cmd.colour, now, out)
        out += self._announce_challenge(challenge)
        answer = Send(conn.conn_id, ack_message(cmd.ack, {"challenge": challenge.id}))
        state.answer_after_writes(out, answer)

    def on_challenge_ai(
        self, conn: Connection, cmd: ChallengeAiCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        """A casual game against the computer, started at once (no challenge to accept). The
        computer's connection hears of it first (``computer_game``: the game and the level),
        then both get ``game_start`` once the game row is stored."""
        state = self.state
        info = state.info(conn)
        if info.computer:
            raise CommandError(ErrorCode.SELF_CHALLENGE)
        computer = next(
            (online.info for online in state.players.values() if online.info.computer), None
        )
        if computer is None:
            raise CommandError(ErrorCode.COMPUTER_UNAVAILABLE)
        variant = self._variant(cmd.variant)
        self._check_terms(info, variant, cmd.control, False)
        state.check_free(info, correspondence=is_correspondence(cmd.control))
        limit = state.config.max_guest_computer_games
        if info.guest and state.guest_computer_games() >= limit:
            raise CommandError(
                ErrorCode.COMPUTER_GUEST_LIMIT,
                f"{limit} guests are playing the computer already (the most at once); "
                "log in with an account to play it now, or try again later.",
            )
        terms = GameTerms(variant.name, cmd.control, False)
        pair = (info, computer)
        first = first_mover(cmd.colour, "random", state.rng)
        game_id = self.games.create(pair[first], pair[1 - first], terms, now, out)
        out += state.send_player(
            computer.id, Message(MessageKind.COMPUTER_GAME, {"game": game_id, "level": cmd.level})
        )
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    def _own_challenge(self, challenge_id: int, player_id: PlayerId, as_target: bool) -> Challenge:
        challenge = self.state.challenges.get(challenge_id)
        party = None if challenge is None else (challenge.target if as_target else challenge.sender)
        if challenge is None or party is None or party.id != player_id:
            raise CommandError(
                ErrorCode.NO_SUCH_CHALLENGE,
                f"There is no open challenge {challenge_id} {'to' if as_target else 'from'} you.",
            )
        return challenge

    def on_accept(
        self, conn: Connection, cmd: AcceptCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=True)
        target = state.info(conn)
        sender = state.info_of(challenge.sender)  # a stored challenge's sender may be offline
        correspondence = is_correspondence(challenge.terms.control)
        state.check_free(target, correspondence=correspondence)
        state.check_owner_free(sender, correspondence=correspondence)
        consumed: list[Seek | Challenge] = []
        state.drop_challenge(challenge, out, consumed)
        pair = (sender, target)
        first = first_mover(challenge.colour, "random", state.rng)
        game_id = self.games.create(
            pair[first],
            pair[1 - first],
            challenge.terms,
            now,
            out,
            seek_id=challenge.seek_id,
            consumed=consumed,
        )
        out += state.send_player(
            sender.id,
            Message(MessageKind.CHALLENGE_ACCEPTED, {"id": challenge.id, "game": game_id}),
        )
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    def on_decline(
        self, conn: Connection, cmd: DeclineCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=True)
        state.drop_challenge(challenge, out)
        message = Message(
            MessageKind.CHALLENGE_DECLINED, {"id": challenge.id, "reason": cmd.reason}
        )
        out += state.send_player(challenge.sender.id, message)
        state.answer_after_writes(
            out, Send(conn.conn_id, ack_message(cmd.ack, {"id": challenge.id}))
        )

    def on_withdraw(
        self, conn: Connection, cmd: WithdrawCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        state = self.state
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=False)
        state.drop_challenge(challenge, out)
        message = Message(MessageKind.CHALLENGE_WITHDRAWN, {"id": challenge.id})
        out += state.send_player(challenge.target.id, message)
        state.answer_after_writes(
            out, Send(conn.conn_id, ack_message(cmd.ack, {"id": challenge.id}))
        )
