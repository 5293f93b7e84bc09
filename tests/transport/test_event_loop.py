"""The hub's event loop handles at most ``max_events`` ready sockets per turn
(server/transport/loop.py), and every ready socket gets its turn."""

from __future__ import annotations

import asyncio
import selectors
import socket

from server.transport.loop import CappedEpollSelector, new_event_loop


def test_a_select_hands_over_at_most_the_cap_and_every_ready_socket_in_turn() -> None:
    selector = CappedEpollSelector(max_events=16)
    pairs = [socket.socketpair() for _ in range(50)]
    try:
        for ours, theirs in pairs:
            selector.register(ours, selectors.EVENT_READ)
            theirs.send(b"x")
        seen: set[int] = set()
        for _ in range(4):  # nothing is read: they all stay ready, handed over round-robin
            ready = selector.select(0)
            assert 0 < len(ready) <= 16
            assert all(events == selectors.EVENT_READ for _, events in ready)
            seen.update(key.fd for key, _ in ready)
        assert seen == {ours.fileno() for ours, _ in pairs}
    finally:
        selector.close()
        for ours, theirs in pairs:
            ours.close()
            theirs.close()


def test_the_loop_reads_every_socket_of_a_burst() -> None:
    async def burst() -> list[bytes]:
        loop = asyncio.get_running_loop()
        pairs = [socket.socketpair() for _ in range(300)]
        received: list[bytes] = []
        done = asyncio.Event()

        def readable(sock: socket.socket) -> None:
            received.append(sock.recv(16))
            loop.remove_reader(sock)
            if len(received) == len(pairs):
                done.set()

        try:
            for ours, theirs in pairs:
                ours.setblocking(False)
                loop.add_reader(ours, readable, ours)
                theirs.send(b"x")
            await asyncio.wait_for(done.wait(), 10)
        finally:
            for ours, theirs in pairs:
                ours.close()
                theirs.close()
        return received

    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        assert runner.run(burst()) == [b"x"] * 300
