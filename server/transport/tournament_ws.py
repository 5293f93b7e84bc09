"""The websocket's tournament frames (``tournament_*``, :mod:`server.hub.tournament_requests`),
answered by the tournament director through the :class:`TournamentDesk` it offers (the
composition root hands it over: adapters do not import ``server.app``).

One :class:`TournamentDoor` per connection: it turns a request into the desk's call, answers
with ``ack`` (create: ``{"tournament": id}``), ``tournament`` (``tournament``,
``tournament_watch``: the view with one page of the standings, the connection's own row and
games), ``tournament_standings`` (``tournament_page``), ``tournament_round`` (a round's
pairings by page) or ``tournaments`` (``tournament_list``) — a watch's view followed by the
tournament's last chat lines (``tournament_chat``) —, and a refusal into the one ``error`` message with its :class:`~server.hub.errors.ErrorCode` (the
core's refusals are :class:`~server.hub.errors.CommandError` s). Watching: the connection is
pushed its page's ``tournament_standings`` each time that page changes (a fixed page, or the
one holding its player's row; ``server.hub.tournament.pages``), for the tournaments it watches
(at most :data:`MAX_WATCHED` at once) until it unwatches or closes, and every line of their
chats. Creating, joining, withdrawing, pausing and chatting need a login; reading does not.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection
from typing import Literal, Protocol

from server.hub.errors import CommandError, ErrorCode
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.messages import AckId, Message, MessageKind, ack_message, error_message
from server.hub.tournament.values import MAX_DURATION_MS, TournamentSettings
from server.hub.tournament_payloads import (
    TournamentChatPayload,
    TournamentPairingView,
    TournamentRoundPayload,
    TournamentStandingsPayload,
    TournamentStandingView,
    TournamentSummaryView,
    TournamentView,
)
from server.hub.tournament_requests import (
    TournamentChat,
    TournamentCreate,
    TournamentJoin,
    TournamentList,
    TournamentPage,
    TournamentPause,
    TournamentRequest,
    TournamentRound,
    TournamentShow,
    TournamentUnwatch,
    TournamentWatch,
    TournamentWithdraw,
)
from server.rules import VARIANT_NAMES, get_variant
from server.rules.time_control import Byoyomi
from server.transport.codec import encode

__all__ = ["MAX_WATCHED", "TournamentDesk", "TournamentDoor", "settings_of_request"]

MAX_WATCHED = 10
"""Tournaments one connection may watch at once."""
VIEW_FRAMES = 64
"""Encoded views kept (:func:`view_frame`): one per tournament and page recently shown."""

TournamentWatcher = Callable[[bytes], None]
"""Told each pushed ``tournament_standings`` message of its page, as its encoded frame (the
same bytes for every watcher of that page)."""
Status = Literal["created", "started", "finished"]


class TournamentDesk(Protocol):
    """What the doors need of the tournament director (``server.app.tournaments``)."""

    max_players: int

    async def create(
        self,
        creator: PlayerInfo | None,
        settings: TournamentSettings,
        *,
        password: str | None = None,
    ) -> str: ...

    async def join(
        self, tournament_id: str, player: PlayerInfo, *, password: str | None = None
    ) -> None: ...

    async def withdraw(self, tournament_id: str, player: PlayerInfo) -> None: ...

    async def pause(
        self, tournament_id: str, player: PlayerInfo, *, pause: bool = True
    ) -> None: ...

    async def view(self, tournament_id: str) -> TournamentView: ...

    async def list(
        self, status: Status | Collection[Status] | None = None, *, limit: int = 50
    ) -> builtins.list[TournamentSummaryView]: ...

    async def watch(
        self,
        tournament_id: str,
        watcher: TournamentWatcher,
        *,
        page: int | None = None,
        player: PlayerId | None = None,
    ) -> TournamentStandingsPayload: ...

    async def standings_page(
        self, tournament_id: str, page: int | None = None, player: PlayerId | None = None
    ) -> TournamentStandingsPayload: ...

    async def entry_row(
        self, tournament_id: str, player: PlayerId
    ) -> TournamentStandingView | None: ...

    async def round_pairings(
        self, tournament_id: str, round_: int, page: int = 1
    ) -> TournamentRoundPayload: ...

    async def my_games(
        self, tournament_id: str, player: PlayerId
    ) -> builtins.list[TournamentPairingView]: ...

    def unwatch(self, tournament_id: str, watcher: TournamentWatcher) -> None: ...

    async def chat(self, tournament_id: str, player: PlayerInfo, text: str) -> None: ...

    async def chat_history(self, tournament_id: str) -> TournamentChatPayload: ...


_view_frames: dict[str, tuple[TournamentView, bytes]] = {}


def view_frame(
    tournament_id: str,
    view: TournamentView,
    page: TournamentStandingsPayload,
    me: TournamentStandingView | None,
    ack: AckId | None,
    mine: list[TournamentPairingView] | None = None,
) -> bytes:
    """The ``tournament`` message of ``view`` with ``page`` of its standings, ``me`` (the
    connection's own row) and ``mine`` (its own games), encoded. The view without its
    standings is encoded once for every connection shown it, whatever their page (the director
    returns the same object until the tournament changes); the page, ``me`` and ``mine`` (a
    few kB) are encoded for each answer. The view's pairings are bounded
    (``server.hub.tournament.rounds``): a 1,000-player arena's answer is ~11 kB after any
    number of waves (it was ~1.3 MB after 15, every pairing of every wave)."""
    kept = _view_frames.get(tournament_id)
    if kept is None or kept[0] is not view:
        if len(_view_frames) >= VIEW_FRAMES:
            del _view_frames[next(iter(_view_frames))]
        rest = {key: value for key, value in view.items() if key != "standings"}
        kept = _view_frames[tournament_id] = (view, encode(rest))
    # The codec's layout of a message: t, d, then a (Message.to_json_obj); d is the view's
    # encoded object without its closing brace, then the page's members, me and mine.
    paged = encode(
        {
            "standings": page["standings"],
            "page": page["page"],
            "pages": page["pages"],
            "players": page["players"],
            "me": me,
            "mine": mine or [],
        }
    )
    tail = b"}" if ack is None else b',"a":' + encode(ack) + b"}"
    d = kept[1][:-1] + (b"," if len(kept[1]) > 2 else b"") + paged[1:]
    return b'{"t":"' + MessageKind.TOURNAMENT.encode() + b'","d":' + d + tail


def settings_of_request(request: TournamentCreate, max_players: int) -> TournamentSettings:
    """The core's settings of a ``tournament_create`` (no password hash: the director makes it).

    :raises CommandError: ``UNKNOWN_VARIANT``, ``BYOYOMI_UNAVAILABLE``, or ``BAD_REQUEST``
        with the settings' own complaint (a missing start, a Swiss without rounds …).
    """
    if request.variant not in VARIANT_NAMES:
        raise CommandError(
            ErrorCode.UNKNOWN_VARIANT,
            f"Unknown variant {request.variant!r}; known: {', '.join(VARIANT_NAMES)}.",
        )
    if isinstance(request.control, Byoyomi) and get_variant(request.variant).family != "shogi":
        raise CommandError(ErrorCode.BYOYOMI_UNAVAILABLE)
    duration = None if request.duration_s is None else request.duration_s * 1000
    if request.format != "arena" and duration is not None:
        raise CommandError(ErrorCode.BAD_REQUEST, "Only an arena has a duration.")
    if request.format != "swiss" and request.rounds is not None:
        raise CommandError(ErrorCode.BAD_REQUEST, "Only a Swiss has a number of rounds.")
    try:
        return TournamentSettings(
            name=request.name,
            format=request.format,  # type: ignore[arg-type]  # checked by the reader
            variant=request.variant,
            control=request.control,
            rated=request.rated,
            start_at_ms=request.start_at_ms,
            start_when_joined=request.start_when_joined,
            duration_ms=None if duration is None else min(duration, MAX_DURATION_MS),
            rounds=request.rounds,
            min_rating=request.min_rating,
            bots=request.bots,
            computer=request.computer,
            max_players=max_players if request.max_players is None else request.max_players,
            berserk=request.berserk,
        )
    except ValueError as error:
        raise CommandError(ErrorCode.BAD_REQUEST, f"tournament_create: {error}") from None


class TournamentDoor:
    """One connection's tournament requests and watches (see the module docstring)."""

    __slots__ = ("_desk", "_following", "_put", "_send", "_watching")

    def __init__(
        self,
        desk: TournamentDesk,
        send: Callable[[Message], None],
        put: Callable[[bytes], None],
    ) -> None:
        """``send``: a message to the connection; ``put``: an encoded frame to it (the pushed
        standings, encoded once for all watchers)."""
        self._desk = desk
        self._send = send
        self._put = put
        self._watching: dict[str, TournamentWatcher] = {}
        self._following: set[str] = set()
        """The tournaments watched without a page: the one holding the player's row."""

    async def handle(self, request: TournamentRequest, player: PlayerInfo | None) -> None:
        """Answer ``request`` of the connection (``player``: who it is, None before login)."""
        try:
            answer = await self._answer(request, player)
        except CommandError as error:
            answer = error_message(error.code, error.message, request.ack)
        for part in answer if isinstance(answer, tuple) else (answer,):
            if isinstance(part, bytes):
                self._put(part)
            else:
                self._send(part)

    async def _answer(
        self, request: TournamentRequest, player: PlayerInfo | None
    ) -> Message | bytes | tuple[bytes, Message]:
        desk, ack = self._desk, request.ack
        me = None if player is None else player.id
        match request:
            case TournamentShow():
                tid = request.tournament_id
                view = await desk.view(tid)
                page = await desk.standings_page(tid, request.page, me)
                return await self._view_frame(view, page, me, ack)
            case TournamentRound():
                pairings = await desk.round_pairings(
                    request.tournament_id, request.round, request.page
                )
                return Message(MessageKind.TOURNAMENT_ROUND, pairings, a=ack)
            case TournamentList():
                status: Status | None = request.status  # type: ignore[assignment]
                listed = await desk.list(status)
                return Message(MessageKind.TOURNAMENTS, {"tournaments": listed}, a=ack)
            case TournamentWatch():
                tid = request.tournament_id
                view = await desk.view(tid)
                await desk.chat_history(tid)  # read from the store (once) before the watch
                page = await self._watch(tid, request.page, me)
                frame = await self._view_frame(view, page, me, ack)
                # Kept in memory by now: no wait, so no line pushed between this and the watch.
                chat = await desk.chat_history(tid)
                return frame, Message(MessageKind.TOURNAMENT_CHAT, chat)
            case TournamentPage():
                tid = request.tournament_id
                if tid in self._watching:
                    page = await self._watch(tid, request.page, me)
                else:
                    page = await desk.standings_page(tid, request.page, me)
                return Message(MessageKind.TOURNAMENT_STANDINGS, page, a=ack)
            case TournamentUnwatch():
                watcher = self._watching.pop(request.tournament_id, None)
                self._following.discard(request.tournament_id)
                if watcher is not None:
                    desk.unwatch(request.tournament_id, watcher)
                return ack_message(ack, {"tournament": request.tournament_id})
        if player is None:
            raise CommandError(ErrorCode.NOT_AUTHENTICATED)
        match request:
            case TournamentCreate():
                settings = settings_of_request(request, desk.max_players)
                created = await desk.create(player, settings, password=request.password)
                return ack_message(ack, {"tournament": created})
            case TournamentJoin():
                tid = request.tournament_id
                await desk.join(tid, player, password=request.password)
                if tid in self._following:
                    # Watched before the login, or before the join: now the player's own page.
                    shown = await self._watch(tid, None, player.id)
                    self._send(Message(MessageKind.TOURNAMENT_STANDINGS, shown))
            case TournamentWithdraw():
                await desk.withdraw(request.tournament_id, player)
            case TournamentPause():
                await desk.pause(request.tournament_id, player, pause=request.pause)
            case TournamentChat():
                await desk.chat(request.tournament_id, player, request.text)
            case _:
                raise CommandError(ErrorCode.BAD_REQUEST)
        return ack_message(ack, {"tournament": request.tournament_id})

    async def _view_frame(
        self,
        view: TournamentView,
        page: TournamentStandingsPayload,
        player: PlayerId | None,
        ack: AckId | None,
    ) -> bytes:
        if player is None:
            return view_frame(view["id"], view, page, None, ack)
        me = await self._desk.entry_row(view["id"], player)
        mine = await self._desk.my_games(view["id"], player)
        return view_frame(view["id"], view, page, me, ack, mine)

    async def _watch(
        self, tournament_id: str, page: int | None, player: PlayerId | None
    ) -> TournamentStandingsPayload:
        """Watch ``page`` of the tournament (again: another page), and return it."""
        watcher = self._watching.get(tournament_id)
        if watcher is None and len(self._watching) >= MAX_WATCHED:
            raise CommandError(
                ErrorCode.BAD_REQUEST, f"At most {MAX_WATCHED} tournaments watched at once."
            )
        watcher = watcher or self._put
        shown = await self._desk.watch(tournament_id, watcher, page=page, player=player)
        self._watching[tournament_id] = watcher
        if page is None:
            self._following.add(tournament_id)
        else:
            self._following.discard(tournament_id)
        return shown

    def close(self) -> None:
        """The connection ended: stop every watch."""
        for tournament_id, watcher in self._watching.items():
            self._desk.unwatch(tournament_id, watcher)
        self._watching.clear()
        self._following.clear()
