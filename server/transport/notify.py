"""A player's own notifications over the websocket: the "your turn" list and the e-mail
settings, answered from the store; the hub's ``TurnChanged`` handed to the mailer.

* ``my_games`` is answered with ``my_games`` (:class:`~server.hub.review_payloads.MyGamesPayload`):
  every running game of the player, read from the store (a correspondence game nobody looks at
  need not be in any hub's memory), those where it is their move first (the oldest turn first),
  then the others. Later changes arrive as ``my_game`` from the hub that runs a correspondence
  game (:mod:`server.hub.turns`).
* ``mail_settings`` reads or changes the address and the opt-in, answered with
  ``mail_settings``.

Both are for registered players (``registered_only`` otherwise; a guest has no stored games of
their own and no account to keep an address in).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from server.hub.clock import time_control_view
from server.hub.effects import TurnChanged
from server.hub.errors import ErrorCode
from server.hub.glicko2 import speed_of
from server.hub.incoming import AccountFrame, MailSettingsFrame
from server.hub.messages import Message, MessageKind
from server.hub.review_payloads import MailSettingsPayload, MyGamesPayload, MyGameView
from server.hub.turns import side_to_move
from server.rules.time_control import TimeControl
from server.transport.accounts import store_player_id
from server.transport.mail import Mailer, MailJob

if TYPE_CHECKING:
    from server.transport.server import ClientConnection

__all__ = ["MY_GAMES_LIMIT", "Notices", "NotifyPort", "my_game_entries"]

logger = logging.getLogger(__name__)

MY_GAMES_LIMIT = 300
"""The most games one ``my_games`` lists (the correspondence limit, 200 by default, and a
real-time game fit; ``your_turn`` still counts every game waiting)."""


class StoredRunningGame(Protocol):
    """A running game of one player (``server.store.notify.RunningGame``)."""

    @property
    def id(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def control(self) -> TimeControl: ...
    @property
    def rated(self) -> bool: ...
    @property
    def index(self) -> int: ...
    @property
    def opponent(self) -> str: ...
    @property
    def plies(self) -> int: ...
    @property
    def turn_since(self) -> datetime: ...
    @property
    def your_turn(self) -> bool: ...


class StoredMailSettings(Protocol):
    @property
    def email(self) -> str | None: ...
    @property
    def opt_in(self) -> bool: ...


class NotifyPort(Protocol):
    """What notifications need of the store (``server.store.notify.NotifyStore``)."""

    async def running_games(self, player_id: int) -> Sequence[StoredRunningGame]: ...

    async def mail_settings(self, player_id: int) -> StoredMailSettings: ...

    async def set_mail_settings(
        self, player_id: int, *, email: str | None, opt_in: bool | None, forget: bool = False
    ) -> StoredMailSettings: ...

    async def claim_mail(
        self,
        player_id: int,
        game_id: str,
        *,
        window: timedelta,
        daily_cap: int,
        now: datetime | None = None,
    ) -> str | None: ...


def my_game_entries(games: Sequence[StoredRunningGame]) -> MyGamesPayload:
    """The ``my_games`` answer of a player's running games (see the module docstring)."""
    waiting = sorted((g for g in games if g.your_turn), key=lambda g: (g.turn_since, g.id))
    others = sorted(
        (g for g in games if not g.your_turn), key=lambda g: (g.turn_since, g.id), reverse=True
    )
    entries: list[MyGameView] = []
    for game in (waiting + others)[:MY_GAMES_LIMIT]:
        side = side_to_move(game.index)
        entries.append(
            {
                "variant": game.variant,
                "tc": time_control_view(game.control),
                "speed": speed_of(game.control),
                "rated": game.rated,
                "game": game.id,
                "opponent": game.opponent,
                "side": side,
                "turn": side_to_move(game.plies),
                "your_turn": game.your_turn,
                "plies": game.plies,
                "finished": False,
                "result": None,
            }
        )
    return {"games": entries, "your_turn": len(waiting), "limit": MY_GAMES_LIMIT}


@dataclass
class Notices:
    """The door's notifications (see the module docstring); ``mailer`` is ``None`` when the
    server sends no mail (``[mail] enabled = false``)."""

    port: NotifyPort
    mailer: Mailer | None = None

    async def answer(self, conn: ClientConnection, frame: AccountFrame) -> None:
        """Answer ``my_games`` or ``mail_settings`` for the connection's player."""
        identity = conn.identity
        if identity is None:
            conn.error(ErrorCode.NOT_AUTHENTICATED, ack=frame.ack)
            return
        player = store_player_id(identity.info.id)
        if player is None:
            conn.error(ErrorCode.REGISTERED_ONLY, ack=frame.ack)
            return
        try:
            if isinstance(frame, MailSettingsFrame):
                message = await self._mail_settings(player, frame)
            else:
                games = await self.port.running_games(player)
                message = Message(MessageKind.MY_GAMES, my_game_entries(games), a=frame.ack)
        except Exception as error:
            # The store is down (or failed): the player may ask again. The trace is kept, so a
            # bug shows as one (the transport cannot name the store's error classes).
            logger.warning(
                "notifications: %s failed for %s: %s",
                type(frame).__name__,
                identity.info.name,
                error.__class__.__name__,
                exc_info=True,
            )
            conn.error(ErrorCode.UNAVAILABLE, ack=frame.ack)
            return
        conn.send(message)

    async def _mail_settings(self, player: int, frame: MailSettingsFrame) -> Message:
        if frame.email is None and frame.opt_in is None and not frame.forget:
            settings = await self.port.mail_settings(player)
        else:
            settings = await self.port.set_mail_settings(
                player, email=frame.email, opt_in=frame.opt_in, forget=frame.forget
            )
        payload: MailSettingsPayload = {
            "email": settings.email,
            "opt_in": settings.opt_in,
            "enabled": self.mailer is not None,
        }
        return Message(MessageKind.MAIL_SETTINGS, payload, a=frame.ack)

    def turn(self, change: TurnChanged) -> None:
        """The hub's cue: queue the mails it calls for (never waits, never raises)."""
        mailer = self.mailer
        if mailer is None:
            return
        if change.finished:
            recipients = [(i, p) for i, p in enumerate(change.players)]
        elif change.to_move is not None:
            recipients = [(change.players.index(change.to_move), change.to_move)]
        else:
            return
        for index, player_id in recipients:
            store_id = store_player_id(player_id)
            if store_id is None:  # a guest or the computer: no account, no mail
                continue
            mailer.submit(
                MailJob(
                    player=store_id,
                    name=change.names[index],
                    opponent=change.names[1 - index],
                    game_id=change.game_id,
                    variant=change.variant,
                    ended=change.finished,
                    result=change.result,
                    side=index,
                )
            )
