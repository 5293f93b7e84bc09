"""The Bus contract, run against InProcessBus and RedisBus (real Redis, random prefix)."""

import asyncio

import pytest
from bus_support import REDIS_URL, BusFactory, Inbox, wait_until

from server.bus import BusClosedError, InProcessBus, RedisBus, create_bus, create_cluster
from server.bus.redis_bus import redact_url
from server.config import Settings


async def test_thousand_messages_arrive_in_order(make_bus: BusFactory) -> None:
    publisher, subscriber = await make_bus(), await make_bus()
    inbox = Inbox()
    await subscriber.subscribe("room", inbox)
    sent = [f"move {i}".encode() for i in range(1000)]
    for message in sent:
        await publisher.publish("room", message)
    await wait_until(lambda: len(inbox.messages) >= len(sent))
    assert inbox.payloads == sent
    assert {channel for channel, _ in inbox.messages} == {"room"}


async def test_concurrent_publishers_keep_each_ones_order(make_bus: BusFactory) -> None:
    subscriber = await make_bus()
    publishers = [await make_bus() for _ in range(3)]
    inbox = Inbox()
    await subscriber.subscribe("room", inbox)

    async def send(index: int, bus_: object) -> None:
        assert isinstance(bus_, (InProcessBus, RedisBus))
        for i in range(200):
            await bus_.publish("room", f"{index}:{i}".encode())

    await asyncio.gather(*(send(index, bus) for index, bus in enumerate(publishers)))
    await wait_until(lambda: len(inbox.messages) >= 600)
    for index in range(3):
        mine = [p for p in inbox.payloads if p.startswith(f"{index}:".encode())]
        assert mine == [f"{index}:{i}".encode() for i in range(200)]


async def test_publish_right_after_subscribe_is_never_lost(make_bus: BusFactory) -> None:
    publisher, subscriber = await make_bus(), await make_bus()
    for round_ in range(200):
        channel = f"fresh:{round_}"
        inbox = Inbox()
        await subscriber.subscribe(channel, inbox)
        await publisher.publish(channel, b"first")
        await wait_until(lambda: inbox.payloads == [b"first"])  # noqa: B023 (awaited here)
        await subscriber.unsubscribe(channel)


async def test_two_nodes_see_each_others_messages(make_bus: BusFactory) -> None:
    node_a, node_b = await make_bus(), await make_bus()
    inbox_a, inbox_b = Inbox(), Inbox()
    await node_a.subscribe("lobby", inbox_a)
    await node_b.subscribe("lobby", inbox_b)
    await node_a.publish("lobby", b"from a")
    await node_b.publish("lobby", b"from b")
    await wait_until(lambda: len(inbox_a.messages) == 2 and len(inbox_b.messages) == 2)
    assert inbox_a.payloads == [b"from a", b"from b"]
    assert inbox_b.payloads == [b"from a", b"from b"]


async def test_channels_are_separate(make_bus: BusFactory) -> None:
    bus = await make_bus()
    inbox_x, inbox_y = Inbox(), Inbox()
    await bus.subscribe("x", inbox_x)
    await bus.subscribe("y", inbox_y)
    await bus.publish("x", b"1")
    await bus.publish("y", b"2")
    await bus.publish("z", b"3")
    # Sentinels published after "z": once they are in, "z" would have been too.
    await bus.publish("x", b"end")
    await bus.publish("y", b"end")
    await wait_until(
        lambda: inbox_x.payloads[-1:] == [b"end"] and inbox_y.payloads[-1:] == [b"end"]
    )
    assert inbox_x.messages == [("x", b"1"), ("x", b"end")]
    assert inbox_y.messages == [("y", b"2"), ("y", b"end")]


async def test_unsubscribe_stops_delivery_and_resubscribe_works(make_bus: BusFactory) -> None:
    publisher, subscriber = await make_bus(), await make_bus()
    inbox, probe = Inbox(), Inbox()
    await subscriber.subscribe("room", inbox)
    await subscriber.subscribe("probe", probe)
    await publisher.publish("room", b"before")
    await wait_until(lambda: inbox.payloads == [b"before"])
    await subscriber.unsubscribe("room")
    await publisher.publish("room", b"while away")
    await publisher.publish("probe", b"sentinel")  # arrives after "while away" would have
    await wait_until(lambda: probe.payloads == [b"sentinel"])
    assert inbox.payloads == [b"before"]
    await subscriber.unsubscribe("room")  # a second time is harmless
    again = Inbox()
    await subscriber.subscribe("room", again)
    await publisher.publish("room", b"after")
    await wait_until(lambda: again.payloads == [b"after"])
    assert inbox.payloads == [b"before"]


