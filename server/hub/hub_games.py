"""Game life cycle inside the hub (:class:`Games`, the hub's ``games`` part): creating a game
(and its row), starting it once stored, dropping it when the row cannot be written, the
bookkeeping after every room change (its timer, players freed) and evicting finished games.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.hub.bus_notices import GameStartedNotice
from server.hub.effects import Effect, GameCreated, GameId, GamePlayer, Persist, Publish, Send
from server.hub.errors import ErrorCode
from server.hub.game_ids import new_game_id
from server.hub.hub_state import HubState
from server.hub.identity import PlayerInfo
from server.hub.lobby import Challenge, GameTerms, Seek
from server.hub.messages import Message, MessageKind, error_message
from server.hub.payloads import GameStartPayload
from server.hub.persist_tokens import WriteKind
from server.hub.room import GameRoom
from server.rules import SIDES, get_variant


class Games:
    """Creating, starting, dropping and evicting games (see the module docstring): the hub's
    ``games`` part."""

    __slots__ = ("state",)

    def __init__(self, state: HubState) -> None:
        self.state = state

    def new_game_id(self) -> GameId:
        state = self.state
        while True:
            game_id = new_game_id(state.rng)
            if game_id not in state.rooms:
                return game_id

    def create(
        self,
        first: PlayerInfo,
        second: PlayerInfo,
        terms: GameTerms,
        now: int,
        out: list[Effect],
        *,
        game_id: GameId | None = None,
        seek_id: int | None = None,
        consumed: list[Seek | Challenge] | None = None,
    ) -> GameId:
        """Create a room in state ``created`` and ask the store for the game row (``game_id``:
        one chosen by the caller, a tournament's pairing; else a new one).

        A real-time game takes both players' real-time slot and withdraws all their seeks and
        challenges but the stored (correspondence) ones; a correspondence game (which a player
        may have many of) withdraws only the seek it came from (``seek_id``, if still open).
        The stored offers it answers (that seek, and ``consumed``: those the caller dropped)
        are deleted with its row (``GameCreated.consumed_offers``), open again if the row is
        not written (:meth:`drop_new`) unless this node no longer holds them."""
        state = self.state
        variant = get_variant(terms.variant)
        if game_id is None:
            game_id = self.new_game_id()
        room = GameRoom(
            game_id,
            variant,
            terms,
            (first, second),
            variant.random_start_fen(state.rng),
            state.tokens,
            state.config.room,
        )
        state.rooms[game_id] = room
        correspondence = room.state.correspondence
        for player in (first, second):
            state.add_game(player, game_id, correspondence)
            if not correspondence:  # the stored (correspondence) seeks and challenges stay
                state.remove_seeks(player.id, out, stored=False)
                state.cancel_challenges(player.id, "game started", out, stored=False)
        seek = None if seek_id is None else state.seeks.get(seek_id)
        consumed = [] if consumed is None else consumed
        if correspondence and seek is not None:
            state.drop_seek(seek, out, consumed)
        if consumed:
            state.consuming[game_id] = consumed
        token = state.tokens.issue(game_id, WriteKind.CREATE)

        def stored(player: PlayerInfo) -> GamePlayer:
            return GamePlayer(player.id, player.name, player.guest)

        record = GameCreated(
            game_id=game_id,
            variant=variant.name,
            start_fen=room.start_fen,
            control=terms.control,
            rated=terms.rated,
            first=stored(first),
            second=stored(second),
            tournament=terms.tournament,
            consumed_offers=tuple(offer.key for offer in consumed if offer.key is not None),
        )
        out.append(Persist(token, record))
        return game_id

    def start(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        """The game row is stored: start the game, tell the players, join their connections."""
        self.state.consuming.pop(room.game_id, None)
        room.lifecycle.start(now)
        self.announce_start(room, now, out)

    def announce_start(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        state = self.state
        for side in SIDES:
            player, opponent = room.players[side], room.players[side.other]
            online = state.players.get(player.id)
            if online is None or not online.conns:
                out += room.lifecycle.presence(side, False, now)  # none in correspondence
                continue
            started: GameStartPayload = {
                "game": room.game_id,
                "side": side.word,
                "opponent": room.terms.player_view(opponent),
            }
            tag = room.terms.tournament
            if tag is not None:
                started["tournament"] = {"id": tag.id, "round": tag.round, "berserk": tag.berserk}
            start = Message(MessageKind.GAME_START, started)
            for conn_id in online.conns:
                out.append(Send(conn_id, start))
                state.conns[conn_id].rooms.add(room.game_id)
                out += room.state.join(conn_id, side, None, now)
        out.append(
            Publish(
                "games",
                Message(
                    MessageKind.GAME_START,
                    GameStartedNotice(
                        game=room.game_id,
                        **room.terms.view(),
                        players=[room.terms.player_view(p) for p in room.players],
                    ),
                ),
            )
        )

    def drop_new(
        self, room: GameRoom, reason: str, out: list[Effect], offers_gone: Sequence[str] = ()
    ) -> None:
        """The row of the new game ``room`` was not written: the game is dropped and both
        players are told (``game_not_created``); the stored offers it answered are open again
        (:meth:`HubState.reopen_offers`: their rows are still this node's).

        But for ``offers_gone``: offers whose rows this node no longer holds (another cluster
        node claimed them while this one was taken for dead, or they were deleted; the store
        refused the game for it). They are forgotten here, as if withdrawn (a seek's watchers
        were told ``seek_removed`` when it was taken; a challenge's parties get
        ``challenge_cancelled``, reason ``moved``), and the player who answered them is told
        ``no_such_seek`` / ``no_such_challenge`` instead of ``game_not_created``."""
        state = self.state
        del state.rooms[room.game_id]
        state.timers.clear(("room", room.game_id))
        answered = state.consuming.get(room.game_id, [])
        gone = [offer for offer in answered if offer.key in offers_gone]
        message = error_message(
            ErrorCode.GAME_NOT_CREATED,
            f"The game could not be created ({reason}); please try again.",
        )
        for player in room.players:
            state.drop_game(player.id, room.game_id)
            if not gone:
                out += state.send_player(player.id, message)
        if gone:
            self._refuse_gone(room, answered, gone, out)
        state.reopen_offers(room.game_id, out, keep_closed=offers_gone)

    def _refuse_gone(
        self,
        room: GameRoom,
        answered: list[Seek | Challenge],
        gone: list[Seek | Challenge],
        out: list[Effect],
    ) -> None:
        """Tell the parties of the ``gone`` offers of the game not created in ``room`` (see
        :meth:`drop_new`). The taker is the target of the challenge accepted, or else the
        player who is not the seek's owner."""
        state = self.state
        for offer in gone:
            if isinstance(offer, Challenge):
                cancelled = Message(
                    MessageKind.CHALLENGE_CANCELLED, {"id": offer.id, "reason": "moved"}
                )
                for party in (offer.sender.id, offer.target.id):
                    out += state.send_player(party, cancelled)
        accepted = [offer for offer in answered if isinstance(offer, Challenge)]
        if accepted:
            taker = accepted[0].target.id
        else:
            owner = gone[0].player.id if isinstance(gone[0], Seek) else gone[0].sender.id
            taker = next(p.id for p in room.players if p.id != owner)
        kind, code = (
            ("Challenge", ErrorCode.NO_SUCH_CHALLENGE)
            if isinstance(gone[0], Challenge)
            else ("Seek", ErrorCode.NO_SUCH_SEEK)
        )
        text = (
            f"{kind} {gone[0].id} is no longer open here (another server holds it now, or it "
            "was answered): no game was created."
        )
        out += state.send_player(taker, error_message(code, text))

    def after_room(self, room: GameRoom) -> None:
        """Bookkeeping after a room change: its timer, and the players freed at the end."""
        state, room_state = self.state, room.state
        game_id = room_state.game_id
        state.timers.set(("room", game_id), room_state.next_deadline())
        if room_state.finished:
            for player in room_state.players:
                state.drop_game(player.id, game_id)
            if state.timers.get(("evict", game_id)) is None:
                assert room_state.finished_ms is not None
                state.timers.set(
                    ("evict", game_id), room_state.finished_ms + state.config.finished_room_ttl_ms
                )

    def evict(self, room: GameRoom) -> None:
        state = self.state
        for conn_id in room.members:
            conn = state.conns.get(conn_id)
            if conn is not None:
                conn.rooms.discard(room.game_id)
        state.timers.clear(("room", room.game_id))
        del state.rooms[room.game_id]
