"""A bot's hub connection: the HTTP API's peer of the :class:`HubDriver`.

Each account using the API on this process has one :class:`BotLink`: a connection to the hub
(``driver.connect``) like a websocket's, kept while the bot holds a stream or a request is in
flight (and :data:`LINGER_S` after). Its POSTs become the hub commands a websocket frame would
(read by the same :func:`~server.hub.incoming.read_frame` as a websocket frame, so one
schema checks both doors), sent with an ack id of
the link's: the HTTP answer waits for the hub's ``ack`` or ``error`` for that id — a move's ack
comes only once it is stored. The hub's messages arrive as encoded frames (:meth:`put`, the
``FrameSink``) and are turned into lichess events for the link's open NDJSON streams
(:class:`NdjsonStream`): each holds a bounded queue, and a stream whose reader falls
:data:`MAX_QUEUED` lines behind is dropped (its connection aborted at once), never buffered
without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable
from typing import Any, Literal, cast

from server.config import Settings
from server.hub.commands import Command
from server.hub.errors import ErrorCode, ProtocolError
from server.hub.identity import PlayerInfo
from server.hub.incoming import read_frame
from server.hub.payloads import (
    AckPayload,
    BackPayload,
    ChallengeOverPayload,
    ChallengeView,
    ChatPayload,
    EndPayload,
    GameSnapshot,
    GameStartPayload,
    GonePayload,
    HelloPayload,
    MovePayload,
    OfferPayload,
    TakebackPayload,
)
from server.jsontypes import JsonObject
from server.transport.codec import DecodeError, decode
from server.transport.driver import HubDriver
from server.transport.http_api import lichess
from server.transport.ratelimit import TokenBucket, Verdict

__all__ = ["BotLink", "BotLinks", "CommandFailed", "NdjsonStream"]

logger = logging.getLogger(__name__)

LINGER_S = 5.0
"""A link with no stream and no request left disconnects from the hub after this long."""
ANSWER_TIMEOUT_S = 30.0
MAX_QUEUED = 256
"""Lines a stream may hold unwritten; one more and its reader is dropped (too slow)."""
KEEPALIVE_S = 6.0
"""A blank line after this long without output (lichess: at least every 7 s)."""

_STATUS: dict[ErrorCode, int] = {
    ErrorCode.NO_SUCH_GAME: 404,
    ErrorCode.NO_SUCH_CHALLENGE: 404,
    ErrorCode.NO_SUCH_PLAYER: 404,
    ErrorCode.NO_SUCH_TOURNAMENT: 404,
    ErrorCode.RATE_LIMITED: 429,
    ErrorCode.TOURNAMENT_LIMIT: 429,
    ErrorCode.TOURNAMENT_ENTRY_LIMIT: 429,
    ErrorCode.BUSY: 503,
    ErrorCode.NODE_UNAVAILABLE: 503,
    ErrorCode.CLUSTER_UNAVAILABLE: 503,
    ErrorCode.UNAVAILABLE: 503,
}


class CommandFailed(Exception):
    """The hub refused a command: ``status`` (lichess-style) and the hub's message."""

    def __init__(self, status: int, code: ErrorCode, message: str, data: JsonObject) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.data = data


def status_of_code(code: ErrorCode) -> int:
    if code in _STATUS:
        return _STATUS[code]
    if code.endswith("_not_saved") or code == ErrorCode.GAME_NOT_CREATED:
        return 503
    return 400