async def test_second_subscribe_to_a_channel_is_refused(make_bus: BusFactory) -> None:
    bus = await make_bus()
    first, second = Inbox(), Inbox()
    await bus.subscribe("room", first)
    with pytest.raises(ValueError, match="already subscribed"):
        await bus.subscribe("room", second)
    await bus.publish("room", b"m")
    await wait_until(lambda: first.payloads == [b"m"])
    assert second.messages == []


async def test_failing_handler_does_not_stop_delivery(
    make_bus: BusFactory, caplog: pytest.LogCaptureFixture
) -> None:
    bus = await make_bus()
    seen: list[bytes] = []

    def handler(_channel: str, message: bytes) -> None:
        seen.append(message)
        if message == b"bad":
            raise RuntimeError("handler bug")

    await bus.subscribe("room", handler)
    for message in (b"ok1", b"bad", b"ok2"):
        await bus.publish("room", message)
    await wait_until(lambda: len(seen) == 3)
    assert seen == [b"ok1", b"bad", b"ok2"]
    assert "handler bug" in caplog.text


async def test_async_handler_runs_one_message_at_a_time(make_bus: BusFactory) -> None:
    """While the handler is held on its first message, the others wait for it: a message
    published after them on another channel (the sentinel) arrives, and still only one
    handler call has started."""
    bus = await make_bus()
    running = 0
    most = 0
    order: list[bytes] = []
    release = asyncio.Event()

    async def handler(_channel: str, message: bytes) -> None:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await release.wait()
        order.append(message)
        running -= 1

    sentinel = Inbox()
    await bus.subscribe("room", handler)
    await bus.subscribe("sentinel", sentinel)
    sent = [str(i).encode() for i in range(30)]
    for message in sent:
        await bus.publish("room", message)
    await bus.publish("sentinel", b"after")
    await wait_until(lambda: sentinel.payloads == [b"after"])
    assert (running, most, order) == (1, 1, [])
    release.set()
    await wait_until(lambda: len(order) == 30)
    assert order == sent
    assert most == 1


async def test_slow_channel_does_not_hold_up_another(make_bus: BusFactory) -> None:
    bus = await make_bus()
    release = asyncio.Event()
    fast = Inbox()

    async def stuck(_channel: str, _message: bytes) -> None:
        await release.wait()

    await bus.subscribe("slow", stuck)
    await bus.subscribe("fast", fast)
    await bus.publish("slow", b"x")
    await bus.publish("fast", b"y")
    await wait_until(lambda: fast.payloads == [b"y"])
    release.set()


async def test_handler_may_unsubscribe_its_own_channel(make_bus: BusFactory) -> None:
    bus = await make_bus()
    seen: list[bytes] = []

    async def handler(channel: str, message: bytes) -> None:
        seen.append(message)
        await bus.unsubscribe(channel)

    probe = Inbox()
    await bus.subscribe("room", handler)
    await bus.subscribe("probe", probe)
    await bus.publish("room", b"1")
    await bus.publish("room", b"2")
    await bus.publish("probe", b"sentinel")  # arrives after "2" would have
    await wait_until(lambda: probe.payloads == [b"sentinel"])
    assert seen == [b"1"]


async def test_bad_arguments_are_refused(make_bus: BusFactory) -> None:
    bus = await make_bus()
    with pytest.raises(TypeError, match="bytes"):
        await bus.publish("room", "text")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        await bus.publish("", b"m")
    with pytest.raises(ValueError, match="empty"):
        await bus.subscribe("", Inbox())
    with pytest.raises(TypeError, match="str"):
        await bus.subscribe(b"room", Inbox())  # type: ignore[arg-type]


async def test_closed_bus_refuses_work(make_bus: BusFactory) -> None:
    bus = await make_bus()
    inbox = Inbox()
    await bus.subscribe("room", inbox)
    await bus.close()
    await bus.close()  # idempotent
    with pytest.raises(BusClosedError):
        await bus.publish("room", b"m")
    with pytest.raises(BusClosedError):
        await bus.subscribe("other", Inbox())
    with pytest.raises(BusClosedError):
        await bus.start()
    other, witness = await make_bus(), Inbox()
    await other.subscribe("room", witness)
    await other.publish("room", b"m")
    await other.publish("room", b"sentinel")
    # Delivered to the open subscriber of the channel: the closed one got nothing.
    await wait_until(lambda: witness.payloads == [b"m", b"sentinel"])
    assert inbox.messages == []


