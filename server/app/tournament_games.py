"""A tournament's games on the hub: :class:`HubSeat` creates them (through the hub driver), and
a finished game's stored end becomes the core's :class:`~server.hub.tournament.values.TournamentGame`
(:func:`tournament_game_of_end`, :func:`tournament_game_of_record`)."""

from __future__ import annotations

from server.cluster.envelopes import moved_header, pack
from server.cluster.host import NODES_CHANNEL
from server.cluster.node import ClusterDriver
from server.hub.effects import GameFinished
from server.hub.identity import PlayerId, PlayerInfo
from server.hub.lobby import GameTerms, TournamentTag
from server.hub.tournament.values import TournamentGame, TournamentSettings
from server.rules.record import GameInfo, ResultCode
from server.transport.driver import HubDriver

__all__ = ["HubSeat", "forfeit_result", "tournament_game_of_end", "tournament_game_of_record"]


def forfeit_result(result: str | None, plies: int) -> ResultCode:
    """A tournament game's result: an aborted one (the first-move window ran out) is lost by
    the player who did not move (before ply 2 it is the side to move), as lichess's arena."""
    if result in ("1-0", "0-1", "1/2-1/2"):
        return result  # type: ignore[return-value]
    return "0-1" if plies % 2 == 0 else "1-0"


def tournament_game_of_end(record: GameFinished) -> TournamentGame:
    """The core's view of a stored end (``first`` is white)."""
    first_berserk, second_berserk = record.berserk
    return TournamentGame(
        record.first_id,
        record.second_id,
        forfeit_result(record.result, record.plies),
        record.plies,
        first_berserk,
        second_berserk,
    )


def tournament_game_of_record(record: GameInfo, white: PlayerId, black: PlayerId) -> TournamentGame:
    """The core's view of a finished stored game (read after a restart) paired between
    ``white`` (who moved first) and ``black``."""
    plies = record.plies or 0
    return TournamentGame(
        white,
        black,
        forfeit_result(record.result, plies),
        plies,
        record.first_berserk,
        record.second_berserk,
    )


class HubSeat:
    """Creates a tournament's games in the hub (``Hub.start_paired_game``), for players online
    here or not (:class:`~server.app.live_tournament.GameSeat`). In a cluster, a player not
    connected to this hub is told through the other hubs: the game is announced as a game that
    moved here (the ``moved`` notice of a takeover), so that the hub holding the player's
    connections joins them to it (they get its snapshot)."""

    def __init__(self, driver: HubDriver) -> None:
        self._driver = driver

    def _info(self, player: PlayerId, name: str) -> PlayerInfo:
        hub = self._driver.hub
        online = hub.state.players.get(player)
        if online is not None:
            return online.info
        return PlayerInfo(player, name, guest=not player.startswith("u"))

    def start_game(
        self,
        game_id: str,
        white: PlayerId,
        black: PlayerId,
        names: tuple[str, str],
        settings: TournamentSettings,
        tournament: tuple[str, int],
    ) -> None:
        terms = GameTerms(
            settings.variant,
            settings.control,
            settings.rated,
            TournamentTag(
                tournament[0], tournament[1], settings.berserk and settings.format == "arena"
            ),
        )
        first, second = self._info(white, names[0]), self._info(black, names[1])
        hub, driver = self._driver.hub, self._driver
        driver.call(
            lambda now: hub.start_paired_game(first, second, terms, now, game_id=game_id)[1]
        )
        elsewhere = [p for p in (white, black) if not hub.online(p)]
        if elsewhere and isinstance(driver, ClusterDriver):
            driver.publish(NODES_CHANNEL, pack(moved_header(game_id, elsewhere), driver.node_id))

    def busy(self, player: PlayerId) -> bool:
        return self._driver.hub.active_game(player) is not None