class NdjsonStream:
    """One open NDJSON response's queue of lines (see the module docstring)."""

    __slots__ = ("_queue", "dropped", "ended", "game_id", "on_drop")

    def __init__(self, game_id: str | None = None) -> None:
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(MAX_QUEUED)
        self.game_id = game_id
        self.dropped = False
        self.ended = False
        self.on_drop: Callable[[], None] | None = None
        """Called once when the stream is dropped: its writer may be blocked on a socket that
        is not read (waiting for it to drain), so the connection is cut from here."""

    def send(self, event: lichess.StreamLine) -> None:
        self._put(_line(event))

    def end(self) -> None:
        """No more lines: the response ends once the queued ones are written."""
        if not self.ended:
            self.ended = True
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(None)
            if self._queue.full():
                self._drop()

    def _put(self, line: bytes) -> None:
        if self.ended or self.dropped:
            return
        try:
            self._queue.put_nowait(line)
        except asyncio.QueueFull:
            self._drop()

    def _drop(self) -> None:
        if self.dropped:
            return
        self.dropped = True
        self._queue = asyncio.Queue(1)  # the unwritten lines are freed at once
        if self.on_drop is not None:
            self.on_drop()

    async def next_line(self) -> bytes | None:
        """The next line, a keep-alive blank line after :data:`KEEPALIVE_S`, or ``None`` at
        the end."""
        if self.dropped:
            return None
        try:
            return await asyncio.wait_for(self._queue.get(), KEEPALIVE_S)
        except TimeoutError:
            return b"\n"