async def test_never_degraded_when_healthy(make_bus: BusFactory) -> None:
    bus = await make_bus()
    changes: list[bool] = []
    bus.add_degraded_listener(changes.append)
    await bus.subscribe("room", Inbox())
    await bus.publish("room", b"m")
    assert not bus.degraded
    assert changes == []


async def test_context_manager_starts_and_closes() -> None:
    async with InProcessBus() as bus:
        inbox = Inbox()
        await bus.subscribe("room", inbox)
        await bus.publish("room", b"m")
        await wait_until(lambda: inbox.payloads == [b"m"])
    with pytest.raises(BusClosedError):
        await bus.publish("room", b"m")


async def test_separate_in_process_brokers_are_separate() -> None:
    async with InProcessBus() as first, InProcessBus() as second:
        inbox, witness = Inbox(), Inbox()
        await first.subscribe("room", inbox)
        await second.subscribe("room", witness)
        await second.publish("room", b"m")
        await wait_until(lambda: witness.payloads == [b"m"])  # delivered in its own broker
        await first.publish("room", b"own")  # after "m" would have arrived
        await wait_until(lambda: inbox.payloads == [b"own"])
        assert inbox.payloads == [b"own"]


async def test_redis_prefixes_separate_deployments(prefix: str) -> None:
    async with (
        RedisBus(REDIS_URL, prefix=prefix + "a:") as bus_a,
        RedisBus(REDIS_URL, prefix=prefix + "b:") as bus_b,
    ):
        inbox_a, inbox_b = Inbox(), Inbox()
        await bus_a.subscribe("room", inbox_a)
        await bus_b.subscribe("room", inbox_b)
        await bus_a.publish("room", b"for a")
        await wait_until(lambda: inbox_a.payloads == [b"for a"])
        await bus_b.publish("room", b"for b")  # Redis delivers it after "for a" would have
        await wait_until(lambda: inbox_b.payloads != [])
        assert inbox_b.payloads == [b"for b"]


async def test_redis_bus_must_be_started(prefix: str) -> None:
    bus = RedisBus(REDIS_URL, prefix=prefix)
    with pytest.raises(BusClosedError, match="not started"):
        await bus.publish("room", b"m")
    with pytest.raises(BusClosedError, match="not started"):
        await bus.subscribe("room", Inbox())
    await bus.close()


def test_redis_bus_rejects_bad_timing_parameters() -> None:
    with pytest.raises(ValueError, match="backoff"):
        RedisBus(REDIS_URL, backoff_min_s=2, backoff_max_s=1)
    with pytest.raises(ValueError, match="positive"):
        RedisBus(REDIS_URL, ping_interval_s=0)


async def test_many_concurrent_subscribes_are_all_confirmed(make_bus: BusFactory) -> None:
    publisher, subscriber = await make_bus(), await make_bus()
    inboxes = {f"room:{i}": Inbox() for i in range(50)}
    await asyncio.gather(*(subscriber.subscribe(name, inbox) for name, inbox in inboxes.items()))
    for name in inboxes:
        await publisher.publish(name, name.encode())
    await wait_until(lambda: all(len(inbox.messages) == 1 for inbox in inboxes.values()))
    assert all(inbox.messages == [(name, name.encode())] for name, inbox in inboxes.items())


def test_redact_url_hides_the_password() -> None:
    assert redact_url("redis://user:secret@host:6379/0") == "redis://user:***@host:6379/0"
    assert redact_url("redis://:secret@host/0") == "redis://:***@host/0"
    assert redact_url("redis://host:6379/0") == "redis://host:6379/0"


@pytest.mark.parametrize("redis_url", ["", REDIS_URL])
async def test_factories_follow_the_settings(redis_url: str, prefix: str) -> None:
    settings = Settings(redis_url=redis_url, bus_prefix=prefix, node_id="node-a")
    bus = create_bus(settings)
    cluster = create_cluster(settings)
    assert isinstance(bus, RedisBus if redis_url else InProcessBus)
    async with bus:
        inbox = Inbox()
        await bus.subscribe("room", inbox)
        await bus.publish("room", b"m")
        await wait_until(lambda: inbox.payloads == [b"m"])
    try:
        assert await cluster.leases.acquire("g1", settings.node_id, 10_000)
        assert await cluster.leases.owner("g1") == "node-a"
    finally:
        await cluster.close()
