"""The hub's game-room commands (:class:`RoomCommands`, the hub's ``rooms`` part): ``join``,
``leave``, ``move``, ``resign``, ``abort``, draw claims, abandonment claims, offers (draw,
takeback, rematch) and chat, each routed to the part of its :class:`~server.hub.room.GameRoom`
that owns it (``moves``, ``lifecycle``, ``offers``, ``state``).
"""

from __future__ import annotations

from collections.abc import Callable

from server.hub.commands import (
    AbandonClaimCommand,
    AbortCommand,
    BerserkCommand,
    ChatCommand,
    ClaimDrawCommand,
    JoinCommand,
    LeaveCommand,
    MoveCommand,
    OfferCommand,
    ResignCommand,
)
from server.hub.effects import Effect, GameId, Send
from server.hub.errors import CommandError, ErrorCode
from server.hub.hub_games import Games
from server.hub.hub_premoves import own_premoves
from server.hub.hub_state import Connection, HubState
from server.hub.identity import PlayerId
from server.hub.messages import AckId, ack_message
from server.hub.payloads import AckPayload
from server.hub.room import GameRoom
from server.rules import Side


class RoomCommands:
    """Commands that act on a game room (see the module docstring): the hub's ``rooms`` part.
    A rematch agreed is created by the ``games`` part."""

    __slots__ = ("games", "state")

    def __init__(self, state: HubState, games: Games) -> None:
        self.state = state
        self.games = games

    def _find_room(self, game_id: GameId, player_id: PlayerId) -> GameRoom:
        room = self.state.rooms.get(game_id)
        if room is None or (
            room.state.status == "created" and room.state.side_of(player_id) is None
        ):
            raise CommandError(ErrorCode.NO_SUCH_GAME, f"There is no game {game_id!r} here.")
        return room

    def _player_side(self, room: GameRoom, player_id: PlayerId) -> Side:
        side = room.state.side_of(player_id)
        if side is None:
            raise CommandError(ErrorCode.NOT_A_PLAYER)
        return side

    def _in_room(
        self,
        conn: Connection,
        game_id: GameId,
        now: int,
        out: list[Effect],
        action: Callable[[GameRoom, Side], list[Effect]],
        ack: AckId | None,
    ) -> None:
        """Run a player's action on a room: fire what is due first, then the action, then the
        bookkeeping (also when the action is refused)."""
        room = self._find_room(game_id, conn.player_id)
        side = self._player_side(room, conn.player_id)
        try:
            out += room.lifecycle.on_time(now)
            out += action(room, side)
            # A takeback being written is acknowledged by the room once stored.
            if not room.state.busy:
                out.append(Send(conn.conn_id, ack_message(ack, {"game": game_id})))
        finally:
            self.games.after_room(room)

    def on_join(
        self, conn: Connection, cmd: JoinCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room = self._find_room(cmd.game_id, conn.player_id)
        out += room.lifecycle.on_time(now)
        self.games.after_room(room)
        conn.rooms.add(room.game_id)
        replayed = cmd.since is not None and room.log.since(cmd.since) is not None
        out += room.state.join(conn.conn_id, room.side_of(conn.player_id), cmd.since, now)
        # ``snapshot``: the connection got the whole state (a ``game`` message) instead of the
        # events after its version, and must replace what it knew.
        data: AckPayload = {"game": room.game_id, "v": room.log.version, "snapshot": not replayed}
        out.append(Send(conn.conn_id, ack_message(cmd.ack, data)))
        if room.state.premoves:
            side = room.side_of(conn.player_id)
            out += [Send(conn.conn_id, message) for message in own_premoves(room, side)]

    def on_leave(
        self, conn: Connection, cmd: LeaveCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room = self.state.rooms.get(cmd.game_id)
        if room is not None:
            room.state.leave(conn.conn_id)
        conn.rooms.discard(cmd.game_id)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": cmd.game_id})))

    def on_move(
        self, conn: Connection, cmd: MoveCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        # The hot path, so written out (no closure): acked by the room once stored.
        room = self._find_room(cmd.game_id, conn.player_id)
        side = self._player_side(room, conn.player_id)
        try:
            out += room.lifecycle.on_time(now)
            out += room.moves.play(conn.conn_id, side, cmd.ply, cmd.move, now, lag, cmd.ack)
        finally:
            self.games.after_room(room)

    def on_resign(
        self, conn: Connection, cmd: ResignCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(
            conn, cmd.game_id, now, out, lambda r, s: r.lifecycle.resign(s, now, asker), cmd.ack
        )

    def on_abort(
        self, conn: Connection, cmd: AbortCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(
            conn, cmd.game_id, now, out, lambda r, s: r.lifecycle.abort(s, now, asker), cmd.ack
        )

    def on_claim_draw(
        self, conn: Connection, cmd: ClaimDrawCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(
            conn, cmd.game_id, now, out, lambda r, s: r.lifecycle.claim_draw(s, now, asker), cmd.ack
        )

    def on_abandon_claim(
        self, conn: Connection, cmd: AbandonClaimCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        self._in_room(
            conn,
            cmd.game_id,
            now,
            out,
            lambda r, s: r.lifecycle.abandon_claim(s, cmd.outcome, now, (conn.conn_id, cmd.ack)),
            cmd.ack,
        )

    def on_offer(
        self, conn: Connection, cmd: OfferCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        if cmd.kind == "draw":
            asker = (conn.conn_id, cmd.ack)
            self._in_room(
                conn,
                cmd.game_id,
                now,
                out,
                lambda r, s: r.offers.draw(s, cmd.action, now, asker),
                cmd.ack,
            )
        elif cmd.kind == "takeback":
            self._in_room(
                conn,
                cmd.game_id,
                now,
                out,
                lambda r, s: r.offers.takeback(conn.conn_id, s, cmd.action, now, cmd.ack),
                cmd.ack,
            )
        else:
            self._on_rematch(conn, cmd, now, out)

    def _on_rematch(self, conn: Connection, cmd: OfferCommand, now: int, out: list[Effect]) -> None:
        state = self.state
        room = self._find_room(cmd.game_id, conn.player_id)
        side = self._player_side(room, conn.player_id)
        room.offers.check_rematch(side, cmd.action, now)
        if cmd.action != "decline":
            me = state.info(conn)
            opponent_id = room.players[side.other].id
            opponent = state.players.get(opponent_id)
            if opponent is None:
                raise CommandError(ErrorCode.OPPONENT_OFFLINE)
            correspondence = room.state.correspondence
            state.check_free(me, correspondence=correspondence)
            state.check_free(opponent.info, yourself=False, correspondence=correspondence)
        agreed, effects = room.offers.rematch(side, cmd.action, now)
        out += effects
        data: AckPayload = {"game": room.game_id}
        if agreed:
            # Colours swap: the old second player moves first.
            first = state.players[room.players[Side.SECOND].id].info
            second = state.players[room.players[Side.FIRST].id].info
            new_game = self.games.create(first, second, room.terms, now, out)
            out += room.offers.rematch_started(new_game)
            data["new_game"] = new_game
        out.append(Send(conn.conn_id, ack_message(cmd.ack, data)))

    def on_berserk(
        self, conn: Connection, cmd: BerserkCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        self._in_room(
            conn,
            cmd.game_id,
            now,
            out,
            lambda r, s: r.lifecycle.berserk(s, now, (conn.conn_id, cmd.ack)),
            cmd.ack,
        )

    def on_chat(
        self, conn: Connection, cmd: ChatCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        text = cmd.text.strip()
        if not text:
            raise CommandError(ErrorCode.EMPTY_MESSAGE)
        room = self._find_room(cmd.game_id, conn.player_id)
        if conn.conn_id not in room.members:
            raise CommandError(ErrorCode.NOT_JOINED)
        out += room.state.chat_line(room.side_of(conn.player_id), self.state.info(conn), text)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": room.game_id})))
