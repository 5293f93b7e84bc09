"""An ICS session's parts stand alone: each is built over a :class:`SessionState` whose
connection (``send``, ``write``) and server (:class:`IcsHost`) are stand-ins, and answers its
commands without the session or any other part; the session sends every command word to
exactly one part."""

from __future__ import annotations

from collections.abc import Callable

from server.hub.commands import Command, SoughtCommand
from server.hub.payloads import PlayerView
from server.transport.ics.games import GameNumbers
from server.transport.ics.online import ListedPlayer
from server.transport.ics.parse import COMMANDS, QUIET, CommandLine
from server.transport.ics.people import PeopleCommands
from server.transport.ics.session import IcsSession
from server.transport.ics.settings import SettingsCommands
from server.transport.ics.state import SessionState

ALICE: PlayerView = {"id": "u1", "name": "alice", "guest": False}


class StandInHost:
    """The server process as a session's state sees it: two players online, no store."""

    numbers = GameNumbers()
    store = None
    reads = None
    tournaments = None

    def hub_player(self, player_id: str) -> None:
        return None

    async def my_games(self, player_id: str) -> None:
        return None

    def online(self) -> list[ListedPlayer]:
        return [ListedPlayer("carol", False, True, computer=True), ListedPlayer("Bob", True, False)]

    def tell(self, sender: str, name: str, text: str) -> bool:
        return False

    def later(self, delay_s: float, call: Callable[[], None]) -> None:
        pass

    def requester(self, name: str) -> str:
        return f"account:{name}"


def _state() -> tuple[SessionState, list[Command], list[str]]:
    sent: list[Command] = []
    written: list[str] = []
    return SessionState(ALICE, sent.append, written.extend, StandInHost()), sent, written


def test_the_settings_part_alone_sets_a_variable_and_sends_its_command() -> None:
    state, sent, written = _state()
    settings = SettingsCommands(state)
    settings.commands()["set"](CommandLine("set", "seekinfo 1"))
    assert state.vars["seekinfo"] == 1
    assert written == ["seekinfo set."]
    assert sent == [SoughtCommand(True, ack=1)]
    # The hub's answer to that command, by its ack id, as the session's renderer would pass it.
    assert state.pending[1]("sought", {"seeks": []}) == ["<sc>"]


def test_the_people_part_alone_lists_who_is_online() -> None:
    state, sent, written = _state()
    PeopleCommands(state).on_who(CommandLine("who", ""))
    assert written == [" Bob(U)", "^carol(C)", "", "2 players displayed."]
    assert sent == []


def test_the_session_sends_each_command_word_to_exactly_one_part() -> None:
    sent: list[Command] = []
    written: list[str] = []
    session = IcsSession(ALICE, sent.append, written.extend, StandInHost())
    parts = (
        session.lobby,
        session.play,
        session.people,
        session.stored,
        session.settings,
        session.tournaments,
    )
    words = [word for part in parts for word in part.commands()]
    assert len(words) == len(set(words)), "a command word answered by two parts"
    assert set(session.commands) == {*COMMANDS, *QUIET}
