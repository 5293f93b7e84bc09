"""What the hub holds (connections, players, lobby books, rooms, timers, persist tokens) and
the helpers every part of it uses (sending to a player, lobby broadcasts, freeing a player's seeks
and challenges).

One :class:`HubState` is shared by the parts of the :class:`~server.hub.hub.Hub`, each a field
of it: ``games`` (:mod:`server.hub.hub_games`), ``lobby`` (:mod:`server.hub.hub_lobby`) and
``rooms`` (:mod:`server.hub.hub_rooms`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from server.hub.effects import (
    Broadcast,
    ConnId,
    Effect,
    GameId,
    OfferDropped,
    OfferStored,
    Publish,
    Send,
)
from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import (
    MAX_SEEKS_PER_PLAYER,
    MAX_STORED_CHALLENGES,
    MAX_STORED_SEEKS,
    Challenge,
    ChallengeBook,
    Seek,
    SeekBook,
    new_offer_key,
)
from server.hub.messages import Message, MessageKind, Payload, error_message
from server.hub.persist_tokens import PersistTokens
from server.hub.room import GameRoom, RoomSettings
from server.hub.timers import Timers


@dataclass(frozen=True)
class HubConfig:
    """Limits and timings of the hub (all times in milliseconds)."""

    max_seeks_per_player: int = MAX_SEEKS_PER_PLAYER
    max_challenges_per_player: int = 3
    max_correspondence_seeks: int = MAX_STORED_SEEKS
    """Stored correspondence seeks a registered player may have at once (beside the others)."""
    max_correspondence_challenges: int = MAX_STORED_CHALLENGES
    """Stored correspondence challenges a registered player may have sent at once."""
    max_connections_per_player: int = 10
    max_guest_computer_games: int = 10
    """Games guests play against the computer at once (on this hub): a guest costs nothing to
    make, and the computer's time is shared by everybody (docs/engines.md)."""
    max_correspondence_games: int = 200
    """Correspondence games a player plays at once (besides at most one real-time game)."""
    ask_owner_games: bool = False
    """Before a game starts from the stored seek or challenge of a player whose stored
    correspondence games the hub has no list of (absent: no connection here), ask the adapter
    for them (``GamesWanted``), so that the limit counts them; False: the games in memory
    count (a hub without a store)."""
    finished_room_ttl_ms: int = 15 * 60_000
    """How long a finished game stays in memory (final state, post-game chat, rematch)."""
    room: RoomSettings = field(default_factory=RoomSettings)


class OwnerGamesUnknown(Exception):
    """:meth:`HubState.check_owner_free` needs the stored games of ``player``; nothing has
    changed yet (the hub answers ``GamesWanted``)."""

    def __init__(self, player: PlayerInfo) -> None:
        super().__init__(player.id)
        self.player = player


@dataclass
class Connection:
    conn_id: ConnId
    player_id: PlayerId
    rooms: set[GameId] = field(default_factory=set)


@dataclass
class OnlinePlayer:
    """A player with a connection to this hub: who they are, and their connections."""

    info: PlayerInfo
    conns: list[ConnId] = field(default_factory=list)


