"""Conditional premoves (the hub's ``premoves`` part, docs/correspondence.md): in a
correspondence game a player stores lines "if my opponent plays X, answer Y, then if Z, W …",
and the hub plays the reply when the opponent's move is stored.

* ``premoves`` (:meth:`Premoves.on_set`) replaces the player's lines, ``premoves_clear``
  (:meth:`Premoves.on_clear`) drops them. Lines are checked when set (:func:`check_lines`:
  each move legal in turn from the current position, the opponent to move, no two lines
  answering the same moves differently), then written (a :class:`~server.hub.effects.Persist`
  of a :class:`~server.hub.effects.PremovesSet`, token kind ``PREMOVES``, beside the room's own
  pending write); they act and the player gets the ack only once stored.
* The lines live in ``RoomState.premoves`` (side → the lines as last written, with the ply they
  start from). After every stored move of a room that has some (:meth:`Premoves.after_move`,
  one truthiness test on the move path otherwise), the lines are advanced through the stored
  moves: those whose next move differs are dropped; when the owner is then to move, the reply
  is played as a normal move (:meth:`~server.hub.room_moves.Moves.play`: checked by the
  adjudicator again, two-phase, nobody sees it before it is stored). An illegal reply, the
  game's end or no line left drops them (a ``PremovesSet`` with no lines is written).
* The stored row is not rewritten as the lines advance: a restored room gets the row back
  (:meth:`~server.hub.hub.Hub.restore_game`'s ``premoves``) and advances it through the stored
  moves the same way, so a restart or a takeover plays a reply still owed.
* Only the owner sees the lines: a ``premoves`` message to the owner's connections when they
  change, and when the owner joins the room.
* ``premove_line`` (:meth:`Premoves.on_line`, read-only) answers the position and the legal
  moves after a sequence of moves from the current position (:func:`line_view`), under the
  same conditions as setting lines, so that a client builds a line on a board one move at a
  time; it writes nothing and changes nothing.
"""

from __future__ import annotations

from server.hub.commands import PremoveLineCommand, PremovesClearCommand, PremovesCommand
from server.hub.effects import Effect, Persist, PremovesSet, Send
from server.hub.errors import CommandError, ErrorCode
from server.hub.hub_state import Connection, HubState
from server.hub.messages import Message, MessageKind, ack_message, error_message
from server.hub.payloads import PremoveLinePayload, PremovesPayload
from server.hub.persist_tokens import WriteKind
from server.hub.room import GameRoom
from server.hub.room_state import PendingEnd, PendingMove, PendingPremoves
from server.rules import Game, IllegalMoveError, InvalidMoveError, Side

Lines = tuple[tuple[str, ...], ...]

PREMOVE_CONN = -1
"""The connection id a reply is played under: its ack list is emptied at once (nobody asked)."""


def check_lines(game: Game, lines: Lines) -> Lines:
    """The lines in the engine's own spelling of each move, checked from ``game``'s position:
    every move legal in turn, no two lines answering the same moves differently.

    The moves are played on ``game`` and taken back (it is as it was on return or raise).

    :raises CommandError: ``illegal_premove`` naming the line and the move,
        ``premoves_conflict`` naming both replies.
    """
    checked: list[tuple[str, ...]] = []
    replies: dict[tuple[str, ...], str] = {}
    for n, line in enumerate(lines, 1):
        spelled: list[str] = []
        try:
            for ply, text in enumerate(line, 1):
                try:
                    spelled.append(game.play(text).uci)
                except (InvalidMoveError, IllegalMoveError) as exc:
                    raise CommandError(
                        ErrorCode.ILLEGAL_PREMOVE, f"Line {n}, move {ply}: illegal move {exc}"
                    ) from None
        finally:
            for _ in spelled:
                game.undo()
        for i in range(0, len(spelled), 2):
            reply = replies.setdefault(tuple(spelled[: i + 1]), spelled[i + 1])
            if reply != spelled[i + 1]:
                raise CommandError(
                    ErrorCode.PREMOVES_CONFLICT,
                    f"Line {n} answers {' '.join(spelled[: i + 1])} with {spelled[i + 1]}; "
                    f"an earlier line with {reply}.",
                )
        checked.append(tuple(spelled))
    return tuple(checked)


