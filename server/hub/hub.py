"""The sans-I/O hub: connections, the seek lobby, challenges and game rooms.

The transport adapter drives it with plain calls and runs the returned effects in order::

    hub = Hub(HubConfig(), random.Random())
    effects = hub.connect(conn_id, PlayerInfo("u1", "alice"), now_ms)
    effects = hub.handle(conn_id, parse_command(frame), now_ms, lag_ms=measured)
    effects = hub.tick(now_ms)                    # when now_ms >= hub.next_deadline()
    effects = hub.persisted(token, now_ms)        # after a Persist(token, ...) committed
    effects = hub.persist_failed(token, why, now_ms)
    effects = hub.disconnect(conn_id, now_ms)

Nothing here reads a clock, sleeps, or does I/O; time is the ``now_ms`` argument.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.hub.clock import Byoyomi, TimeControl
from server.hub.commands import (
    AbandonClaimCommand,
    AbortCommand,
    AcceptCommand,
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
    ResignCommand,
    SeekCommand,
    SoughtCommand,
    UnseekCommand,
    WithdrawCommand,
)
from server.hub.effects import (
    Broadcast,
    Close,
    ConnId,
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
from server.hub.errors import CommandError
from server.hub.identity import PlayerId, PlayerInfo, Rating, RatingKey
from server.hub.lobby import (
    Challenge,
    ChallengeBook,
    GameTerms,
    Seek,
    SeekBook,
    first_mover,
    opposite,
)
from server.hub.messages import AckId, JsonObject, Message, ack_message, error_message
from server.hub.room import SIDE_NAMES, GameRoom, RoomSettings
from server.hub.timers import Timers
from server.rules import VARIANT_NAMES, MoveRecord, Variant, get_variant

GAME_ID_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class HubConfig:
    """Limits and timings of the hub (all times in milliseconds)."""

    max_seeks_per_player: int = 3
    max_challenges_per_player: int = 3
    max_connections_per_player: int = 10
    finished_room_ttl_ms: int = 15 * 60_000
    """How long a finished game stays in memory (final state, post-game chat, rematch)."""
    game_id_length: int = 8
    room: RoomSettings = field(default_factory=RoomSettings)


@dataclass
class _Connection:
    conn_id: ConnId
    player_id: PlayerId
    rooms: set[GameId] = field(default_factory=set)


@dataclass
class _OnlinePlayer:
    info: PlayerInfo
    conns: list[ConnId] = field(default_factory=list)


_PERSIST_KINDS: dict[type, str] = {
    GameCreated: "create",
    MoveAppended: "move",
    MovesRetracted: "takeback",
    GameFinished: "finish",
}


class Hub:
    """See the module docstring and docs/protocol.md."""

    def __init__(self, config: HubConfig | None = None, rng: random.Random | None = None) -> None:
        self.config = config or HubConfig()
        self._rng = rng or random.Random()
        self._conns: dict[ConnId, _Connection] = {}
        self._players: dict[PlayerId, _OnlinePlayer] = {}
        self._names: dict[str, PlayerId] = {}
        self._playing: dict[PlayerId, GameId] = {}
        self._seeks = SeekBook(self.config.max_seeks_per_player)
        self._challenges = ChallengeBook(self.config.max_challenges_per_player)
        self._seek_watchers: set[ConnId] = set()
        self._rooms: dict[GameId, GameRoom] = {}
        self._timers = Timers()
        self._tokens: dict[int, tuple[GameId, str]] = {}
        self._last_token = 0
        self._handlers: dict[type, Callable[[_Connection, Any, int, int, list[Effect]], None]] = {
            SeekCommand: self._on_seek,
            UnseekCommand: self._on_unseek,
            SoughtCommand: self._on_sought,
            PlayCommand: self._on_play,
            MatchCommand: self._on_match,
            AcceptCommand: self._on_accept,
            DeclineCommand: self._on_decline,
            WithdrawCommand: self._on_withdraw,
            JoinCommand: self._on_join,
            LeaveCommand: self._on_leave,
            MoveCommand: self._on_move,
            ResignCommand: self._on_resign,
            AbortCommand: self._on_abort,
            ClaimDrawCommand: self._on_claim_draw,
            OfferCommand: self._on_offer,
            AbandonClaimCommand: self._on_abandon_claim,
            ChatCommand: self._on_chat,
        }

    # ================================================================ public API

    def connect(self, conn_id: ConnId, player: PlayerInfo, now_ms: int) -> list[Effect]:
        """A connection of ``player`` opened (identity established by the adapter).

        Sends ``hello``; ends the player's absence in a running game; closes the player's oldest
        connection beyond ``max_connections_per_player``.
        """
        if conn_id in self._conns:
            raise ValueError(f"connection {conn_id} is already connected")
        out: list[Effect] = []
        online = self._players.get(player.id)
        if online is None:
            online = self._players[player.id] = _OnlinePlayer(player)
        elif online.info.name.lower() != player.name.lower():
            self._names.pop(online.info.name.lower(), None)
        online.info = player
        self._names[player.name.lower()] = player.id
        online.conns.append(conn_id)
        self._conns[conn_id] = _Connection(conn_id, player.id)
        while len(online.conns) > self.config.max_connections_per_player:
            oldest = online.conns[0]
            out.append(Close(oldest, "too many connections"))
            self._drop_connection(oldest)
        game_id = self._playing.get(player.id)
        hello: JsonObject = {
            "player": player.view(),
            "game": game_id,
            "seeks": [s.view() for s in self._seeks.of_player(player.id)],
            "challenges": [c.view() for c in self._challenges.involving(player.id)],
        }
        out.append(Send(conn_id, Message("hello", hello)))
        if game_id is not None and len(online.conns) == 1:
            room = self._rooms[game_id]
            side = room.side_of(player.id)
            assert side is not None
            start = len(out)
            out += room.presence(side, True, now_ms)
            self._after_room(room, now_ms, out, start)
        return out

    def disconnect(self, conn_id: ConnId, now_ms: int) -> list[Effect]:
        """A connection closed. When it was the player's last one, the player's seeks and
        challenges vanish and the opponent of a running game sees the absence countdown.
        Unknown or already dropped connection ids are ignored."""
        conn = self._conns.get(conn_id)
        if conn is None:
            return []
        self._drop_connection(conn_id)
        online = self._players[conn.player_id]
        if online.conns:
            return []
        out: list[Effect] = []
        self._player_gone(online.info, now_ms, out)
        return out

    def handle(
        self, conn_id: ConnId, command: Command, now_ms: int, *, lag_ms: int = 0
    ) -> list[Effect]:
        """Run one command of a connection.

        :param lag_ms: the lag the adapter measured for this connection (moves only: it is
            credited to the mover's clock within the lag quota).
        :raises ValueError: ``conn_id`` is not connected (an adapter bug, not a client error).
        """
        conn = self._conns.get(conn_id)
        if conn is None:
            raise ValueError(f"connection {conn_id} is not connected")
        handler = self._handlers[type(command)]
        out: list[Effect] = []
        try:
            handler(conn, command, now_ms, lag_ms, out)
        except CommandError as exc:
            out.append(Send(conn_id, error_message(exc.code, exc.message, command.ack, exc.extra)))
        return out

    def tick(self, now_ms: int) -> list[Effect]:
        """Fire every deadline ``<= now_ms`` (flags, automatic aborts, absence countdowns,
        eviction of finished games)."""
        out: list[Effect] = []
        for key in self._timers.pop_due(now_ms):
            assert isinstance(key, tuple)
            kind, game_id = key
            room = self._rooms.get(game_id)
            if room is None:
                continue
            if kind == "evict":
                self._evict(room)
                continue
            start = len(out)
            out += room.on_time(now_ms)
            self._after_room(room, now_ms, out, start)
        return out

    def next_deadline(self) -> int | None:
        """When :meth:`tick` next has work, or ``None``."""
        return self._timers.next_deadline()

    def persisted(self, token: int, now_ms: int) -> list[Effect]:
        """The store committed ``Persist(token, ...)``: release what waited for it."""
        game_id, kind = self._take_token(token)
        room = self._rooms.get(game_id)
        out: list[Effect] = []
        if room is None:
            return out
        if kind != "create" and room.pending_token() != token:
            raise ValueError(f"persist token {token} is not the pending write of {game_id}")
        if kind == "create":
            self._start_game(room, now_ms, out)
        elif kind == "move":
            out += room.move_persisted(now_ms)
        elif kind == "takeback":
            out += room.takeback_persisted(now_ms)
        else:
            out += room.end_persisted(now_ms)
        self._after_room(room, now_ms, out)
        return out

    def persist_failed(self, token: int, reason: str, now_ms: int) -> list[Effect]:
        """The store could not write ``Persist(token, ...)``.

        A new game is dropped (both players are told, ``game_not_created``); a move or a
        takeback is undone and the player told (``move_not_saved``, ``takeback_not_saved``); a
        player's ending (resignation, agreement, claim, abort) is dropped and the player told
        (``resign_not_saved`` …). A failed ``GameFinished`` with ``server_decided`` changes
        nothing and its token stays valid: the adapter must write it until it is stored (it is
        idempotent by game id), then report :meth:`persisted`.
        """
        game_id, kind = self._take_token(token)
        room = self._rooms.get(game_id)
        out: list[Effect] = []
        if room is None:
            return out
        if kind == "create":
            self._drop_new_game(room, reason, out)
            return out
        if room.pending_token() != token:
            raise ValueError(f"persist token {token} is not the pending write of {game_id}")
        if kind == "move":
            out += room.move_failed(reason, now_ms)
        elif kind == "takeback":
            out += room.takeback_failed(reason, now_ms)
        else:
            out += room.end_failed(reason, now_ms)
            if room.pending_token() == token:
                self._tokens[token] = (game_id, kind)  # still owed: report it when stored
        self._after_room(room, now_ms, out)
        return out

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
    ) -> list[Effect]:
        """Take over an unfinished stored game (after a restart, or from a node that died).

        No ``GameCreated`` is emitted: the row exists. ``players[0]`` moves first. Players
        without a connection here start their absence countdown; the others are told with
        ``game_start`` and joined. See :meth:`GameRoom.restore` for the clocks.

        :param first_version: the version ``v`` of the room's first event (later ones count up
            from it). A driver resuming a game another hub ran gives one above every version
            that hub can have issued, so that a client's pre-takeover version gets a snapshot,
            never a replay of unrelated events with the same numbers.
        :raises ValueError: the game id is in use, a player is already playing here, the
            variant is unknown, a stored move is illegal or ``first_version`` is below 1.
        """
        if game_id in self._rooms:
            raise ValueError(f"game {game_id} is already running here")
        for player in players:
            if player.id in self._playing:
                raise ValueError(f"{player.id} is already playing {self._playing[player.id]}")
        variant = get_variant(terms.variant)
        room = GameRoom(
            game_id,
            variant,
            terms,
            players,
            start_fen,
            self._new_token,
            self.config.room,
            first_version=first_version,
        )
        out: list[Effect] = room.restore(moves, now_ms)
        self._rooms[game_id] = room
        if not room.finished:
            for player in players:
                self._playing[player.id] = game_id
            self._announce_start(room, now_ms, out)
        self._after_room(room, now_ms, out)
        return out

    def set_id_base(self, base: int) -> None:
        """Number new seeks and challenges ``base + 1``, ``base + 2`` … (the default base is 0).

        Hubs that share one lobby (the nodes of a cluster) each take a distinct base, far enough
        apart that no hub reaches another's, so that a seek or challenge id names one thing
        across all of them. Call it before the hub issues any id.

        :raises ValueError: ``base`` is negative, or a seek or challenge id was issued already.
        """
        counters = (self._seeks.ids, self._challenges.ids)
        if any(ids.issued for ids in counters):
            raise ValueError("the id base cannot change once seek or challenge ids were issued")
        for ids in counters:
            ids.set_base(base)

    def set_rating(self, player_id: PlayerId, pool: RatingKey, rating: Rating) -> None:
        """Record a player's new rating in ``pool`` (``(variant, speed)`` or ``variant``), e.g.
        after the store rated a game. Only future seeks and games use it."""
        online = self._players.get(player_id)
        if online is not None:
            online.info = online.info.with_rating(pool, rating)

    # --- read-only views for adapters and tests ---------------------------------------------

    def running_versions(self) -> dict[GameId, int]:
        """The version of the last event of every room whose game is running (a stopping hub
        keeps them, so that the next one continues each room's versions; see
        :meth:`restore_game`'s ``first_version``)."""
        return {gid: room.log.version for gid, room in self._rooms.items() if room.started}

    def room(self, game_id: GameId) -> GameRoom | None:
        return self._rooms.get(game_id)

    def seeks(self) -> list[Seek]:
        return self._seeks.all()

    def challenge(self, challenge_id: int) -> Challenge | None:
        return self._challenges.get(challenge_id)

    def active_game(self, player_id: PlayerId) -> GameId | None:
        return self._playing.get(player_id)

    def online(self, player_id: PlayerId) -> bool:
        return player_id in self._players

    def online_players(self) -> list[PlayerInfo]:
        """Every player with a connection to this hub (in connection order)."""
        return [online.info for online in self._players.values()]

    # ============================================================ connections

    def _drop_connection(self, conn_id: ConnId) -> None:
        conn = self._conns.pop(conn_id)
        for game_id in conn.rooms:
            room = self._rooms.get(game_id)
            if room is not None:
                room.leave(conn_id)
        self._seek_watchers.discard(conn_id)
        self._players[conn.player_id].conns.remove(conn_id)

    def _player_gone(self, info: PlayerInfo, now: int, out: list[Effect]) -> None:
        del self._players[info.id]
        if self._names.get(info.name.lower()) == info.id:
            del self._names[info.name.lower()]
        self._remove_seeks(info.id, out)
        self._cancel_challenges(info.id, "offline", out)
        game_id = self._playing.get(info.id)
        if game_id is not None:
            room = self._rooms[game_id]
            side = room.side_of(info.id)
            assert side is not None
            start = len(out)
            out += room.presence(side, False, now)
            self._after_room(room, now, out, start)

    def _info(self, conn: _Connection) -> PlayerInfo:
        return self._players[conn.player_id].info

    def _send_player(self, player_id: PlayerId, message: Message) -> list[Effect]:
        online = self._players.get(player_id)
        if online is None:
            return []
        return [Send(conn, message) for conn in online.conns]

    # ================================================================= lobby

    def _lobby(self, t: str, data: JsonObject) -> list[Effect]:
        message = Message(t, data)
        effects: list[Effect] = []
        if self._seek_watchers:
            effects.append(Broadcast("lobby", message, tuple(sorted(self._seek_watchers))))
        effects.append(Publish("lobby", message))
        return effects

    def _remove_seeks(self, player_id: PlayerId, out: list[Effect]) -> list[int]:
        removed = [s.id for s in self._seeks.remove_player(player_id)]
        for seek_id in removed:
            out += self._lobby("seek_removed", {"id": seek_id})
        return removed

    def _cancel_challenges(self, player_id: PlayerId, reason: str, out: list[Effect]) -> None:
        for challenge in self._challenges.involving(player_id):
            self._challenges.remove(challenge.id)
            message = Message("challenge_cancelled", {"id": challenge.id, "reason": reason})
            for party in (challenge.sender.id, challenge.target.id):
                out += self._send_player(party, message)

    @staticmethod
    def _variant(name: str) -> Variant:
        try:
            return get_variant(name)
        except KeyError:
            raise CommandError(
                "unknown_variant",
                f"Unknown variant {name!r}; known: {', '.join(VARIANT_NAMES)}.",
            ) from None

    @staticmethod
    def _check_terms(
        player: PlayerInfo, variant: Variant, control: TimeControl, rated: bool
    ) -> None:
        if rated and player.guest:
            raise CommandError(
                "guests_casual_only",
                f"{player.name} is a guest; guests play casual games only.",
            )
        if isinstance(control, Byoyomi) and variant.family != "shogi":
            raise CommandError(
                "byoyomi_unavailable",
                f"Byoyomi is for shogi variants; {variant.title} uses Fischer time.",
            )

    def _check_free(self, player: PlayerInfo, yourself: bool = True) -> None:
        if player.id in self._playing:
            if yourself:
                raise CommandError("already_playing", "Finish your current game first.")
            raise CommandError("player_busy", f"{player.name} is playing a game.")

    def _on_seek(
        self, conn: _Connection, cmd: SeekCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        info = self._info(conn)
        variant = self._variant(cmd.variant)
        self._check_terms(info, variant, cmd.control, cmd.rated)
        self._check_free(info)
        self._seeks.check_room(info.id)
        terms = GameTerms(variant.name, cmd.control, cmd.rated)
        seek = Seek(
            self._seeks.new_id(), info, terms, cmd.colour, cmd.rating_range, cmd.manual, now
        )
        partner = self._seeks.find_partner(seek)
        if partner is None:
            self._seeks.add(seek)
            out += self._lobby("seek_added", seek.view())
            out.append(Send(conn.conn_id, ack_message(cmd.ack, {"seek": seek.id})))
            return
        waiting = self._players[partner.player.id].info
        pair = (waiting, info)
        first = first_mover(partner.colour, seek.colour, self._rng)
        game_id = self._create_game(pair[first], pair[1 - first], terms, now, out)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    def _on_unseek(
        self, conn: _Connection, cmd: UnseekCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        if cmd.seek_id is None:
            removed = self._remove_seeks(conn.player_id, out)
        else:
            seek = self._seeks.get(cmd.seek_id)
            if seek is None or seek.player.id != conn.player_id:
                raise CommandError("no_such_seek", f"You have no open seek {cmd.seek_id}.")
            self._seeks.remove(seek.id)
            out += self._lobby("seek_removed", {"id": seek.id})
            removed = [seek.id]
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"removed": removed})))

    def _on_sought(
        self, conn: _Connection, cmd: SoughtCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        if cmd.watch is True:
            self._seek_watchers.add(conn.conn_id)
        elif cmd.watch is False:
            self._seek_watchers.discard(conn.conn_id)
        data = {
            "seeks": [s.view() for s in self._seeks.all()],
            "watching": conn.conn_id in self._seek_watchers,
        }
        out.append(Send(conn.conn_id, Message("sought", data, a=cmd.ack)))

    def _on_play(
        self, conn: _Connection, cmd: PlayCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        seek = self._seeks.get(cmd.seek_id)
        if seek is None:
            raise CommandError("no_such_seek", f"Seek {cmd.seek_id} is no longer open.")
        info = self._info(conn)
        if seek.player.id == info.id:
            raise CommandError("own_seek", "That is your own seek.")
        self._check_terms(
            info, self._variant(seek.terms.variant), seek.terms.control, seek.terms.rated
        )
        self._check_free(info)
        if not seek.accepts(info):
            low, high = seek.rating_range or (0, 0)
            raise CommandError(
                "rating_out_of_range",
                f"Your rating is outside the seek's range {low}-{high}.",
            )
        owner = self._players[seek.player.id].info
        if seek.manual:
            challenge = self._new_challenge(
                info, owner, seek.terms, opposite(seek.colour), now, seek.id
            )
            out += self._announce_challenge(challenge)
            out.append(Send(conn.conn_id, ack_message(cmd.ack, {"challenge": challenge.id})))
            return
        pair = (owner, info)
        first = first_mover(seek.colour, "random", self._rng)
        game_id = self._create_game(pair[first], pair[1 - first], seek.terms, now, out)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    # ============================================================ challenges

    def _new_challenge(
        self,
        sender: PlayerInfo,
        target: PlayerInfo,
        terms: GameTerms,
        colour: Any,
        now: int,
        seek_id: int | None = None,
    ) -> Challenge:
        self._challenges.check_room(sender.id, target.id)
        challenge = Challenge(
            self._challenges.new_id(), sender, target, terms, colour, now, seek_id
        )
        self._challenges.add(challenge)
        return challenge

    def _announce_challenge(self, challenge: Challenge) -> list[Effect]:
        message = Message("challenge", challenge.view())
        return self._send_player(challenge.target.id, message) + self._send_player(
            challenge.sender.id, message
        )

    def _on_match(
        self, conn: _Connection, cmd: MatchCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        info = self._info(conn)
        target_id = self._names.get(cmd.to.lower())
        if target_id is None:
            raise CommandError("no_such_player", f"No player named {cmd.to!r} is online.")
        if target_id == info.id:
            raise CommandError("self_challenge", "You cannot challenge yourself.")
        target = self._players[target_id].info
        variant = self._variant(cmd.variant)
        self._check_terms(info, variant, cmd.control, cmd.rated)
        self._check_terms(target, variant, cmd.control, cmd.rated)
        self._check_free(info)
        self._check_free(target, yourself=False)
        terms = GameTerms(variant.name, cmd.control, cmd.rated)
        challenge = self._new_challenge(info, target, terms, cmd.colour, now)
        out += self._announce_challenge(challenge)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"challenge": challenge.id})))

    def _own_challenge(self, challenge_id: int, player_id: PlayerId, as_target: bool) -> Challenge:
        challenge = self._challenges.get(challenge_id)
        party = None if challenge is None else (challenge.target if as_target else challenge.sender)
        if challenge is None or party is None or party.id != player_id:
            raise CommandError(
                "no_such_challenge",
                f"There is no open challenge {challenge_id} {'to' if as_target else 'from'} you.",
            )
        return challenge

    def _on_accept(
        self, conn: _Connection, cmd: AcceptCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=True)
        target = self._info(conn)
        sender = self._players[challenge.sender.id].info
        self._check_free(target)
        self._check_free(sender, yourself=False)
        self._challenges.remove(challenge.id)
        pair = (sender, target)
        first = first_mover(challenge.colour, "random", self._rng)
        game_id = self._create_game(pair[first], pair[1 - first], challenge.terms, now, out)
        out += self._send_player(
            sender.id, Message("challenge_accepted", {"id": challenge.id, "game": game_id})
        )
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": game_id})))

    def _on_decline(
        self, conn: _Connection, cmd: DeclineCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=True)
        self._challenges.remove(challenge.id)
        message = Message("challenge_declined", {"id": challenge.id, "reason": cmd.reason})
        out += self._send_player(challenge.sender.id, message)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"id": challenge.id})))

    def _on_withdraw(
        self, conn: _Connection, cmd: WithdrawCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        challenge = self._own_challenge(cmd.challenge_id, conn.player_id, as_target=False)
        self._challenges.remove(challenge.id)
        message = Message("challenge_withdrawn", {"id": challenge.id})
        out += self._send_player(challenge.target.id, message)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"id": challenge.id})))

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
            game_id = "".join(
                self._rng.choice(GAME_ID_ALPHABET) for _ in range(self.config.game_id_length)
            )
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
            self._playing[player.id] = game_id
            self._remove_seeks(player.id, out)
            self._cancel_challenges(player.id, "game started", out)
        token = self._new_token()
        self._tokens[token] = (game_id, "create")

        def stored(player: PlayerInfo) -> GamePlayer:
            rating = None if player.guest else terms.rating_of(player)
            return GamePlayer(
                player.id,
                player.name,
                player.guest,
                None if rating is None else rating.rating,
                None if rating is None else rating.deviation,
            )

        record = GameCreated(
            game_id=game_id,
            variant=variant.name,
            start_fen=room.start_fen,
            control=terms.control,
            rated=terms.rated,
            first=stored(first),
            second=stored(second),
            created_ms=now,
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
            start = Message(
                "game_start",
                {
                    "game": room.game_id,
                    "side": SIDE_NAMES[side],
                    "opponent": room.terms.player_view(opponent),
                },
            )
            for conn_id in online.conns:
                out.append(Send(conn_id, start))
                self._conns[conn_id].rooms.add(room.game_id)
                out += room.join(conn_id, side, None, now)
        out.append(
            Publish(
                "games",
                Message(
                    "game_start",
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
            "game_not_created", f"The game could not be created ({reason}); please try again."
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

    def _find_room(self, game_id: GameId, player_id: PlayerId) -> GameRoom:
        room = self._rooms.get(game_id)
        if room is None or (room.status == "created" and room.side_of(player_id) is None):
            raise CommandError("no_such_game", f"There is no game {game_id!r} here.")
        return room

    def _player_side(self, room: GameRoom, player_id: PlayerId) -> int:
        side = room.side_of(player_id)
        if side is None:
            raise CommandError("not_a_player", "Only the game's players can do that.")
        return side

    def _in_room(
        self,
        conn: _Connection,
        game_id: GameId,
        now: int,
        out: list[Effect],
        action: Callable[[GameRoom, int], list[Effect]],
        ack: AckId | None = None,
        ack_now: bool = True,
    ) -> None:
        """Run a player's action on a room: fire what is due first, then the action, then the
        bookkeeping (also when the action is refused)."""
        room = self._find_room(game_id, conn.player_id)
        side = self._player_side(room, conn.player_id)
        start = len(out)
        try:
            out += room.on_time(now)
            effects = action(room, side)
            out += effects
            # A takeback being written is acknowledged by the room once stored.
            if ack_now and not room.busy:
                out.append(Send(conn.conn_id, ack_message(ack, {"game": game_id})))
        finally:
            self._after_room(room, now, out, start)

    def _on_join(
        self, conn: _Connection, cmd: JoinCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room = self._find_room(cmd.game_id, conn.player_id)
        start = len(out)
        out += room.on_time(now)
        self._after_room(room, now, out, start)
        conn.rooms.add(room.game_id)
        replayed = cmd.since is not None and room.log.since(cmd.since) is not None
        out += room.join(conn.conn_id, room.side_of(conn.player_id), cmd.since, now)
        # ``snapshot``: the connection got the whole state (a ``game`` message) instead of the
        # events after its version, and must replace what it knew.
        data: JsonObject = {"game": room.game_id, "v": room.log.version, "snapshot": not replayed}
        out.append(Send(conn.conn_id, ack_message(cmd.ack, data)))

    def _on_leave(
        self, conn: _Connection, cmd: LeaveCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room = self._rooms.get(cmd.game_id)
        if room is not None:
            room.leave(conn.conn_id)
        conn.rooms.discard(cmd.game_id)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": cmd.game_id})))

    def _on_move(
        self, conn: _Connection, cmd: MoveCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        self._in_room(
            conn,
            cmd.game_id,
            now,
            out,
            lambda room, side: room.move(conn.conn_id, side, cmd.ply, cmd.move, now, lag, cmd.ack),
            ack_now=False,
        )

    def _on_resign(
        self, conn: _Connection, cmd: ResignCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(conn, cmd.game_id, now, out, lambda r, s: r.resign(s, now, asker), cmd.ack)

    def _on_abort(
        self, conn: _Connection, cmd: AbortCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(conn, cmd.game_id, now, out, lambda r, s: r.abort(s, now, asker), cmd.ack)

    def _on_claim_draw(
        self, conn: _Connection, cmd: ClaimDrawCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        asker = (conn.conn_id, cmd.ack)
        self._in_room(
            conn, cmd.game_id, now, out, lambda r, s: r.claim_draw(s, now, asker), cmd.ack
        )

    def _on_abandon_claim(
        self, conn: _Connection, cmd: AbandonClaimCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        self._in_room(
            conn,
            cmd.game_id,
            now,
            out,
            lambda r, s: r.abandon_claim(s, cmd.outcome, now, (conn.conn_id, cmd.ack)),
            cmd.ack,
        )

    def _on_offer(
        self, conn: _Connection, cmd: OfferCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        if cmd.kind == "draw":
            asker = (conn.conn_id, cmd.ack)
            self._in_room(
                conn,
                cmd.game_id,
                now,
                out,
                lambda r, s: r.draw_offer(s, cmd.action, now, asker),
                cmd.ack,
            )
        elif cmd.kind == "takeback":
            self._in_room(
                conn,
                cmd.game_id,
                now,
                out,
                lambda r, s: r.takeback_offer(conn.conn_id, s, cmd.action, now, cmd.ack),
                cmd.ack,
            )
        else:
            self._on_rematch(conn, cmd, now, out)

    def _on_rematch(
        self, conn: _Connection, cmd: OfferCommand, now: int, out: list[Effect]
    ) -> None:
        room = self._find_room(cmd.game_id, conn.player_id)
        side = self._player_side(room, conn.player_id)
        room.check_rematch(side, cmd.action, now)
        if cmd.action != "decline":
            me = self._info(conn)
            opponent_id = room.players[1 - side].id
            opponent = self._players.get(opponent_id)
            if opponent is None:
                raise CommandError("opponent_offline", "Your opponent is not online.")
            self._check_free(me)
            self._check_free(opponent.info, yourself=False)
        agreed, effects = room.rematch_offer(side, cmd.action, now)
        out += effects
        data: JsonObject = {"game": room.game_id}
        if agreed:
            # Colours swap: the old second player moves first.
            first = self._players[room.players[1].id].info
            second = self._players[room.players[0].id].info
            new_game = self._create_game(first, second, room.terms, now, out)
            out += room.rematch_started(new_game)
            data["new_game"] = new_game
        out.append(Send(conn.conn_id, ack_message(cmd.ack, data)))

    def _on_chat(
        self, conn: _Connection, cmd: ChatCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        text = cmd.text.strip()
        if not text:
            raise CommandError("empty_message", "A chat line needs some text.")
        room = self._find_room(cmd.game_id, conn.player_id)
        if conn.conn_id not in room.members:
            raise CommandError("not_joined", "Join the game before chatting in it.")
        out += room.chat_line(room.side_of(conn.player_id), self._info(conn), text)
        out.append(Send(conn.conn_id, ack_message(cmd.ack, {"game": room.game_id})))