class HubState:
    """The hub's state and shared helpers (see the module docstring)."""

    def __init__(self, config: HubConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self.conns: dict[ConnId, Connection] = {}
        self.players: dict[PlayerId, OnlinePlayer] = {}
        """Every player with a connection here (in connection order)."""
        self.names: dict[str, PlayerId] = {}
        """The online players by lower-case name."""
        self.playing: dict[PlayerId, GameId] = {}
        """The running (or starting) real-time game of each player (the computer's games are
        not): one at most."""
        self.correspondence: dict[PlayerId, set[GameId]] = {}
        """The running (or starting) correspondence games of each player who has some (the
        computer's are not): up to ``config.max_correspondence_games``."""
        self.stored_correspondence: dict[PlayerId, set[GameId]] = {}
        """An online player's running correspondence games as the store listed them when the
        player connected (the adapter reads them: most are cold, not in memory), kept while
        the player is online: a game ended here leaves it, a room unloaded joins it. With
        :attr:`correspondence` it makes the player's lists and the limit's count."""
        self.owner_games: Mapping[PlayerId, frozenset[GameId]] = {}
        """While a command runs again after ``GamesWanted``: the running correspondence games
        the store lists for offer owners the hub has no list of (as
        :attr:`stored_correspondence`, for that command only)."""
        self.seeks = SeekBook(config.max_seeks_per_player, config.max_correspondence_seeks)
        self.challenges = ChallengeBook(
            config.max_challenges_per_player, config.max_correspondence_challenges
        )
        self.seek_watchers: set[ConnId] = set()
        self.rooms: dict[GameId, GameRoom] = {}
        self.timers = Timers()
        """One deadline per ``("room", id)`` (the room's next) and ``("evict", id)``."""
        self.tokens = PersistTokens()
        self._last_offer_token = 0
        self.unwritten_offers: dict[int, Seek | Challenge] = {}
        """New stored offers whose row is not written yet, by the token of the write (dropped
        again if it fails)."""
        self.held_answers: dict[int, Send] = {}
        """The answer to a command that made or withdrew a stored offer, by the token of the
        write it waits for (:meth:`answer_after_writes`)."""
        self.consuming: dict[GameId, list[Seek | Challenge]] = {}
        """The stored offers a game being created answers, by its id, until its row's write
        is reported: their rows go in that write's transaction (``GameCreated.consumed_offers``);
        if it fails they are open again (:meth:`reopen_offers`), unless their rows are no
        longer this node's."""

    # ============================================================ connections

    def drop_connection(self, conn_id: ConnId) -> None:
        conn = self.conns.pop(conn_id)
        for game_id in conn.rooms:
            room = self.rooms.get(game_id)
            if room is not None:
                room.state.leave(conn_id)
        self.seek_watchers.discard(conn_id)
        self.players[conn.player_id].conns.remove(conn_id)

    def info(self, conn: Connection) -> PlayerInfo:
        return self.players[conn.player_id].info

    def send_player(self, player_id: PlayerId, message: Message) -> list[Effect]:
        online = self.players.get(player_id)
        if online is None:
            return []
        return [Send(conn, message) for conn in online.conns]

    # ================================================================= lobby

    def lobby_event(self, t: str, data: Payload) -> list[Effect]:
        message = Message(t, data)
        effects: list[Effect] = []
        if self.seek_watchers:
            effects.append(Broadcast("lobby", message, tuple(sorted(self.seek_watchers))))
        effects.append(Publish("lobby", message))
        return effects

    def offer_key(self, player: PlayerInfo, correspondence: bool) -> str | None:
        """The store key of a new seek or challenge of ``player``: one for a registered
        player's correspondence offer (stored: it outlives the connection), else ``None``."""
        if not correspondence or player.guest or player.computer:
            return None
        return new_offer_key(self.rng)

    def _offer_token(self) -> int:
        self._last_offer_token += 1
        return self._last_offer_token

    def _stored(self, offer: Seek | Challenge, out: list[Effect]) -> None:
        token = self._offer_token()
        self.unwritten_offers[token] = offer
        out.append(OfferStored(offer, token))

    def _dropped(self, key: str, out: list[Effect]) -> None:
        out.append(OfferDropped(key, self._offer_token()))

    def _gone(
        self, offer: Seek | Challenge, out: list[Effect], consumed: list[Seek | Challenge] | None
    ) -> None:
        """A stored offer is no longer open: its row is deleted by a write of its own
        (``OfferDropped``), or, when a game answers it (``consumed``: the game's list), in the
        transaction of the game's row. An offer whose insert is not reported yet has a write of
        its own all the same: queued after the insert (the game's write is not ordered with
        it)."""
        assert offer.key is not None
        if consumed is not None and not any(o is offer for o in self.unwritten_offers.values()):
            consumed.append(offer)
        else:
            self._dropped(offer.key, out)

    def open_seek(self, seek: Seek, out: list[Effect], *, restored: bool = False) -> None:
        """Add ``seek`` to the book (within the limits unless ``restored``), announce it, and
        have a stored one written (unless ``restored``: it was read from the store)."""
        self.seeks.add(seek, check=not restored)
        if seek.key is not None and not restored:
            self._stored(seek, out)
        out += self.lobby_event(MessageKind.SEEK_ADDED, seek.view())

    def drop_seek(
        self, seek: Seek, out: list[Effect], consumed: list[Seek | Challenge] | None = None
    ) -> None:
        """Remove an open seek, announce it, and have a stored one deleted (``consumed``: a
        game answers it, see :meth:`_gone`)."""
        if self.seeks.remove(seek.id) is None:
            return
        if seek.key is not None:
            self._gone(seek, out, consumed)
        out += self.lobby_event(MessageKind.SEEK_REMOVED, {"id": seek.id})

    def open_challenge(
        self, challenge: Challenge, out: list[Effect], *, restored: bool = False
    ) -> None:
        """Add ``challenge`` (see :meth:`open_seek`); the parties are told by the caller."""
        self.challenges.add(challenge, check=not restored)
        if challenge.key is not None and not restored:
            self._stored(challenge, out)

    def drop_challenge(
        self,
        challenge: Challenge,
        out: list[Effect],
        consumed: list[Seek | Challenge] | None = None,
    ) -> None:
        """Remove an open challenge and have a stored one deleted (the parties are told by
        the caller; ``consumed``: a game answers it, see :meth:`_gone`)."""
        if self.challenges.remove(challenge.id) is not None and challenge.key is not None:
            self._gone(challenge, out, consumed)

    def reopen_offers(
        self, game_id: GameId, out: list[Effect], keep_closed: Sequence[str] = ()
    ) -> None:
        """The row of the new game ``game_id`` was not written: the stored offers it answered
        are open again as they were (their rows are still there), announced like new ones;
        but those whose keys are in ``keep_closed`` (their rows are no longer this node's:
        forgotten)."""
        for offer in self.consuming.pop(game_id, ()):
            if offer.key in keep_closed:
                continue
            if isinstance(offer, Seek):
                self.open_seek(offer, out, restored=True)
                continue
            self.open_challenge(offer, out, restored=True)
            message = Message(MessageKind.CHALLENGE, offer.view())
            out += self.send_player(offer.target.id, message)
            out += self.send_player(offer.sender.id, message)

    def answer_after_writes(self, out: list[Effect], answer: Send) -> None:
        """Answer a command once the last offer write it asked for (in ``out``) is reported
        (acknowledged means stored), or now if it asked for none. The adapter writes the
        offers in order, so the last one's report comes after the others'."""
        for effect in reversed(out):
            if isinstance(effect, OfferStored | OfferDropped):
                self.held_answers[effect.token] = answer
                return
        out.append(answer)

    def offer_written(self, token: int) -> list[Effect]:
        """The offer write ``token`` committed: release the answer that waited for it."""
        self.unwritten_offers.pop(token, None)
        answer = self.held_answers.pop(token, None)
        return [] if answer is None else [answer]

    def offer_failed(self, token: int, reason: str) -> list[Effect]:
        """The new stored offer of write ``token`` was not written: it is no longer open
        (``seek_removed``; a challenge's parties get ``challenge_cancelled``, reason ``not
        saved``) and the command that made it is answered ``offer_not_saved``. An offer
        answered meanwhile (a game started from it) keeps its answer: nothing is lost."""
        offer = self.unwritten_offers.pop(token, None)
        answer = self.held_answers.pop(token, None)
        out: list[Effect] = []
        still_open = offer is not None and (
            self.seeks.get(offer.id) is offer
            if isinstance(offer, Seek)
            else self.challenges.get(offer.id) is offer
        )
        if not still_open:
            return [] if answer is None else [answer]
        if isinstance(offer, Seek):
            self.seeks.remove(offer.id)
            out += self.lobby_event(MessageKind.SEEK_REMOVED, {"id": offer.id})
        elif isinstance(offer, Challenge):
            self.challenges.remove(offer.id)
            message = Message(
                MessageKind.CHALLENGE_CANCELLED, {"id": offer.id, "reason": "not saved"}
            )
            for party in (offer.sender.id, offer.target.id):
                out += self.send_player(party, message)
        if answer is not None:
            text = f"{ErrorCode.OFFER_NOT_SAVED.text} ({reason})"
            error = error_message(ErrorCode.OFFER_NOT_SAVED, text, answer.message.a)
            out.append(Send(answer.conn_id, error))
        return out

    def remove_seeks(
        self, player_id: PlayerId, out: list[Effect], *, stored: bool = True
    ) -> list[int]:
        """Remove the player's seeks (the stored ones too unless ``stored`` is False)."""
        removed = self.seeks.remove_player(player_id, stored=stored)
        for seek in removed:
            if seek.key is not None:
                self._dropped(seek.key, out)
            out += self.lobby_event(MessageKind.SEEK_REMOVED, {"id": seek.id})
        return [seek.id for seek in removed]

    def cancel_challenges(
        self, player_id: PlayerId, reason: str, out: list[Effect], *, stored: bool = True
    ) -> None:
        """Cancel the challenges from and to the player (the stored ones too unless
        ``stored`` is False)."""
        for challenge in self.challenges.involving(player_id):
            if challenge.stored and not stored:
                continue
            self.drop_challenge(challenge, out)
            message = Message(
                MessageKind.CHALLENGE_CANCELLED, {"id": challenge.id, "reason": reason}
            )
            for party in (challenge.sender.id, challenge.target.id):
                out += self.send_player(party, message)

    def info_of(self, player: PlayerInfo) -> PlayerInfo:
        """The player as known now: online, their connection's; offline (a stored offer's
        owner), as the offer knew them."""
        online = self.players.get(player.id)
        return player if online is None else online.info

    def guest_computer_games(self) -> int:
        """How many running (or starting) games a guest plays against the computer here."""
        count = 0
        for game_id in self.playing.values():
            room = self.rooms.get(game_id)
            if room is not None and not room.finished:
                first, second = room.players
                if (first.computer and second.guest) or (second.computer and first.guest):
                    count += 1
        return count

    def add_game(self, player: PlayerInfo, game_id: GameId, correspondence: bool) -> None:
        """``player`` plays ``game_id`` (a real-time game takes the one slot)."""
        if player.computer:  # the computer plays any number of games at once
            return
        if correspondence:
            self.correspondence.setdefault(player.id, set()).add(game_id)
        else:
            self.playing[player.id] = game_id

    def drop_game(self, player_id: PlayerId, game_id: GameId) -> None:
        """``player_id`` no longer plays ``game_id`` (it ended or was never created)."""
        if self.playing.get(player_id) == game_id:
            del self.playing[player_id]
            return
        stored = self.stored_correspondence.get(player_id)
        if stored is not None:
            stored.discard(game_id)
        games = self.correspondence.get(player_id)
        if games is not None:
            games.discard(game_id)
            if not games:
                del self.correspondence[player_id]

    def correspondence_of(self, player_id: PlayerId) -> set[GameId]:
        """A player's running correspondence games: those in memory and those the store
        listed at the player's connection (:attr:`stored_correspondence`)."""
        games = self.correspondence.get(player_id, set())
        stored: set[GameId] | frozenset[GameId] | None = self.stored_correspondence.get(player_id)
        if stored is None and self.owner_games:
            stored = self.owner_games.get(player_id)
        return games | stored if stored else games

    def games_of(self, player_id: PlayerId) -> list[GameId]:
        """Every running game of a player: the real-time one first, then the correspondence
        games in id order."""
        games = sorted(self.correspondence_of(player_id))
        current = self.playing.get(player_id)
        return games if current is None else [current, *games]

    def check_owner_free(self, owner: PlayerInfo, *, correspondence: bool) -> None:
        """:meth:`check_free` for the owner of a seek or challenge being answered (maybe
        absent). With ``config.ask_owner_games``, a registered player the hub has no stored
        list of is counted with the store's (:attr:`owner_games`), asked for first.

        :raises OwnerGamesUnknown: that list is needed and not given (nothing has changed).
        """
        if (
            correspondence
            and self.config.ask_owner_games
            and not (owner.guest or owner.computer)
            and owner.id not in self.stored_correspondence
            and owner.id not in self.owner_games
        ):
            raise OwnerGamesUnknown(owner)
        self.check_free(owner, yourself=False, correspondence=correspondence)

    def check_free(
        self, player: PlayerInfo, yourself: bool = True, *, correspondence: bool = False
    ) -> None:
        """Refuse a new game for ``player``: a real-time one while it plays one, a
        correspondence one at its limit of correspondence games."""
        if correspondence:
            limit = self.config.max_correspondence_games
            if player.computer or len(self.correspondence_of(player.id)) < limit:
                return
            if yourself:
                raise CommandError(
                    ErrorCode.CORRESPONDENCE_LIMIT,
                    f"You play {limit} correspondence games, the most at once; finish one first.",
                )
            raise CommandError(
                ErrorCode.PLAYER_BUSY,
                f"{player.name} plays {limit} correspondence games, the most at once.",
            )
        if player.id in self.playing:
            if yourself:
                raise CommandError(ErrorCode.ALREADY_PLAYING)
            raise CommandError(ErrorCode.PLAYER_BUSY, f"{player.name} is playing a game.")
