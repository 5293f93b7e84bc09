"""Cost of reading one client frame: JSON decoding plus validation into a typed command.

Run by hand (never in CI)::

    .venv/bin/python bench/bench_frames.py                    # this checkout
    .venv/bin/python bench/bench_frames.py --root /old/tree   # another checkout, to compare

Every frame of the hot path — ``move`` above all — passes ``codec.decode`` and
``commands.parse_command`` (the transport does the same two steps, with the envelope checked
once); both exist under these names before and after the input hardening of dc98d00
(2026-11-25), so the same script measures either tree. ``--root`` puts that tree first on
``sys.path``.

Also measured: the worst frames an attacker can send within the 64 KiB frame limit (deep
nesting, a string of brackets, a huge number, many lone surrogates), which the hardened decoder
refuses; against an older tree they may raise anything (reported as the exception's name).

Times are CPU time of this process (``time.process_time_ns``), the best of ``--repeat`` runs,
so that other work on a shared machine counts as little as possible. The JSON library in use
(orjson when installed) is printed: install or uninstall ``orjson`` to compare both.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FRAMES = {
    "move": '{"t":"move","d":{"game":"u8jzPde0","ply":31,"move":"c4c5+"},"a":6}',
    "join": '{"t":"join","d":{"game":"u8jzPde0","v":120},"a":"j-7"}',
    "seek": '{"t":"seek","a":2,"d":{"variant":"minishogi","tc":{"kind":"byoyomi","main_s":300,'
    '"period_s":10,"periods":3},"rated":true,"colour":"first","range":[1400,1800]}}',
    "chat (accents)": '{"t":"chat","d":{"game":"u8jzPde0","text":"bien jou\\u00e9, élève"}}',
}
LIMIT = 64 * 1024 - 64
ATTACKS = {
    "64 KiB of [": "[" * (LIMIT // 2) + "]" * (LIMIT // 2),
    "string of [": '{"t":"chat","d":{"game":"g","text":"' + "[" * LIMIT + '"}}',
    "[[],[],…]": "[" + "[]," * (LIMIT // 3) + "[]]",
    "huge number": '{"t":"unseek","d":{"id":' + "9" * LIMIT + "}}",
    "surrogates": '{"t":"chat","d":{"game":"g","text":"' + "\\ud800" * (LIMIT // 6) + '"}}',
}


def best_ns(call: Callable[[], Any], number: int, repeat: int) -> float:
    """The best per-call CPU time over ``repeat`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time_ns()
        for _ in range(number):
            call()
        best = min(best, (time.process_time_ns() - start) / number)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    from server.hub.commands import parse_command
    from server.transport import codec

    print(f"tree {args.root.resolve()}, JSON library {codec.JSON_LIBRARY}")
    print(f"{'frame':<16} {'decode ns':>10} {'+ command ns':>13} {'total ns':>9}")
    for name, text in FRAMES.items():
        obj = codec.decode(text)
        decode = best_ns(lambda text=text: codec.decode(text), args.number, args.repeat)
        command = best_ns(lambda obj=obj: parse_command(obj), args.number, args.repeat)
        print(f"{name:<16} {decode:>10.0f} {command:>13.0f} {decode + command:>9.0f}")
    print(f"\n{'attack (64 KiB)':<16} {'µs':>10}  answer")
    for name, text in ATTACKS.items():
        outcome = "decoded"

        def attack(text: str = text) -> None:
            nonlocal outcome
            try:
                parse_command(codec.decode(text))
            except Exception as error:  # what an older tree raises is the point
                outcome = type(error).__name__ + (
                    f" ({error.code})" if hasattr(error, "code") else ""
                )

        cost = best_ns(attack, 20, 3) / 1000
        print(f"{name:<16} {cost:>10.0f}  {outcome}")


if __name__ == "__main__":
    main()
