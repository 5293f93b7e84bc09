"""Game records as text: PGN (every variant), KIF and USI (shogi family). Pure: no I/O.

The writers take a :class:`~server.rules.record.GameRecord` (what a stored game knows: header,
coordinate moves with their clocks, end); :func:`replay` plays its moves through the
adjudicator, the only source of SAN, check marks, positions and coordinates. One module per
format:

* :func:`write_pgn` (``pgn.py``) — PGN export format: the seven-tag roster, ``Variant``,
  ``TimeControl``, ``Termination``, ``SetUp``/``FEN`` when the start is not the variant's
  standard one (always for a variant that draws its setups), move numbers, one
  ``{ [%clk h:mm:ss] }`` per move. Chess-family moves are SAN; shogi-family moves are the
  display notation made PGN-safe (see :func:`pgn_move_text`).
* :func:`write_kif` (``kif.py``) — Japanese KIF (Kakinoki) in UTF-8: header lines, an optional
  board diagram (BOD), ``手数----指手---------消費時間--`` and one line per move with its
  thinking time, then the ending (投了, 詰み, 千日手, ...) and a ``まで…`` summary.
* :func:`write_usi` (``usi.py``) — ``position sfen <sfen> moves <m1> <m2> ...`` with USI moves
  (file digit counted from the right, rank letter from the top: ``7g7f``, ``P*5e``,
  ``2b3c+``).

What they share — the replay, the move list, clock and time-control texts — is in
``replay.py``.

>>> from datetime import UTC, datetime
>>> from server.rules.record import GameRecord, MoveRecord
>>> from server.rules.time_control import Fischer
>>> record = GameRecord(
...     id="g1", variant="minishogi", start_fen="rbsgk/4p/5/P4/KGSBR[] w - - 0 1",
...     time_control=Fischer(60_000), speed="bullet", rated=False,
...     first_name="alice", second_name="bob", created_at=datetime(2024, 5, 1, tzinfo=UTC),
...     status="started", moves=(MoveRecord(1, "e1e4", "Rx1b", 60_000, 2_000),))
>>> write_usi(record)
'position sfen rbsgk/4p/5/P4/KGSBR b - 1 moves 1e1b\\n'
"""

from .kif import (
    DAI_KANJI,
    DAI_PROMOTED_KANJI,
    SHOGI_BOARD_KANJI,
    SHOGI_KANJI,
    kif_board,
    kif_move_text,
    kif_piece_name,
    write_kif,
)
from .pgn import pgn_move_text, pgn_tags, write_pgn
from .replay import clock_text, format_time_control, replay
from .usi import usi_move, write_usi

__all__ = [
    "DAI_KANJI",
    "DAI_PROMOTED_KANJI",
    "SHOGI_BOARD_KANJI",
    "SHOGI_KANJI",
    "clock_text",
    "format_time_control",
    "kif_board",
    "kif_move_text",
    "kif_piece_name",
    "pgn_move_text",
    "pgn_tags",
    "replay",
    "usi_move",
    "write_kif",
    "write_pgn",
    "write_usi",
]
