"""Game life cycle inside the hub: creating a game (and its row), starting it once stored,
dropping it when the row cannot be written, the bookkeeping after every room change (persist
tokens, timers, players freed) and evicting finished games.
"""

from __future__ import annotations

from server.hub.effects import (
    Effect,
    GameCreated,
    GameFinished,
    GameId,
    GamePlayer,
    MoveAppended,
    MovesRetracted,
    Persist,
    Publish,
    Send,
)
from server.hub.errors import ErrorCode
from server.hub.game_ids import new_game_id
from server.hub.hub_state import HubState
from server.hub.identity import PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.messages import Message, MessageKind, error_message
from server.hub.payloads import GameStartedNotice, GameStartPayload
from server.hub.room import SIDE_NAMES, GameRoom
from server.rules import get_variant

_PERSIST_KINDS: dict[type, str] = {
    GameCreated: "create",
    MoveAppended: "move",
    MovesRetracted: "takeback",
    GameFinished: "finish",
}


class HubGames(HubState):
    """Creating, starting, dropping and evicting games (see the module docstring)."""

    # ================================================================= games

    def _new_token(self) -> int:
        self._last_token += 1
        return self._last_token

    def _take_token(self, token: int) -> tuple[GameId, str]:
        entry = self._tokens.pop(token, None)
        if entry is None:
            raise ValueError(f"unknown or already reported persist token {token}")
        return entry

    def _new_game_id(self) -> GameId:
        while True:
            game_id = new_game_id(self._rng)
            if game_id not in self._rooms:
                return game_id

    def _create_game(
        self,
        first: PlayerInfo,
        second: PlayerInfo,
        terms: GameTerms,
        now: int,
        out: list[Effect],
    ) -> GameId:
        """Create a room in state ``created`` and ask the store for the game row."""
        variant = get_variant(terms.variant)
        game_id = self._new_game_id()
        room = GameRoom(
            game_id,
            variant,
            terms,
            (first, second),
            variant.random_start_fen(self._rng),
            self._new_token,
            self.config.room,
        )
        self._rooms[game_id] = room
        for player in (first, second):
            if not player.computer:  # the computer plays any number of games at once
                self._playing[player.id] = game_id
            self._remove_seeks(player.id, out)
            self._cancel_challenges(player.id, "game started", out)
        token = self._new_token()
        self._tokens[token] = (game_id, "create")

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
        )
        out.append(Persist(token, record))
        return game_id

    def _start_game(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        """The game row is stored: start the game, tell the players, join their connections."""
        room.start(now)
        self._announce_start(room, now, out)

    def _announce_start(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        for side, player in enumerate(room.players):
            opponent = room.players[1 - side]
            online = self._players.get(player.id)
            if online is None or not online.conns:
                out += room.presence(side, False, now)
                continue
            started: GameStartPayload = {
                "game": room.game_id,
                "side": SIDE_NAMES[side],
                "opponent": room.terms.player_view(opponent),
            }
            start = Message(MessageKind.GAME_START, started)
            for conn_id in online.conns:
                out.append(Send(conn_id, start))
                self._conns[conn_id].rooms.add(room.game_id)
                out += room.join(conn_id, side, None, now)
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

    def _drop_new_game(self, room: GameRoom, reason: str, out: list[Effect]) -> None:
        del self._rooms[room.game_id]
        self._timers.clear(("room", room.game_id))
        message = error_message(
            ErrorCode.GAME_NOT_CREATED,
            f"The game could not be created ({reason}); please try again.",
        )
        for player in room.players:
            if self._playing.get(player.id) == room.game_id:
                del self._playing[player.id]
            out += self._send_player(player.id, message)

    def _after_room(self, room: GameRoom, now: int, out: list[Effect], start: int = 0) -> None:
        """Bookkeeping after a room change whose effects are ``out[start:]``: persist tokens,
        timers, players freed at the end."""
        for effect in out[start:]:
            if isinstance(effect, Persist) and effect.token not in self._tokens:
                kind = _PERSIST_KINDS[type(effect.record)]
                if kind != "create":
                    self._tokens[effect.token] = (room.game_id, kind)
        self._timers.set(("room", room.game_id), room.next_deadline())
        if room.finished:
            for player in room.players:
                if self._playing.get(player.id) == room.game_id:
                    del self._playing[player.id]
            if self._timers.get(("evict", room.game_id)) is None:
                assert room.finished_ms is not None
                self._timers.set(
                    ("evict", room.game_id), room.finished_ms + self.config.finished_room_ttl_ms
                )

    def _evict(self, room: GameRoom) -> None:
        for conn_id in room.members:
            conn = self._conns.get(conn_id)
            if conn is not None:
                conn.rooms.discard(room.game_id)
        self._timers.clear(("room", room.game_id))
        del self._rooms[room.game_id]
