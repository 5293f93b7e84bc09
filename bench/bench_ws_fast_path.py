"""The websockets fast path (``server/transport/ws_internals.py``) against plain websockets:
the server's CPU per frame, measured in turns.

Run by hand (never in CI)::

    PYTHONPATH=. .venv/bin/python bench/bench_ws_fast_path.py --rounds 6 --frames 4000

A server process takes a frame from one client of a pair and sends a reply to both (as a move
goes to the mover and the opponent) in one of two ways:

* ``fast`` — the transport's: the frame is handed over from ``data_received``
  (``JitteredConnection.process_event``) and the replies written with one ``writelines``
  (``Outbox`` → ``write_now``);
* ``plain`` — websockets' public API only: ``await ws.recv()`` in the connection's task, the
  replies through the same ``Outbox`` with its fast write disabled (a high-water mark of 0), so
  a writer task sends them with ``await ws.send(...)``.

The variants take turns (``--rounds`` each, alternating) and each turn reports the server's CPU
time (``resource.getrusage``, user + system) per incoming frame over ``--frames`` frames: CPU
time, unlike a round trip, is little moved by other work on a shared machine. The round trips'
median is printed too, for what it is worth there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time

import checkout  # noqa: F401  (this checkout's server on sys.path)

REPLY = json.dumps(
    {"t": "move", "v": 12, "d": {"game": "u8jzPde0", "ply": 12, "uci": "c4c5+", "clock": [1, 2]}}
).encode()
FRAME = '{"t":"move","d":{"game":"u8jzPde0","ply":31,"move":"c4c5+"},"a":6}'


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def serve_variant(variant: str) -> None:
    from websockets.asyncio.server import ServerConnection, serve

    from server.transport.outbox import Flusher, Outbox
    from server.transport.ws_internals import JitteredConnection

    flusher = Flusher()
    outboxes: list[Outbox] = []
    high_water = 1 << 20 if variant == "fast" else 0

    def partner(index: int) -> Outbox:
        return outboxes[index ^ 1] if (index ^ 1) < len(outboxes) else outboxes[index]

    class Handler:
        def __init__(self, index: int) -> None:
            self.index = index

        def accepts_frame(self) -> bool:
            return True

        def on_text_frame(self, text: str) -> None:
            if text == "cpu":
                outboxes[self.index].put(f"{cpu_s():.6f}".encode())
                return
            json.loads(text)
            outboxes[self.index].put(REPLY)
            partner(self.index).put(REPLY)

    async def handler(ws: ServerConnection) -> None:
        index = len(outboxes)
        outboxes.append(Outbox(ws, 10_000, high_water, lambda _: None, flusher))
        reader = Handler(index)
        if isinstance(ws, JitteredConnection):
            ws.frame_handler = reader
        async for text in ws:
            reader.on_text_frame(str(text))

    connection = JitteredConnection if variant == "fast" else ServerConnection
    async with serve(
        handler, "127.0.0.1", 0, compression=None, create_connection=connection, ping_interval=None
    ) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()


async def drive(port: int, pairs: int, frames: int) -> tuple[float, float]:
    """(server CPU µs per frame, median round trip ms) over ``frames`` frames."""
    from websockets.asyncio.client import connect

    url = f"ws://127.0.0.1:{port}"
    sockets = [await connect(url, compression=None) for _ in range(2 * pairs)]
    trips: list[float] = []
    per_pair = frames // pairs

    async def play(mover: object, other: object) -> None:
        for _ in range(per_pair):
            start = time.perf_counter()
            await mover.send(FRAME)  # type: ignore[attr-defined]
            await mover.recv()  # type: ignore[attr-defined]
            await other.recv()  # type: ignore[attr-defined]
            trips.append(time.perf_counter() - start)

    async def cpu() -> float:
        await sockets[0].send("cpu")
        return float(await sockets[0].recv())

    await asyncio.gather(*(play(sockets[2 * i], sockets[2 * i + 1]) for i in range(pairs)))
    before = await cpu()
    trips.clear()
    await asyncio.gather(*(play(sockets[2 * i], sockets[2 * i + 1]) for i in range(pairs)))
    after = await cpu()
    for ws in sockets:
        await ws.close()
    return (after - before) / (per_pair * pairs) * 1e6, statistics.median(trips) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--serve", choices=("fast", "plain"))
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--frames", type=int, default=4000)
    parser.add_argument("--pairs", type=int, default=4)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve_variant(args.serve))
        return
    results: dict[str, list[tuple[float, float]]] = {"fast": [], "plain": []}
    for round_ in range(args.rounds):
        for variant in ("fast", "plain") if round_ % 2 == 0 else ("plain", "fast"):
            server = subprocess.Popen(
                [sys.executable, __file__, "--serve", variant], stdout=subprocess.PIPE, text=True
            )
            try:
                assert server.stdout is not None
                port = int(server.stdout.readline())
                results[variant].append(asyncio.run(drive(port, args.pairs, args.frames)))
            finally:
                server.kill()
                server.wait()
            cpu, trip = results[variant][-1]
            print(
                f"round {round_} {variant:>5}: {cpu:6.1f} µs CPU/frame, round trip p50 {trip:.3f} ms"
            )
    fast = [cpu for cpu, _ in results["fast"]]
    plain = [cpu for cpu, _ in results["plain"]]
    ratios = [f / p for f, p in zip(fast, plain, strict=True)]
    print(
        f"\nserver CPU per frame (two replies each), median of {args.rounds}: fast "
        f"{statistics.median(fast):.1f} µs, plain {statistics.median(plain):.1f} µs; fast/plain "
        f"per round: median {statistics.median(ratios):.3f}, range {min(ratios):.3f}–"
        f"{max(ratios):.3f}"
    )


if __name__ == "__main__":
    main()
