"""What a typed envelope costs on the cluster's move path (issue 22): building, packing and
parsing the ``out`` envelope a move's event travels in, against bare JSON of the same header.

    PYTHONPATH=. .venv/bin/python bench/bench_envelopes.py

Each row is the best per-call CPU time (``time.process_time_ns``) over ``--repeat`` runs of
``--number`` calls. ``bare`` rows are the JSON work alone with a plain dict — what the untyped
envelopes did: ``json.dumps`` of the header, ``json.loads`` and a check of its ``k``; the other
rows go through :mod:`server.cluster.envelopes` (builder, ``pack`` signing a copy, and
``parse_header`` checking the kind and each field's type).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_frames import best_ns  # noqa: E402  (the same timer as the frame bench)

from server.cluster.envelopes import out_header, pack, parse_header  # noqa: E402

SENDER = "node-0123456789ab"
BODY = b'{"t":"move","d":{"game":"u8jzPde0","ply":31,"move":"c4c5+","clock":[1,2]},"v":41}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    def build() -> object:
        return out_header(
            "move", [3], game="u8jzPde0", version=1795361832612, previous=[1795361832611]
        )

    header = build()
    plain = json.loads(json.dumps(header))

    def bare_build() -> object:
        return {"k": "out", "t": "move", "g": "u8jzPde0", "v": 1795361832612, "c": [3], "pv": [1]}

    def bare_pack() -> bytes:
        plain["from"] = SENDER
        return json.dumps(plain, separators=(",", ":")).encode() + b"\n" + BODY

    data = pack(header, SENDER, BODY)  # type: ignore[arg-type]
    line = data.partition(b"\n")[0]

    def bare_parse() -> object:
        obj = json.loads(line)
        if not isinstance(obj, dict) or not isinstance(obj.get("k"), str):
            raise ValueError
        return obj

    rows = [
        ("out: build (bare dict)", bare_build),
        ("out: build (out_header)", build),
        ("out: pack (bare json.dumps)", bare_pack),
        ("out: pack", lambda: pack(header, SENDER, BODY)),  # type: ignore[arg-type]
        ("out: parse (bare json.loads)", bare_parse),
        ("out: parse_header", lambda: parse_header(line)),
    ]
    print(f"header: {line.decode()}")
    print("| step | ns per envelope |\n|---|---:|")
    for name, call in rows:
        print(f"| {name} | {best_ns(call, args.number, args.repeat):,.0f} |")


if __name__ == "__main__":
    main()