def line_view(game: Game, game_id: str, moves: tuple[str, ...]) -> PremoveLinePayload:
    """The position after ``moves`` are played from ``game``'s, as ``premove_line`` shows it.

    The moves are played on ``game`` and taken back (it is as it was on return or raise).

    :raises CommandError: ``illegal_premove`` naming the first illegal move.
    """
    ply = game.ply
    played = 0
    try:
        for n, text in enumerate(moves, 1):
            try:
                game.play(text)
            except (InvalidMoveError, IllegalMoveError) as exc:
                raise CommandError(
                    ErrorCode.ILLEGAL_PREMOVE, f"Move {n} ({text}): illegal move {exc}"
                ) from None
            played += 1
        outcome = game.outcome()
        return {
            "game": game_id,
            "ply": ply,
            "moves": game.moves[ply:],
            "displays": game.displays[ply:],
            "fen": game.fen(),
            "turn": game.side_to_move.word,
            "legal": game.legal_moves(),
            "check": game.position.is_check(),
            "result": None if outcome is None else outcome.result(),
        }
    finally:
        for _ in range(played):
            game.undo()


def premoves_message(game_id: str, ply: int, lines: Lines) -> Message:
    """The ``premoves`` message: ``lines`` from the position after ``ply`` moves."""
    payload: PremovesPayload = {"game": game_id, "ply": ply, "lines": [list(x) for x in lines]}
    return Message(MessageKind.PREMOVES, payload)


def own_premoves(room: GameRoom, side: Side | None) -> list[Message]:
    """What a joining player is told of its own lines in ``room`` (nothing without any)."""
    stored = room.state.premoves.get(side) if side is not None else None
    if stored is None:
        return []
    return [premoves_message(room.game_id, stored.from_ply, stored.lines)]


