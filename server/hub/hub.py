"""The sans-I/O hub: connections, the seek lobby, challenges and game rooms.

The transport adapter drives it with plain calls and runs the returned effects in order::

    hub = Hub(HubConfig(), random.Random())
    effects = hub.connect(conn_id, PlayerInfo("u1", "alice"), now_ms)
    effects = hub.handle(conn_id, parse_command(frame), now_ms, lag_ms=measured)
    effects = hub.tick(now_ms)                    # when now_ms >= hub.next_deadline()
    effects = hub.persisted(token, now_ms)        # after a Persist(token, ...) committed
    effects = hub.persist_failed(token, why, now_ms)
    effects = hub.offer_written(token, now_ms)    # after an OfferStored/OfferDropped(.., token)
    effects = hub.offer_failed(token, why, now_ms)
    effects = hub.disconnect(conn_id, now_ms)

Nothing here reads a clock, sleeps, or does I/O; time is the ``now_ms`` argument.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from server.hub.commands import (
    AbandonClaimCommand,
    AbortCommand,
    AcceptCommand,
    BerserkCommand,
    ChallengeAiCommand,
    ChatCommand,
    ClaimDrawCommand,
    Command,
    DeclineCommand,
    JoinCommand,
    LeaveCommand,
    MatchCommand,
    MoveCommand,
    OfferCommand,
    PlayCommand,
    PremoveLineCommand,
    PremovesClearCommand,
    PremovesCommand,
    ResignCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WhoCommand,
    WithdrawCommand,
)
from server.hub.effects import Close, ConnId, Effect, GameId, GamesWanted, PremovesSet, Send
from server.hub.errors import CommandError
from server.hub.hub_games import Games
from server.hub.hub_lobby import Lobby
from server.hub.hub_premoves import Premoves
from server.hub.hub_rooms import RoomCommands
from server.hub.hub_state import (
    Connection,
    HubConfig,
    HubState,
    OnlinePlayer,
    OwnerGamesUnknown,
)
from server.hub.identity import PlayerId, PlayerInfo, Rating, RatingKey
from server.hub.lobby import Challenge, GameTerms, Seek
from server.hub.messages import Message, MessageKind, error_message
from server.hub.payloads import HelloPayload
from server.hub.persist_tokens import WriteKind
from server.hub.room import GameRoom
from server.hub.turns import turn_effects
from server.rules import MoveRecord, get_variant
from server.rules.time_control import is_correspondence

__all__ = ["Hub", "HubConfig"]


class Hub:
    """See the module docstring and docs/protocol.md.

    The hub is its parts, each a field sharing one :class:`~server.hub.hub_state.HubState`
    (``state``: connections, players, the lobby books, rooms, timers, persist tokens):
    ``lobby`` (:class:`~server.hub.hub_lobby.Lobby`: seek and challenge commands), ``rooms``
    (:class:`~server.hub.hub_rooms.RoomCommands`: the commands acting on a game room) and
    ``games`` (:class:`~server.hub.hub_games.Games`: creating, starting, dropping, evicting
    games, and the bookkeeping after a room changed) and ``premoves``
    (:class:`~server.hub.hub_premoves.Premoves`: conditional premoves). :meth:`handle` finds a command's part in
    one table; the writes' reports and the timers come in here and go to the room's parts.
    """

    def __init__(self, config: HubConfig | None = None, rng: random.Random | None = None) -> None:
        self.state = state = HubState(config or HubConfig(), rng or random.Random())
        self.games = games = Games(state)
        self.lobby = lobby = Lobby(state, games)
        self.rooms = rooms = RoomCommands(state, games)
        self.premoves = premoves = Premoves(state)
        self._handlers: dict[type, Callable[[Connection, Any, int, int, list[Effect]], None]] = {
            SeekCommand: lobby.on_seek,
            UnseekCommand: lobby.on_unseek,
            SoughtCommand: lobby.on_sought,
            WhoCommand: lobby.on_who,
            PlayCommand: lobby.on_play,
            MatchCommand: lobby.on_match,
            ChallengeAiCommand: lobby.on_challenge_ai,
            AcceptCommand: lobby.on_accept,
            DeclineCommand: lobby.on_decline,
            WithdrawCommand: lobby.on_withdraw,
            JoinCommand: rooms.on_join,
            LeaveCommand: rooms.on_leave,
            MoveCommand: rooms.on_move,
            ResignCommand: rooms.on_resign,
            AbortCommand: rooms.on_abort,
            ClaimDrawCommand: rooms.on_claim_draw,
            OfferCommand: rooms.on_offer,
            AbandonClaimCommand: rooms.on_abandon_claim,
            ChatCommand: rooms.on_chat,
            BerserkCommand: rooms.on_berserk,
            PremovesCommand: premoves.on_set,
            PremovesClearCommand: premoves.on_clear,
            PremoveLineCommand: premoves.on_line,
        }

    # ================================================================ public API

    def connect(
        self,
        conn_id: ConnId,
        player: PlayerInfo,
        now_ms: int,
        stored_correspondence: Iterable[GameId] | None = None,
    ) -> list[Effect]:
        """A connection of ``player`` opened (identity established by the adapter).

        ``stored_correspondence``: the player's running correspondence games as the store
        lists them (read by the adapter; cold games are in no room), joined to those in
        memory in ``hello`` and in the count of ``max_correspondence_games``; ``None`` when
        the adapter does not read them (memory only).

        Sends ``hello``; ends the player's absence in a running game; closes the player's oldest
        connection beyond ``max_connections_per_player``.
        """
        state = self.state
        if conn_id in state.conns:
            raise ValueError(f"connection {conn_id} is already connected")
        out: list[Effect] = []
        online = state.players.get(player.id)
        if online is None:
            online = state.players[player.id] = OnlinePlayer(player)
        elif state.names.get(online.info.name.lower()) == player.id:
            del state.names[online.info.name.lower()]  # the name index is refreshed below
        online.info = player
        if stored_correspondence is not None:
            state.stored_correspondence[player.id] = set(stored_correspondence)
        # A name is one player's: another player's connection with the same name (two guests
        # drew one, which the accounts make next to impossible) is not indexed by it.
        state.names.setdefault(player.name.lower(), player.id)
        online.conns.append(conn_id)
        state.conns[conn_id] = Connection(conn_id, player.id)
        while len(online.conns) > state.config.max_connections_per_player:
            oldest = online.conns[0]
            out.append(Close(oldest, "too many connections"))
            state.drop_connection(oldest)
        game_id = state.playing.get(player.id)
        hello: HelloPayload = {
            "player": player.view(),
            "game": game_id,
            "correspondence": sorted(state.correspondence_of(player.id)),
            "seeks": [s.view() for s in state.seeks.of_player(player.id)],
            "challenges": [c.view() for c in state.challenges.involving(player.id)],
        }
        out.append(Send(conn_id, Message(MessageKind.HELLO, hello)))
        if game_id is not None and len(online.conns) == 1:
            room = state.rooms[game_id]
            side = room.side_of(player.id)
            assert side is not None
            out += room.lifecycle.presence(side, True, now_ms)
            self.games.after_room(room)
        return out

    def disconnect(self, conn_id: ConnId, now_ms: int) -> list[Effect]:
        """A connection closed. When it was the player's last one, the player's seeks and
        challenges vanish (but the stored correspondence ones) and the opponent of a running
        game sees the absence countdown. Unknown or already dropped connection ids are ignored."""
        state = self.state
        conn = state.conns.get(conn_id)
        if conn is None:
            return []
        state.drop_connection(conn_id)
        online = state.players[conn.player_id]
        if online.conns:
            return []
        out: list[Effect] = []
        self._player_gone(online.info, now_ms, out)
        return out

    def handle(
        self,
        conn_id: ConnId,
        command: Command,
        now_ms: int,
        *,
        lag_ms: int = 0,
        games: Mapping[PlayerId, frozenset[GameId]] | None = None,
    ) -> list[Effect]:
        """Run one command of a connection.

        :param lag_ms: the lag the adapter measured for this connection (moves only: it is
            credited to the mover's clock within the lag quota).
        :param games: the stored running correspondence games of absent offer owners, read
            by the adapter after a ``GamesWanted`` for this command.
        :raises ValueError: ``conn_id`` is not connected (an adapter bug, not a client error).
        """
        state = self.state
        conn = state.conns.get(conn_id)
        if conn is None:
            raise ValueError(f"connection {conn_id} is not connected")
        handler = self._handlers[type(command)]
        out: list[Effect] = []
        try:
            if games is not None:
                state.owner_games = games
            handler(conn, command, now_ms, lag_ms, out)
        except CommandError as exc:
            out.append(Send(conn_id, error_message(exc.code, exc.message, command.ack, exc.state)))
        except OwnerGamesUnknown as unknown:  # raised before anything changed
            return [GamesWanted(conn_id, command, lag_ms, unknown.player, state.owner_games)]
        finally:
            if games is not None:
                state.owner_games = {}
        return out

    def match_offline(
        self, conn_id: ConnId, command: MatchCommand, target: PlayerInfo | None, now_ms: int
    ) -> list[Effect]:
        """``match`` naming a player with no connection here, whom the adapter read from the
        store (``target``; ``None``: no such account): a correspondence challenge is made to
        them, stored until they answer (docs/correspondence.md, "Seeks and challenges"). A
        player of that name who connected meanwhile gets it as usual."""
        conn = self.state.conns.get(conn_id)
        if conn is None:
            return []
        out: list[Effect] = []
        try:
            self.lobby.on_match(conn, command, now_ms, 0, out, target, looked_up=True)
        except CommandError as exc:
            out.append(Send(conn_id, error_message(exc.code, exc.message, command.ack, exc.state)))
        return out

    def restore_offer(self, offer: Seek | Challenge, now_ms: int) -> list[Effect]:
        """Open a stored seek or challenge read back from the store (after a restart): it gets
        a new id of this hub (ids are not stored; its ``key`` is), beyond the limits, and is
        announced as a new one (``seek_added``; a challenge to its online parties).

        :raises ValueError: the offer has no key.
        """
        return self.lobby.restore_offer(offer)

    def forget_offer(self, key: str, now_ms: int) -> list[Effect]:
        """The stored offer ``key`` is no longer this hub's (another cluster node claimed its
        row while this one was taken for dead): it leaves the lobby (``seek_removed``; a
        challenge's parties get ``challenge_cancelled``, reason ``moved``), nothing is
        written. Unknown keys return ``[]``."""
        return self.lobby.forget_offer(key)

    def offer_written(self, token: int, now_ms: int) -> list[Effect]:
        """The store wrote ``OfferStored``/``OfferDropped(.., token)``: the answer to the
        command that made or withdrew the offer goes out now (acknowledged means stored).
        Unknown tokens (writes nobody waits for) return ``[]``."""
        return self.state.offer_written(token)

    def offer_failed(self, token: int, reason: str, now_ms: int) -> list[Effect]:
        """The store could not write ``OfferStored(.., token)``: the offer is no longer open
        (unless it was answered meanwhile) and its command is answered ``offer_not_saved``.
        A delete (``OfferDropped``) is not to be reported failed: the adapter retries it."""
        return self.state.offer_failed(token, reason)

    def tick(self, now_ms: int) -> list[Effect]:
        """Fire every deadline ``<= now_ms`` (flags, automatic aborts, absence countdowns,
        eviction of finished games)."""
        state = self.state
        out: list[Effect] = []
        for key in state.timers.pop_due(now_ms):
            assert isinstance(key, tuple)
            kind, game_id = key
            room = state.rooms.get(game_id)
            if room is None:
                continue
            if kind == "evict":
                self.games.evict(room)
                continue
            out += room.lifecycle.on_time(now_ms)
            self.games.after_room(room)
        return out

    def next_deadline(self) -> int | None:
        """When :meth:`tick` next has work, or ``None``."""
        return self.state.timers.next_deadline()

    def prepare(self, token: int) -> tuple[Effect, ...]:
        """``Persist(token, ...)`` is on its way to the store: do now what its commit will need
        (a move's next legal moves, outcome and event, and the effects it releases first), so
        that :meth:`persisted` answers sooner.

        Optional, and invisible: nothing happens until :meth:`persisted`, which builds whatever
        was not prepared or is no longer valid. Returns the effects :meth:`persisted` is then
        expected to begin with (the same objects), so that an adapter may encode their
        messages ahead; they are not to be run now. Unknown or already reported tokens, and
        writes other than moves, return ``()``."""
        state = self.state
        entry = state.tokens.get(token)
        if entry is None or entry[1] is not WriteKind.MOVE:
            return ()
        room = state.rooms.get(entry[0])
        if room is not None and room.state.pending_token() == token:
            return room.moves.prepare()
        return ()

    def persisted(self, token: int, now_ms: int) -> list[Effect]:
        """The store committed ``Persist(token, ...)``: release what waited for it."""
        state = self.state
        game_id, kind = state.tokens.take(token)
        room = state.rooms.get(game_id)
        out: list[Effect] = []
        if room is None:
            return out
        if kind is not WriteKind.CREATE and room.state.pending_token() != token:
            if kind is WriteKind.PREMOVES:  # beside the room's own pending write
                self.premoves.stored(room, token, now_ms, out)
                self.games.after_room(room)
                return out
            raise ValueError(f"persist token {token} is not the pending write of {game_id}")
        if kind is WriteKind.CREATE:
            self.games.start(room, now_ms, out)
        elif kind is WriteKind.MOVE:
            out += room.moves.persisted(now_ms)
        elif kind is WriteKind.TAKEBACK:
            out += room.offers.takeback_persisted(now_ms)
        elif kind is WriteKind.BERSERK:
            out += room.lifecycle.berserk_persisted(now_ms)
        else:
            out += room.lifecycle.end_persisted(now_ms)
        out += turn_effects(state, room)
        if room.state.premoves:  # the move path's one look at conditional premoves
            self.premoves.after_move(room, now_ms, out)
        self.games.after_room(room)
        return out

    def persist_failed(
        self, token: int, reason: str, now_ms: int, *, offers_gone: Sequence[str] = ()
    ) -> list[Effect]:
        """The store could not write ``Persist(token, ...)``.

        A new game is dropped (both players are told, ``game_not_created``; ``offers_gone``:
        the stored offers it answered whose rows this node no longer holds, see
        :meth:`~server.hub.hub_games.Games.drop_new`); a move or a
        takeback is undone and the player told (``move_not_saved``, ``takeback_not_saved``); a
        player's ending (resignation, agreement, claim, abort) is dropped and the player told
        (``resign_not_saved`` …). A failed ``GameFinished`` with ``server_decided`` changes
        nothing and its token stays valid: the adapter must write it until it is stored (it is
        idempotent by game id), then report :meth:`persisted`.
        """
        state = self.state
        game_id, kind = state.tokens.take(token)
        room = state.rooms.get(game_id)
        out: list[Effect] = []
        if room is None:
            return out
        if kind is WriteKind.CREATE:
            self.games.drop_new(room, reason, out, offers_gone)
            return out
        if kind is WriteKind.PREMOVES:
            self.premoves.failed(room, token, reason, out)
            return out
        if room.state.pending_token() != token:
            raise ValueError(f"persist token {token} is not the pending write of {game_id}")
        if kind is WriteKind.MOVE:
            out += room.moves.failed(reason, now_ms)
        elif kind is WriteKind.TAKEBACK:
            out += room.offers.takeback_failed(reason, now_ms)
        elif kind is WriteKind.BERSERK:
            out += room.lifecycle.berserk_failed(reason, now_ms)
        else:
            out += room.lifecycle.end_failed(reason, now_ms)
            if room.state.pending_token() == token:
                state.tokens.owe_again(token, (game_id, kind))  # report it when stored
        self.games.after_room(room)
        return out

    def start_paired_game(
        self,
        first: PlayerInfo,
        second: PlayerInfo,
        terms: GameTerms,
        now_ms: int,
        *,
        game_id: GameId | None = None,
    ) -> tuple[GameId, list[Effect]]:
        """Create an ordinary game between two given players (``first`` moves first), as a
        tournament pairs them: ``terms.tournament`` names the tournament and round (stored with
        the game, shown in its ``game_start`` and snapshot). The row is written first
        (``Persist(GameCreated)``); once stored the game starts as every game does. A player
        with no connection here gets the game too: the first-move window, then the absence
        countdown, apply as usual. Their seeks and challenges are cancelled.

        :param game_id: the id to give the game (a pairing stored before its game); a new one
            when None.
        :raises ValueError: the id is in use, the two players are one, or a player is in a
            game already (the director pairs only free players).
        """
        state = self.state
        if game_id is not None and game_id in state.rooms:
            raise ValueError(f"game {game_id} is already running here")
        if first.id == second.id:
            raise ValueError("a player cannot play themself")
        for player in (first, second):
            if player.id in state.playing:
                raise ValueError(f"{player.id} is already playing {state.playing[player.id]}")
        out: list[Effect] = []
        new_id = self.games.create(first, second, terms, now_ms, out, game_id=game_id)
        return new_id, out

    def restore_game(
        self,
        game_id: GameId,
        terms: GameTerms,
        players: tuple[PlayerInfo, PlayerInfo],
        start_fen: str,
        moves: Sequence[MoveRecord],
        now_ms: int,
        *,
        first_version: int = 1,
        turn_started_ms: int | None = None,
        berserk: tuple[bool, bool] = (False, False),
        premoves: Sequence[PremovesSet] = (),
        announce: bool = True,
    ) -> list[Effect]:
        """Take over an unfinished stored game (after a restart, or from a node that died).

        No ``GameCreated`` is emitted: the row exists. ``players[0]`` moves first. Players
        without a connection here start their absence countdown; the others are told with
        ``game_start`` and joined. See :meth:`~server.hub.room_lifecycle.Lifecycle.restore` for the clocks.

        :param first_version: the version ``v`` of the room's first event (later ones count up
            from it). A driver resuming a game another hub ran gives one above every version
            that hub can have issued, so that a client's pre-takeover version gets a snapshot,
            never a replay of unrelated events with the same numbers.
        :param turn_started_ms: a correspondence game only: when (in hub time, so usually
            before ``now_ms``) the turn of the side to move started — the instant of the last
            stored move, or of the game's start; the adapter converts the stored wall-clock
            instant. The deadline is that + the days per move: downtime is charged, and a
            deadline already past ends the game at once (see ``Lifecycle.restore``). Ignored
            for real-time games (their side to move starts afresh at ``now_ms``).
        :param berserk: who berserked in this tournament game (stored): kept on its clock.
        :param premoves: a correspondence game only: the players' conditional premoves as
            stored (``Store.premoves_of``); advanced through the stored moves, a reply they owe
            is played at once (:mod:`server.hub.hub_premoves`).
        :param announce: tell the players' connections here (``game_start``, joined). False
            for a cold correspondence game loaded for a command (docs/correspondence.md
            "Memory"): nothing starts, and whoever wants its events joins it.
        :raises ValueError: the game id is in use, a player is already playing here, the
            variant is unknown, a stored move is illegal or ``first_version`` is below 1.
        """
        state = self.state
        if game_id in state.rooms:
            raise ValueError(f"game {game_id} is already running here")
        correspondence = is_correspondence(terms.control)
        for player in players:
            if player.id in state.playing and not correspondence:
                raise ValueError(f"{player.id} is already playing {state.playing[player.id]}")
        variant = get_variant(terms.variant)
        room = GameRoom(
            game_id,
            variant,
            terms,
            players,
            start_fen,
            state.tokens,
            state.config.room,
            first_version=first_version,
        )
        out: list[Effect] = room.lifecycle.restore(moves, now_ms, turn_started_ms, berserk)
        state.rooms[game_id] = room
        if not room.finished:
            for player in players:
                # A restored correspondence game counts even beyond the limit (it exists).
                state.add_game(player, game_id, correspondence)
            if announce:
                self.games.announce_start(room, now_ms, out)
        if premoves and room.state.correspondence:
            out += self.premoves.restored(room, list(premoves), now_ms)
        self.games.after_room(room)
        return out

    def unload(self, game_id: GameId) -> bool:
        """Drop an idle correspondence game's room from memory (it stays in the store, which
        keeps its moves and deadline; :meth:`restore_game` loads it again). Refused (False)
        unless the game is a running correspondence game between two registered players who
        are not bots (a guest's id does not survive a reload; the computer moves in the games
        it is in; a bot account finds its games in the list its event stream opens with), with
        no connection in its room and no write awaited (``room.state.busy``, a pending move);
        the adapter also waits for its own writes of the game. The players' lists (``HubState.correspondence``) forget
        it with the room."""
        state = self.state
        room = state.rooms.get(game_id)
        if (
            room is None
            or not room.state.correspondence
            or room.finished
            or room.members
            or room.state.busy
            or room.state.pending is not None
            or any(player.guest or player.computer or player.bot for player in room.players)
        ):
            return False
        state.timers.clear(("room", game_id))
        del state.rooms[game_id]
        for player in room.players:
            state.drop_game(player.id, game_id)
            stored = state.stored_correspondence.get(player.id)
            if stored is not None:
                stored.add(game_id)  # still the player's, now cold
        return True

    def set_id_base(self, base: int) -> None:
        """Number new seeks and challenges ``base + 1``, ``base + 2`` … (the default base is 0).

        Hubs that share one lobby (the nodes of a cluster) each take a distinct base, far enough
        apart that no hub reaches another's, so that a seek or challenge id names one thing
        across all of them. Call it before the hub issues any id.

        :raises ValueError: ``base`` is negative, or a seek or challenge id was issued already.
        """
        state = self.state
        counters = (state.seeks.ids, state.challenges.ids)
        if any(ids.issued for ids in counters):
            raise ValueError("the id base cannot change once seek or challenge ids were issued")
        for ids in counters:
            ids.set_base(base)

    def set_rating(self, player_id: PlayerId, pool: RatingKey, rating: Rating) -> None:
        """Record a player's new rating in ``pool`` (``(variant, speed)`` or ``variant``), e.g.
        after the store rated a game. Only future seeks and games use it."""
        online = self.state.players.get(player_id)
        if online is not None:
            online.info = online.info.with_rating(pool, rating)

    # --- read-only views for adapters and tests ---------------------------------------------

    def running_versions(self) -> dict[GameId, int]:
        """The version of the last event of every room whose game is running (a stopping hub
        keeps them, so that the next one continues each room's versions; see
        :meth:`restore_game`'s ``first_version``)."""
        return {gid: room.log.version for gid, room in self.state.rooms.items() if room.started}

    def room(self, game_id: GameId) -> GameRoom | None:
        return self.state.rooms.get(game_id)

    def seeks(self) -> list[Seek]:
        return self.state.seeks.all()

    def challenge(self, challenge_id: int) -> Challenge | None:
        return self.state.challenges.get(challenge_id)

    def stored_challenges(self, player_id: PlayerId) -> list[Challenge]:
        """The stored (correspondence) challenges from and to the player open here."""
        return [c for c in self.state.challenges.involving(player_id) if c.stored]

    def active_game(self, player_id: PlayerId) -> GameId | None:
        """The player's running real-time game (one at most), or ``None``."""
        return self.state.playing.get(player_id)

    def games_of(self, player_id: PlayerId) -> list[GameId]:
        """Every running game of the player: the real-time one first, then the
        correspondence games."""
        return self.state.games_of(player_id)

    def online(self, player_id: PlayerId) -> bool:
        return player_id in self.state.players

    def online_players(self) -> list[PlayerInfo]:
        """Every player with a connection to this hub (in connection order)."""
        return [online.info for online in self.state.players.values()]

    # ============================================================ connections

    def _player_gone(self, info: PlayerInfo, now: int, out: list[Effect]) -> None:
        state = self.state
        del state.players[info.id]
        state.stored_correspondence.pop(info.id, None)
        if state.names.get(info.name.lower()) == info.id:
            del state.names[info.name.lower()]
        # The stored (correspondence) seeks and challenges wait for the player's return.
        state.remove_seeks(info.id, out, stored=False)
        state.cancel_challenges(info.id, "offline", out, stored=False)
        game_id = state.playing.get(info.id)
        if game_id is not None:
            room = state.rooms[game_id]
            side = room.side_of(info.id)
            assert side is not None
            out += room.lifecycle.presence(side, False, now)
            self.games.after_room(room)