def _line(event: lichess.StreamLine) -> bytes:
    import json

    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class BotLink:
    """One account's hub connection on this process (see the module docstring)."""

    def __init__(self, links: BotLinks, info: PlayerInfo) -> None:
        self._links = links
        self.info = info
        self.name = info.name
        driver = links.driver
        self._driver = driver
        self.conn_id = driver.new_conn_id()
        self._acks = itertools.count(1)
        self._pending: dict[str, asyncio.Future[AckPayload]] = {}
        self.hello: asyncio.Future[HelloPayload] = asyncio.get_running_loop().create_future()
        self.events: set[NdjsonStream] = set()
        self.game_streams: set[NdjsonStream] = set()
        self.games: dict[str, GameSnapshot] = {}
        """Games this connection follows: the last snapshot, kept up to date by room events."""
        self.challenges: dict[int, ChallengeView] = {}
        self.running_games: list[str] = []
        """The account's running games: the real-time one (at most one), then the
        correspondence games, in the order the hub told them."""
        self._starting: set[str] = set()
        """Games whose ``game_start`` came and whose first snapshot (``gameStart``) has not."""
        self._busy = 0
        self._linger: asyncio.TimerHandle | None = None
        self._cancelled_offers: dict[str, asyncio.Handle] = {}
        """Games whose offer was cancelled this turn and whose ``gameState`` waits for its end."""
        self.closed = False
        settings = links.settings
        self._bucket = TokenBucket(
            settings.rate_limit_per_s, settings.rate_limit_burst, asyncio.get_running_loop().time()
        )
        driver.connect(self.conn_id, self, info)

    # --- Peer / FrameSink ---------------------------------------------------------------------

    @property
    def outbox(self) -> BotLink:
        return self

    def close(self) -> None:
        """The driver forgot this connection."""
        self._gone()

    def close_soon(self, code: int, reason: str) -> None:
        self._gone()

    def _gone(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._links.forget(self)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(
                    CommandFailed(
                        503, ErrorCode.UNAVAILABLE, "The hub connection closed; retry.", {}
                    )
                )
        for stream in [*self.events, *self.game_streams]:
            stream.end()

    def put(self, frame: bytes) -> None:
        try:
            message = decode(frame)
        except DecodeError:  # pragma: no cover - the hub only emits JSON
            return
        if not isinstance(message, dict):
            return
        try:
            self._on_message(message)
        except Exception:  # pragma: no cover - a bug: keep the link, log it
            logger.exception("Bot API: translating %s failed", message.get("t"))

    # --- commands -----------------------------------------------------------------------------

    async def command(self, kind: str, payload: JsonObject) -> AckPayload:
        """Send one hub command; its ack's payload, or :class:`CommandFailed`."""
        if self.closed:
            raise CommandFailed(503, ErrorCode.UNAVAILABLE, "The hub connection closed; retry.", {})
        verdict = self._bucket.take(asyncio.get_running_loop().time())
        if verdict is not Verdict.ACCEPT:
            raise CommandFailed(429, ErrorCode.RATE_LIMITED, "Too many requests; slow down.", {})
        ack = f"b{next(self._acks)}"
        try:
            command = read_frame({"t": kind, "d": payload, "a": ack})
        except ProtocolError as error:
            raise CommandFailed(400, error.code, str(error), {}) from None
        if not isinstance(command, Command):  # the routes name hub commands only
            raise CommandFailed(400, ErrorCode.BAD_REQUEST, f"unknown command type {kind!r}", {})
        future: asyncio.Future[AckPayload] = asyncio.get_running_loop().create_future()
        self._pending[ack] = future
        self.hold()
        try:
            self._driver.handle(self.conn_id, command)
            return await asyncio.wait_for(future, ANSWER_TIMEOUT_S)
        except TimeoutError:
            raise CommandFailed(
                504, ErrorCode.TIMEOUT, "The hub did not answer in time.", {}
            ) from None
        finally:
            self._pending.pop(ack, None)
            self.release()

    async def follow(self, game_id: str) -> GameSnapshot:
        """The game as this connection sees it, joining its room first if needed."""
        game = self.games.get(game_id)
        if game is None:
            await self.command("join", {"game": game_id})
            game = self.games.get(game_id)
            if game is None:  # pragma: no cover - the hub sends the snapshot before the ack
                raise CommandFailed(404, ErrorCode.NO_SUCH_GAME, "No such game", {})
        return game

    async def running_starts(self, limit: int | None = None) -> list[lichess.GameEvent]:
        """The ``gameStart`` events of the account's running games (``nowPlaying``; the event
        stream's first lines): the real-time one, then the correspondence games; the first
        ``limit`` of them if given."""
        starts: list[lichess.GameEvent] = []
        for game_id in list(self.running_games)[:limit]:
            try:
                game = await self.follow(game_id)
            except CommandFailed:
                continue
            role = game["role"]
            if role != "spectator" and game["status"] == "started":
                starts.append(lichess.game_event("gameStart", game, role))
        # The real-time game first (stable: the correspondence games keep their order).
        starts.sort(key=lambda start: start["game"]["speed"] == "correspondence")
        return starts

    # --- keeping the connection ---------------------------------------------------------------

    def hold(self) -> None:
        self._busy += 1
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None

    def release(self) -> None:
        self._busy -= 1
        if self._busy <= 0 and not self.closed:
            self._linger = asyncio.get_running_loop().call_later(LINGER_S, self._idle)

    def _idle(self) -> None:
        self._linger = None
        if self._busy <= 0 and not self.closed:
            self._driver.disconnect(self.conn_id)
            self._gone()

    # --- the hub's messages -------------------------------------------------------------------

    def _on_message(self, message: JsonObject) -> None:
        """One hub message (decoded off the frame the hub encoded): its handler gets the
        payload of its kind."""
        kind = message.get("t")
        data = message.get("d") or {}
        ack = message.get("a")
        if isinstance(ack, str) and ack in self._pending and kind in ("ack", "error"):
            future = self._pending[ack]
            if not future.done():
                if kind == "ack":
                    future.set_result(cast(AckPayload, data))
                else:
                    code = ErrorCode.of(data.get("code")) or ErrorCode.INTERNAL_ERROR
                    future.set_exception(
                        CommandFailed(
                            status_of_code(code), code, str(data.get("message", code)), data
                        )
                    )
            return
        handler = _HANDLERS.get(str(kind))
        if handler is not None:
            handler(self, data)

    def _hello(self, data: HelloPayload) -> None:
        current = data.get("game")
        self.running_games = ([] if current is None else [current]) + list(
            data.get("correspondence") or []
        )
        for challenge in data.get("challenges") or []:
            self.challenges[challenge["id"]] = challenge
        if not self.hello.done():
            self.hello.set_result(data)

    def _challenge(self, data: ChallengeView) -> None:
        self.challenges[data["id"]] = data
        self._event({"type": "challenge", "challenge": lichess.challenge_view(data)})

    def _game_start(self, data: GameStartPayload) -> None:
        game_id = str(data.get("game"))
        if game_id not in self.running_games:
            self.running_games.append(game_id)
        # The snapshot follows at once (the hub joins the players' connections): gameStart is
        # sent from it, when the game's terms are known.
        self.games.pop(str(data.get("game")), None)
        self._starting.add(str(data.get("game")))

    def _snapshot(self, data: GameSnapshot) -> None:
        game_id = data["game"]
        role = data["role"]
        if (
            game_id not in self.games
            and game_id not in self.running_games
            and data.get("tournament") is not None
            and role != "spectator"
        ):
            # A tournament game created on another hub of a cluster: this connection is
            # joined to it with its snapshot only (no game_start): that is its start here.
            self.running_games.append(game_id)
            self._starting.add(game_id)
        self.games[game_id] = data.copy()
        if game_id in self._starting:
            self._starting.discard(game_id)
            if role != "spectator" and data["status"] == "started":
                self._event(lichess.game_event("gameStart", data, role))
        # A stream already open has had its gameFull: a snapshot arriving now (another stream
        # of this game joined again, or the room was resent after a move between servers) is
        # the same game's state, not a new start.
        for stream in self.game_streams:
            if stream.game_id == game_id:
                stream.send(lichess.game_state(data))

    def _room_event(self, data: MoveOrTakeback, update: Callable[[GameSnapshot], None]) -> None:
        game = self.games.get(data["game"])
        if game is None:
            return
        update(game)
        self._state(game)

    def _move(self, data: MovePayload) -> None:
        def update(game: GameSnapshot) -> None:
            moves = list(game["moves"])
            if data["ply"] == len(moves) + 1:
                moves.append(data["uci"])
            game["moves"] = moves
            game["fen"] = data["fen"]
            game["turn"] = data["turn"]
            game["clocks"] = data["clocks"]
            offers = game["offers"].copy()
            mover = data["side"]
            # A move cancels a pending takeback offer and declines the opponent's draw offer.
            offers["takeback"] = None
            if offers.get("draw") not in (None, mover):
                offers["draw"] = None
            game["offers"] = offers

        self._room_event(data, update)

    def _takeback(self, data: TakebackPayload) -> None:
        def update(game: GameSnapshot) -> None:
            game["moves"] = list(game["moves"])[: data["ply"]]
            game["fen"] = data["fen"]
            game["turn"] = data["turn"]
            game["clocks"] = data["clocks"]
            game["offers"] = {**game["offers"], "takeback": None}

        self._room_event(data, update)

    def _offer(self, data: OfferPayload) -> None:
        kind, action = data["kind"], data["action"]
        if kind == "rematch":
            return

        game = self.games.get(data["game"])
        if game is None:
            return
        offers = game["offers"].copy()
        offers[kind] = data["side"] if action == "offer" else None
        game["offers"] = offers
        # An accepted offer is followed at once by what it agreed to (the end, the takeback),
        # whose gameState shows it: one line for the agreement, as lichess sends, not a first
        # one with the offer gone and the game seemingly going on. A cancel mostly comes with
        # the move that caused it, in the same turn: its line waits for the turn's end, and the
        # move's line, which shows the offer gone too, replaces it.
        if action == "cancel":
            game_id = game["game"]
            if game_id not in self._cancelled_offers:
                self._cancelled_offers[game_id] = asyncio.get_running_loop().call_soon(
                    self._cancelled_state, game_id
                )
        elif action != "accept":
            self._state(game)

    def _cancelled_state(self, game_id: str) -> None:
        self._cancelled_offers.pop(game_id, None)
        game = self.games.get(game_id)
        if game is not None:
            self._state(game)

    def _end(self, data: EndPayload) -> None:
        game = self.games.get(data["game"])
        if game is None:
            return
        game["status"] = "finished"
        game["result"] = data["result"]
        game["winner"] = data["winner"]
        game["termination"] = data["termination"]
        game["clocks"] = data["clocks"]
        game["offers"] = {"draw": None, "takeback": None, "rematch": None}
        self._state(game)
        role = game["role"]
        if role != "spectator":
            self._event(lichess.game_event("gameFinish", game, role))
        if game["game"] in self.running_games:
            self.running_games.remove(game["game"])
        for stream in list(self.game_streams):
            if stream.game_id == game["game"]:
                stream.end()
        del self.games[game["game"]]  # a later request about it joins the room again

    def _chat(self, data: ChatPayload) -> None:
        line: lichess.ChatLineEvent = {
            "type": "chatLine",
            "room": "player" if data.get("room") == "players" else "spectator",
            "username": data.get("user"),
            "text": data.get("text"),
        }
        self._to_game(str(data.get("game")), line)

    # --- to the streams -----------------------------------------------------------------------

    def _event(self, event: lichess.EventStreamLine) -> None:
        for stream in self.events:
            stream.send(event)

    def _state(self, game: GameSnapshot) -> None:
        waiting = self._cancelled_offers.pop(game["game"], None)
        if waiting is not None:
            waiting.cancel()
        self._to_game(game["game"], lichess.game_state(game))

    def _to_game(self, game_id: str, event: lichess.GameStreamLine) -> None:
        for stream in self.game_streams:
            if stream.game_id == game_id:
                stream.send(event)


def _challenge_over(
    status: str, event: Literal["challengeDeclined", "challengeCanceled"] | None
) -> Callable[[BotLink, ChallengeOverPayload], None]:
    """The handler of a message ending a challenge: the link forgets it and, unless ``event`` is
    None, tells the event stream."""

    def handle(link: BotLink, data: ChallengeOverPayload) -> None:
        known = link.challenges.pop(data.get("id", -1), None)
        if known is None or event is None:
            return
        view = lichess.challenge_view(known, status)
        if event == "challengeDeclined":
            reason = data.get("reason")  # a str or None
            key, text = lichess.decline_reason(reason if isinstance(reason, str) else None)
            view["declineReasonKey"] = key
            view["declineReason"] = text
        link._event({"type": event, "challenge": view})

    return handle


def _gone_or_back(gone: bool) -> Callable[[BotLink, GonePayload | BackPayload], None]:
    def handle(link: BotLink, data: GonePayload | BackPayload) -> None:
        game = link.games.get(data["game"])
        if game is None or data.get("side") == game.get("role"):
            return
        event: lichess.OpponentGoneEvent = {"type": "opponentGone", "gone": gone}
        if gone:
            left = cast(GonePayload, data)
            event["claimWinInSeconds"] = (
                0 if left["claimable"] else int(left.get("claim_in_ms", 0)) // 1000
            )
        link._to_game(game["game"], event)

    return handle


# Any: each handler takes the decoded ``d`` as its kind's payload type (server.jsontypes), and
# a dict of handlers of different parameter types has no other common type.
_HANDLERS: dict[str, Callable[[BotLink, Any], None]] = {
    "hello": BotLink._hello,
    "challenge": BotLink._challenge,
    "challenge_accepted": _challenge_over("accepted", None),
    "challenge_declined": _challenge_over("declined", "challengeDeclined"),
    "challenge_withdrawn": _challenge_over("canceled", "challengeCanceled"),
    "challenge_cancelled": _challenge_over("canceled", "challengeCanceled"),
    "game_start": BotLink._game_start,
    "game": BotLink._snapshot,
    "move": BotLink._move,
    "takeback": BotLink._takeback,
    "offer": BotLink._offer,
    "end": BotLink._end,
    "chat": BotLink._chat,
    "gone": _gone_or_back(True),
    "back": _gone_or_back(False),
}


MoveOrTakeback = MovePayload | TakebackPayload
"""A room event that changes a bot's game state: a move, or a takeback."""


class BotLinks:
    """The links of this process, one per account."""

    def __init__(self, driver: HubDriver, settings: Settings) -> None:
        self.driver = driver
        self.settings = settings
        self._links: dict[str, BotLink] = {}

    async def link(self, info: PlayerInfo) -> BotLink:
        """The account's link (connected, its ``hello`` received); the caller holds it until
        :meth:`BotLink.release`."""
        link = self._links.get(info.id)
        if link is None or link.closed:
            link = self._links[info.id] = BotLink(self, info)
        link.hold()
        try:
            await asyncio.wait_for(asyncio.shield(link.hello), ANSWER_TIMEOUT_S)
        except BaseException:
            link.release()
            raise
        return link

    def forget(self, link: BotLink) -> None:
        if self._links.get(link.info.id) is link:
            del self._links[link.info.id]

    def online(self) -> list[BotLink]:
        """Links with an open event stream (bots online through this process)."""
        return [link for link in self._links.values() if link.events and not link.closed]

    def close(self) -> None:
        """The server stops: every stream ends."""
        for link in list(self._links.values()):
            for stream in [*link.events, *link.game_streams]:
                stream.end()
