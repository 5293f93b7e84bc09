import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Connection, DEAD_AFTER_MS, OPEN_TIMEOUT_MS, PING_EVERY_MS, REQUEST_TIMEOUT_MS, ServerError } from "../src/net";

/** A websocket that does only what the test tells it: open, receive, or stay silent. */
class FakeSocket {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSING = 2;
  static readonly CLOSED = 3;
  static made: FakeSocket[] = [];
  readyState = FakeSocket.CONNECTING;
  sent: string[] = [];
  closed: [number, string] | null = null;
  /** Answer every ping with a pong (a live server that never answers anything else). */
  pongs = false;
  readonly at = Date.now();
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: string }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;

  constructor(readonly url: string) { FakeSocket.made.push(this); }

  send(frame: string): void {
    this.sent.push(frame);
    if (this.pongs && JSON.parse(frame).t === "ping") this.receive({ t: "pong" });
  }

  close(code: number, reason: string): void { this.closed = [code, reason]; this.readyState = FakeSocket.CLOSED; }

  open(): void { this.readyState = FakeSocket.OPEN; this.onopen?.(); }

  receive(m: object): void { this.onmessage?.({ data: JSON.stringify(m) }); }

  get pings(): number { return this.sent.filter((f) => JSON.parse(f).t === "ping").length; }
}

function connected(): { conn: Connection; closes: number[] } {
  const conn = new Connection();
  const closes: number[] = [];
  conn.onClose = () => closes.push(Date.now());
  conn.connect();
  return { conn, closes };
}

const last = () => FakeSocket.made[FakeSocket.made.length - 1];

describe("the connection", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeSocket.made = [];
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("location", { protocol: "http:", host: "hub.test" });
    vi.stubGlobal("WebSocket", FakeSocket);
    vi.spyOn(Math, "random").mockReturnValue(0.5);   // no jitter: the backoff's own numbers
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("pings when quiet and counts a silent socket dead within seconds", () => {
    const { closes } = connected();
    const ws = last();
    ws.open();
    vi.advanceTimersByTime(PING_EVERY_MS + 500);
    expect(ws.pings).toBe(1);
    expect(closes).toEqual([]);
    vi.advanceTimersByTime(DEAD_AFTER_MS - PING_EVERY_MS);     // nothing at all came back
    expect(closes.length).toBe(1);
    expect(closes[0] - ws.at).toBeLessThanOrEqual(DEAD_AFTER_MS + 500);
    expect(ws.closed).toEqual([4000, "no answer"]);
  });

  it("keeps a socket that answers its pings", () => {
    const { closes } = connected();
    const ws = last();
    ws.pongs = true;
    ws.open();
    vi.advanceTimersByTime(60_000);
    expect(closes).toEqual([]);
    expect(ws.pings).toBeGreaterThanOrEqual(60_000 / PING_EVERY_MS - 2);
  });

  it("fails a request unanswered for too long, and one made while disconnected", async () => {
    const { conn, closes } = connected();
    const ws = last();
    ws.pongs = true;                                    // alive, but the request is never answered
    ws.open();
    const answer = conn.request("sought", { watch: true });
    const failed = answer.catch((e: ServerError) => e);
    vi.advanceTimersByTime(REQUEST_TIMEOUT_MS - 1000);
    expect(closes).toEqual([]);
    vi.advanceTimersByTime(1000);
    expect(((await failed) as ServerError).code).toBe("timeout");
    expect(closes.length).toBe(1);
    const offline = await conn.request("who").catch((e: ServerError) => e);
    expect((offline as ServerError).code).toBe("disconnected");
  });

  it("reconnects with backoff doubling from 0.5 s to 8 s, reset by a connection that opens", () => {
    const { closes } = connected();
    last().open();
    vi.advanceTimersByTime(DEAD_AFTER_MS + 500);       // the first socket goes silent
    // Each new socket never opens: dropped after OPEN_TIMEOUT_MS, the next one after the backoff.
    for (let i = 0; i < 6; i++) vi.advanceTimersByTime(OPEN_TIMEOUT_MS + 9000);
    const waits = FakeSocket.made.slice(1).map((ws, i) => ws.at - closes[i]);
    expect(waits.slice(0, 6)).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    const socket = last();
    socket.open();                                       // back: the next loss waits 0.5 s again
    vi.advanceTimersByTime(DEAD_AFTER_MS + 500);
    const lost = closes[closes.length - 1];
    vi.advanceTimersByTime(600);
    expect(last()).not.toBe(socket);
    expect(last().at - lost).toBe(500);
  });

  it("resolves a request with the answer of its ack id", async () => {
    const { conn } = connected();
    const ws = last();
    ws.open();
    const answer = conn.request("who");
    const a = JSON.parse(ws.sent[0]).a as number;
    ws.receive({ t: "who", a, d: { players: [] } });
    expect((await answer).t).toBe("who");
  });
});
