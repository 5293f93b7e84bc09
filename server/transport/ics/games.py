"""The games an ICS connection follows, and the game numbers ICS clients address them by.

Our game ids are short strings; ICS clients expect small integers (``observe 12``, ``<12> … 12
…``). :class:`GameNumbers` gives each game id a number the first time any ICS connection of
this process sees it, and keeps it: numbers are local to one server process.

:class:`GameView` mirrors one game room from the hub's messages (snapshot, moves, takebacks,
the end) and renders its style-12 and holdings lines for one viewer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from server.hub.payloads import (
    ClocksView,
    GameSnapshot,
    MovePayload,
    PlayerView,
    SideClockView,
    TakebackPayload,
    TimeControlView,
)
from server.rules import Position, RulesError
from server.transport.ics.boards import board_lines
from server.transport.ics.lines import clock_words
from server.transport.ics.style12 import Board12, verbose_move
from server.transport.ics.variants import IcsVariant, ics_variant

__all__ = ["GameNumbers", "GameView", "clock_ms", "side_index"]

MAX_REMEMBERED = 100_000


class GameNumbers:
    """Game id <-> ICS game number, assigned in order of first sight (1, 2, 3 …)."""

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self._ids: dict[int, str] = {}
        self._next = 1

    def number(self, game_id: str) -> int:
        number = self._numbers.get(game_id)
        if number is None:
            if len(self._numbers) >= MAX_REMEMBERED:
                # Forget the oldest quarter; their numbers are never reused.
                for old in list(self._numbers)[: MAX_REMEMBERED // 4]:
                    del self._ids[self._numbers.pop(old)]
            number = self._numbers[game_id] = self._next
            self._ids[number] = game_id
            self._next += 1
        return number

    def game_id(self, number: int) -> str | None:
        return self._ids.get(number)


def side_index(side: str | None) -> int | None:
    return {"first": 0, "second": 1}.get(side or "")


def clock_ms(clock: SideClockView | None, tc: TimeControlView) -> int:
    """What a style-12 clock shows: the time until the flag falls if the player keeps thinking
    (under byoyomi: main time, then the current period, then the periods left)."""
    if not clock:
        return 0
    ms = int(clock.get("ms", 0))
    periods = int(clock.get("periods", 0) or 0)
    if tc["kind"] == "byoyomi" and periods > 0:
        period = int(tc["period_s"]) * 1000
        ms += int(clock.get("period_ms", period)) + (periods - 1) * period
    return ms


@dataclass
class GameView:
    """One followed game, as the hub's room messages describe it."""

    game_id: str
    number: int
    ics: IcsVariant
    players: tuple[PlayerView, PlayerView]
    tc: TimeControlView
    rated: bool
    role: str
    start_fen: str
    fen: str
    moves: list[str] = field(default_factory=list)
    displays: list[str] = field(default_factory=list)
    clocks: ClocksView | None = None
    finished: bool = False
    verbose: str = "none"
    pretty: str = "none"
    elapsed_ms: int = 0

    @classmethod
    def from_snapshot(cls, snapshot: GameSnapshot, number: int) -> GameView:
        view = cls(
            game_id=snapshot["game"],
            number=number,
            ics=ics_variant(snapshot["variant"]),
            players=(snapshot["players"]["first"], snapshot["players"]["second"]),
            tc=snapshot["tc"],
            rated=bool(snapshot.get("rated")),
            role=snapshot.get("role", "spectator"),
            start_fen=snapshot["start_fen"],
            fen=snapshot["fen"],
        )
        view.update_snapshot(snapshot)
        return view

    @property
    def white(self) -> str:
        return str(self.players[0]["name"])

    @property
    def black(self) -> str:
        return str(self.players[1]["name"])

    @property
    def ply(self) -> int:
        return len(self.moves)

    @property
    def my_side(self) -> int | None:
        return side_index(self.role)

    @property
    def correspondence(self) -> bool:
        """Whether the game has days per move or no clock (a player may have many)."""
        return self.tc["kind"] in ("correspondence", "unlimited")

    def position(self) -> Position:
        return Position.from_fen(self.ics.variant, self.fen)

    def update_snapshot(self, snapshot: GameSnapshot) -> None:
        self.fen = snapshot["fen"]
        self.moves = list(snapshot.get("moves", []))
        self.displays = list(snapshot.get("displays", []))
        self.clocks = snapshot.get("clocks")
        self.role = snapshot.get("role", self.role)
        self.finished = snapshot.get("status") == "finished"
        self.verbose = self.pretty = "none"
        self.elapsed_ms = 0
        if self.moves:
            try:
                before = self._replay_before_last()
            except RulesError:
                return
            self._describe_last(before, self.moves[-1], self.displays[-1] if self.displays else "")

    def _replay_before_last(self) -> Position:
        position = Position.from_fen(self.ics.variant, self.start_fen)
        for uci in self.moves[:-1]:
            position = position.play(position.move_from_uci(uci))
        return position

    def _describe_last(self, before: Position, uci: str, display: str) -> None:
        verbose, pretty = verbose_move(before, uci, self.ics)
        self.verbose = verbose
        # The chess family's display is SAN, which every ICS client reads; the shogi family's
        # human notation is not, so those boards carry the coordinate form.
        if self.ics.variant.family == "chess" and display:
            self.pretty = display
        else:
            self.pretty = uci if "@" not in uci else pretty
            if uci == "@@@@":
                self.pretty = "pass"

    def apply_move(self, event: MovePayload) -> None:
        """A ``move`` room event."""
        try:
            before = self.position()
        except RulesError:
            before = None
        self.moves.append(event["uci"])
        self.displays.append(event.get("display", ""))
        self.fen = event["fen"]
        self.clocks = event.get("clocks")
        self.elapsed_ms = int(event.get("spent_ms") or 0)  # None only in stored games
        if before is not None:
            try:
                self._describe_last(before, event["uci"], event.get("display", ""))
            except RulesError:
                self.verbose, self.pretty = "none", event.get("display", "none")

    def apply_takeback(self, event: TakebackPayload) -> None:
        """A ``takeback`` room event: moves after ``ply`` are gone."""
        del self.moves[event["ply"] :]
        del self.displays[event["ply"] :]
        self.fen = event["fen"]
        self.clocks = event.get("clocks")
        self.verbose = self.pretty = "none"
        self.elapsed_ms = 0

    def relation(self, examining: bool = False) -> int:
        """Style 12's relation of the viewer to this game."""
        if examining:
            return 2
        side = self.my_side
        if side is None or self.finished:
            return 0
        turn = Position.from_fen(self.ics.variant, self.fen).turn
        return 1 if turn == side else -1

    def board_lines(self, ms: bool, relation: int | None = None, wide: bool = False) -> list[str]:
        """The style-12 line and, for variants with hands, the ``<b1>`` line (a diagram for a
        board too wide for style-12 readers unless ``wide``: :mod:`.boards`)."""
        position = self.position()
        clocks = self.clocks
        minutes, seconds = clock_words(self.tc)
        info = Board12(
            game=self.number,
            white=self.white,
            black=self.black,
            relation=self.relation() if relation is None else relation,
            initial_min=minutes,
            increment_s=0 if self.tc.get("kind") == "byoyomi" else seconds,
            white_ms=clock_ms(clocks["first"] if clocks else None, self.tc),
            black_ms=clock_ms(clocks["second"] if clocks else None, self.tc),
            verbose=self.verbose,
            elapsed_ms=self.elapsed_ms,
            pretty=self.pretty,
            flip=self.my_side == 1,
            ticking=bool(clocks and clocks["running"] is not None) and not self.finished,
            ms=ms,
            double_push=_double_push(self.verbose),
        )
        return board_lines(position, self.ics, info, wide)


def _double_push(verbose: str) -> int:
    """The file of a pawn's two-square advance (``P/e2-e4``), else -1 (style 12's field)."""
    if len(verbose) == 7 and verbose[0] == "P" and verbose[1] == "/" and verbose[4] == "-":
        origin, target = verbose[2:4], verbose[5:7]
        if origin[0] == target[0] and abs(int(origin[1]) - int(target[1])) == 2:
            return "abcdefghijklmno".index(origin[0])
    return -1
