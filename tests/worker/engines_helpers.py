"""Helpers for the worker tests: the engines' own legal-move lists, seeded positions, wrapper
scripts that make an engine misbehave."""

from __future__ import annotations

import random
import re
import stat
import sys
import time
from pathlib import Path

from server.rules import Game, get_variant
from server.worker.cecp import CecpEngine
from server.worker.dialects import PROGRAMS, variants_ini
from server.worker.uci import UciEngine

_SJAAK_PERFT = re.compile(r"^\s+(\S+)\s+1\s+\d+$")
_FSF_PERFT = re.compile(r"^(\S+): 1$")


def random_positions(variant: str, count: int, plies: int, seed: int) -> list[str]:
    """FENs reached by seeded random play (every ``plies // 4`` plies of each game)."""
    rng = random.Random(seed)
    out = []
    v = get_variant(variant)
    while len(out) < count:
        game = Game(v)
        for ply in range(plies):
            legal = game.legal_moves()
            if not legal:
                break
            # prefer captures, drops and promotions now and then: they are the dialect's corners
            special = [m for m in legal if "@" in m or m.endswith("+") or m[-1].isalpha()]
            game.play(rng.choice(special) if special and rng.random() < 0.3 else rng.choice(legal))
            if ply % max(1, plies // 4) == plies // 4 - 1 and game.legal_moves():
                out.append(game.fen())
    return out[:count]


async def sjaak_legal(engine: CecpEngine, variant: str, fen: str) -> list[str]:
    """Sjaak II's legal moves (its ``perft 1 1`` listing, SAN-like texts)."""
    engine.process.send("new", f"variant {variant}", "force", f"setboard {fen}", "perft 1 1")
    deadline = time.monotonic() + 10
    moves = []
    while True:
        line = await engine.process.readline(deadline)
        m = _SJAAK_PERFT.match(line)
        if m:
            moves.append(m.group(1))
        elif re.match(r"^\s*1\s+\d+\s", line):
            return moves


async def fsf_legal(engine: UciEngine, variant: str, fen: str) -> list[str]:
    """Fairy-Stockfish's legal moves (``go perft 1``)."""
    engine._set_options([("VariantPath", variants_ini()), ("UCI_Variant", variant)])
    engine.process.send(f"position fen {fen}", "go perft 1")
    deadline = time.monotonic() + 10
    moves = []
    while True:
        line = await engine.process.readline(deadline)
        m = _FSF_PERFT.match(line)
        if m:
            moves.append(m.group(1))
        elif line.startswith("Nodes searched"):
            return moves


def wrapper(tmp: Path, name: str, engine: str, mode: str) -> Path:
    """A script that runs the real ``engine`` and misbehaves: ``hang`` stops answering once
    asked to search, ``illegal`` turns every move it sends into one no rules allow,
    ``longline`` answers a search with a 200 kB line, ``illegal-once`` turns only the first
    move into an illegal one,
    ``hang-once`` hangs the first time only (a marker file remembers), ``slow-S`` sends each
    move S seconds late (a search starved of CPU: its thinking lines come, its move does not),
    ``refuse-M`` answers the move ``M`` sent to it (CECP) with ``Illegal move: M`` instead of
    taking it (an engine whose rules forbid a move the spec allows)."""
    path = tmp / name
    marker = tmp / (name + ".hung")
    path.write_text(
        f"""#!{sys.executable}
import os, subprocess, sys, threading, time
engine = subprocess.Popen([{PROGRAMS[engine].path!r}], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
mode = {mode!r}
marker = {str(marker)!r}
hung = threading.Event()
def pump():
    for line in engine.stdout:
        if hung.is_set():
            continue
        if mode == "longline" and line.startswith(("move ", "bestmove ", "info")):
            line = "info string " + "x" * 200_000 + "\\n"
        if mode == "illegal-once" and line.startswith(("move ", "bestmove ")) and not os.path.exists(marker):
            open(marker, "w").close()
            line = line.split()[0] + " a1a1\\n"
        if mode.startswith("slow-") and line.startswith(("move ", "bestmove ")):
            time.sleep(float(mode[len("slow-"):]))
        if mode == "illegal" and line.startswith(("move ", "bestmove ")):
            word = line.split()[0]
            line = word + " a1a1\\n"
        sys.stdout.write(line)
        sys.stdout.flush()
threading.Thread(target=pump, daemon=True).start()
for line in sys.stdin:
    if mode.startswith("refuse-") and line.split()[-1:] == [mode[len("refuse-"):]]:
        sys.stdout.write("Illegal move: " + mode[len("refuse-"):] + "\\n")
        sys.stdout.flush()
        continue
    if line.split()[:1] in (["go"],) and mode.startswith("hang"):
        if mode == "hang" or not os.path.exists(marker):
            open(marker, "w").close()
            hung.set()
    engine.stdin.write(line)
    engine.stdin.flush()
engine.stdin.close()
engine.wait()
"""
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