class Premoves:
    """The hub's ``premoves`` part (see the module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: HubState) -> None:
        self.state = state

    # ---------------------------------------------------------------- commands

    def on_set(
        self, conn: Connection, cmd: PremovesCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room, side = self._room(conn, cmd.game_id, now, out)
        state = room.state
        if state.game.side_to_move == side:
            raise state.refuse(ErrorCode.PREMOVES_NOT_NOW, now)
        lines = check_lines(state.game, cmd.lines)
        self._write(
            room, PremovesSet(room.game_id, side, len(state.records), lines), conn, cmd, out
        )

    def on_clear(
        self, conn: Connection, cmd: PremovesClearCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room, side = self._room(conn, cmd.game_id, now, out)
        self._write(room, PremovesSet(room.game_id, side, len(room.records), ()), conn, cmd, out)

    def on_line(
        self, conn: Connection, cmd: PremoveLineCommand, now: int, lag: int, out: list[Effect]
    ) -> None:
        room, side = self._room(conn, cmd.game_id, now, out)
        game = room.state.game
        if game.side_to_move == side:
            raise room.state.refuse(ErrorCode.PREMOVES_NOT_NOW, now)
        view = line_view(game, room.game_id, cmd.moves)
        out.append(Send(conn.conn_id, Message(MessageKind.PREMOVE_LINE, view, a=cmd.ack)))

    def _room(
        self, conn: Connection, game_id: str, now: int, out: list[Effect]
    ) -> tuple[GameRoom, Side]:
        room = self.state.rooms.get(game_id)
        side = None if room is None else room.state.side_of(conn.player_id)
        if room is None or (room.state.status == "created" and side is None):
            raise CommandError(ErrorCode.NO_SUCH_GAME, f"There is no game {game_id!r} here.")
        if side is None:
            raise CommandError(ErrorCode.NOT_A_PLAYER)
        if not room.state.correspondence:
            raise CommandError(ErrorCode.PREMOVES_CORRESPONDENCE)
        out += room.lifecycle.on_time(now)
        room.state.require_idle(now)
        return room, side

    def _write(
        self,
        room: GameRoom,
        record: PremovesSet,
        conn: Connection,
        cmd: PremovesCommand | PremovesClearCommand,
        out: list[Effect],
    ) -> None:
        token = room.state.new_token(WriteKind.PREMOVES)
        room.state.premove_writes[token] = PendingPremoves(record, conn.conn_id, cmd.ack)
        out.append(Persist(token, record))

    # ------------------------------------------------------------ write reports

    def stored(self, room: GameRoom, token: int, now: int, out: list[Effect]) -> None:
        """``token``'s lines are stored: they act now, the asker gets its ack."""
        pending = room.state.premove_writes.pop(token, None)
        if pending is None:
            return  # lines dropped by the hub: nobody waits
        out.append(Send(pending.conn_id, ack_message(pending.ack, {"game": room.game_id})))
        record = pending.record
        if record.lines:
            room.state.premoves[record.side] = record
        else:
            room.state.premoves.pop(record.side, None)
        self._advance(room, record.side, now, out, changed=True)

    def failed(self, room: GameRoom, token: int, reason: str, out: list[Effect]) -> None:
        """``token``'s lines were not stored: the asker is told, the lines in force stay."""
        pending = room.state.premove_writes.pop(token, None)
        if pending is None:
            return  # a drop not written: a restore advances the old row and drops it too
        text = f"{ErrorCode.PREMOVES_NOT_SAVED.text} ({reason})"
        out.append(
            Send(pending.conn_id, error_message(ErrorCode.PREMOVES_NOT_SAVED, text, pending.ack))
        )

    # ------------------------------------------------------------------ moves

    def after_move(self, room: GameRoom, now: int, out: list[Effect]) -> None:
        """A move of ``room`` was stored, or its game ended, or it was restored: advance every
        side's lines (call only when ``room.state.premoves`` is not empty)."""
        for side in tuple(room.state.premoves):
            self._advance(room, side, now, out)

    def restored(self, room: GameRoom, stored: list[PremovesSet], now: int) -> list[Effect]:
        """Give a restored room its stored lines and act on them."""
        out: list[Effect] = []
        for record in stored:
            if record.lines and 0 <= record.from_ply <= len(room.records):
                room.state.premoves[record.side] = record
        self.after_move(room, now, out)
        return out

    def _advance(
        self, room: GameRoom, side: Side, now: int, out: list[Effect], changed: bool = False
    ) -> None:
        state = room.state
        current = state.premoves.get(side)
        plies = len(state.records)
        lines: Lines = () if current is None else current.lines
        for ply in range(current.from_ply if current else plies, plies):
            uci = state.records[ply].uci
            lines = tuple(line[1:] for line in lines if line[0] == uci and len(line) > 1)
        changed = changed or (current is not None and current.from_ply != plies)
        pending = state.pending
        over = state.finished or (isinstance(pending, PendingEnd) and pending.asker is None)
        if over:
            lines = ()
        elif lines and pending is None and state.committed_turn() == side:
            try:
                out += room.moves.play(PREMOVE_CONN, side, plies + 1, lines[0][0], now, 0, None)
            except CommandError:
                lines = ()  # the reply is no longer legal (or the room cannot move): dropped
            else:
                move = state.pending
                assert isinstance(move, PendingMove)
                move.acks.clear()  # nobody asked: no ack to send
                state.premoves[side] = PremovesSet(room.game_id, side, plies, lines)
                return  # the owner hears of its lines once the reply is stored
        if lines:
            state.premoves[side] = PremovesSet(room.game_id, side, plies, lines)
        elif current is not None:
            del state.premoves[side]
            token = state.new_token(WriteKind.PREMOVES)
            out.append(Persist(token, PremovesSet(room.game_id, side, plies, ())))
            changed = True
        if changed:
            owner = room.players[side].id
            out += self.state.send_player(owner, premoves_message(room.game_id, plies, lines))
