"""Game life cycle inside the hub: creating a game (and its row), starting it once stored,
dropping it when the row cannot be written, the bookkeeping after every room change (persist
tokens, timers, players freed) and evicting finished games.
"""

from __future__ import annotations

from server.hub.effects import Effect, GameCreated, GameId, GamePlayer, Persist, Publish, Send
from server.hub.errors import ErrorCode
from server.hub.game_ids import new_game_id
from server.hub.hub_state import HubState
from server.hub.identity import PlayerInfo
from server.hub.lobby import GameTerms
from server.hub.messages import Message, MessageKind, error_message
from server.hub.persist_tokens import WriteKind
from server.hub.room import GameRoom
from server.rules import SIDE_NAMES, get_variant


class HubGames(HubState):
    """Creating, starting, dropping and evicting games (see the module docstring)."""

    # ================================================================= games

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
            self._tokens,
            self.config.room,
        )
        self._rooms[game_id] = room
        for player in (first, second):
            if not player.computer:  # the computer plays any number of games at once
                self._playing[player.id] = game_id
            self._remove_seeks(player.id, out)
            self._cancel_challenges(player.id, "game started", out)
        token = self._tokens.issue(game_id, WriteKind.CREATE)

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
        room.lifecycle.start(now)
        self._announce_start(room, now, out)

    def _announce_start(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        for side, player in enumerate(room.players):
            opponent = room.players[1 - side]
            online = self._players.get(player.id)
            if online is None or not online.conns:
                out += room.lifecycle.presence(side, False, now)
                continue
            start = Message(
                MessageKind.GAME_START,
                {
                    "game": room.game_id,
                    "side": SIDE_NAMES[side],
                    "opponent": room.terms.player_view(opponent),
                },
            )
            for conn_id in online.conns:
                out.append(Send(conn_id, start))
                self._conns[conn_id].rooms.add(room.game_id)
                out += room.state.join(conn_id, side, None, now)
        out.append(
            Publish(
                "games",
                Message(
                    MessageKind.GAME_START,
                    {
                        "game": room.game_id,
                        **room.terms.view(),
                        "players": [room.terms.player_view(p) for p in room.players],
                    },
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
        """Bookkeeping after a room change: its timer, and the players freed at the end."""
        self._timers.set(("room", room.game_id), room.state.next_deadline())
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
