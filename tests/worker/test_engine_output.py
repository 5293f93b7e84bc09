"""Engine output is an input door: whatever an engine writes, parsing it raises nothing
unexpected, and a move text becomes one of our legal moves or None."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from server.rules import Game, get_variant
from server.worker.cecp import parse_thinking
from server.worker.computer import Computer, game_of
from server.worker.dialects import EngineProgram, resolve_token
from server.worker.uci import parse_info

from .engines_helpers import wrapper

POSITIONS = {
    "minishogi": Game(get_variant("minishogi"), "rbs1k/4g/5/P4/KGSB1[Pr] w - - 0 2").position,
    "wildcastle": Game(get_variant("wildcastle")).position,
    "daishogi": Game(get_variant("daishogi")).position,
}
MOVE_LIKE = st.from_regex(r"\A[+]?[A-Z]?[a-p]?[0-9]{0,2}[-x@,]?[a-p][0-9]{1,2}[+=#,a-zA-Z]{0,2}\Z", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8"), max_size=200)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, MOVE_LIKE), st.sampled_from(sorted(POSITIONS)))
def test_any_engine_move_text_is_a_legal_move_or_none(text: str, variant: str) -> None:
    pos = POSITIONS[variant]
    ours = resolve_token(pos, text)
    assert ours is None or ours in pos.legal_by_text() or ours == "@@@@"


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXT, st.lists(st.one_of(st.integers(-200_000, 200_000).map(str), MOVE_LIKE, TEXT), max_size=8).map(" ".join)))
def test_any_thinking_or_info_line_parses_or_is_ignored(line: str) -> None:
    thinking = parse_thinking(line)
    if thinking is not None:
        depth, score, ms, nodes, _pv = thinking
        assert depth >= 0 and ms >= 0 and nodes >= 0 and (score.cp is None) != (score.mate is None)
    info = parse_info("info " + line)
    if info is not None:
        assert isinstance(info[3], list)


async def test_an_overlong_engine_line_is_an_engine_failure_not_a_memory_hog(tmp_path: Path) -> None:
    script = wrapper(tmp_path, "fsf-long", "fairy-stockfish", "longline")
    computer = Computer(programs={"fairy-stockfish": EngineProgram("fairy-stockfish", str(script), "uci")})
    try:
        game = game_of("minishogi", None, "")
        answer = await computer.best_move(game, 1)
        assert answer.fallback == "engine_failed" and answer.move in game.legal_moves()
        assert computer.restarts["fairy-stockfish"] == 2
    finally:
        await computer.close()
