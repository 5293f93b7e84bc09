// One websocket to the hub (docs/protocol.md): requests carry an ack id and resolve with the
// answer of that id; everything else goes to the message listeners.
//
// A connection can die without closing (a proxy or a phone network that stops forwarding):
// the browser then says nothing for minutes. So the client sends the application heartbeat
// (`ping`, answered by `pong`) every few seconds and counts the connection dead when nothing at
// all has arrived for DEAD_AFTER_MS, when an opening handshake takes too long, or when a request
// goes unanswered; it then drops the socket, says so (onClose) and reconnects with backoff.

import type { Answers, CommandKind, Commands, ErrorCode, ErrorPayload, MessageOf, ServerMessage } from "./protocol.gen";

/** A message from the server: a union discriminated on `t` (switch on it to get `d`'s type). */
export type Message = ServerMessage;

/** The positive answer to command `K` (`ack`, `welcome`, `pong`, or a message of its own name). */
export type Answer<K extends CommandKind> = MessageOf<Answers[K]>;

/** The commands answered by `ack` (the game's and the lobby's actions). */
export type AckedCommand = { [K in CommandKind]: Answers[K] extends "ack" ? K : never }[CommandKind];

export class ServerError extends Error {
  constructor(readonly code: ErrorCode | "disconnected" | "timeout", message: string, readonly data: ErrorPayload | null) { super(message); }
}

/** The codes of a request that never got its answer: it may or may not have been done. */
export const LOST = new Set(["disconnected", "timeout"]);

type Listener = (m: Message) => void;

interface Pending { resolve: (m: Message) => void; reject: (e: ServerError) => void; timer: number }

export const PING_EVERY_MS = 2000;
export const DEAD_AFTER_MS = 6000;
export const OPEN_TIMEOUT_MS = 6000;
export const REQUEST_TIMEOUT_MS = 20000;
const CHECK_EVERY_MS = 500;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 8000;

export class Connection {
  private ws: WebSocket | null = null;
  private nextAck = 1;
  private pending = new Map<number, Pending>();
  private listeners: Listener[] = [];
  private retry = RETRY_MIN_MS;
  private heard = 0;
  private pinged = 0;
  private watchdog = 0;
  private checked = 0;
  private reconnectTimer = 0;
  onOpen: () => void = () => {};
  onClose: (code: number, reason: string) => void = () => {};

  connect(): void {
    window.clearTimeout(this.reconnectTimer);
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    const started = Date.now();
    this.heard = started;
    window.clearInterval(this.watchdog);
    this.checked = started;
    this.watchdog = window.setInterval(() => this.check(ws, started), CHECK_EVERY_MS);
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.retry = RETRY_MIN_MS;
      this.heard = Date.now();
      this.onOpen();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.heard = Date.now();
      const m = JSON.parse(String(event.data)) as Message;
      if (m.t !== "pong") this.dispatch(m);
    };
    ws.onclose = (event) => { if (this.ws === ws) this.lost(event.code, event.reason); };
  }

  get open(): boolean { return this.ws?.readyState === WebSocket.OPEN; }

  listen(listener: Listener): void { this.listeners.push(listener); }

  request<K extends CommandKind>(t: K, d?: Commands[K]): Promise<Answer<K>> {
    return new Promise((resolve, reject) => {
      const ws = this.ws;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        reject(new ServerError("disconnected", "Not connected to the server.", null));
        return;
      }
      const a = this.nextAck++;
      // No answer in time: the connection is as good as dead (the heartbeat usually says so first).
      const timer = window.setTimeout(() => { if (this.ws === ws) this.drop(ws, "no answer"); }, REQUEST_TIMEOUT_MS);
      // The server answers command K with Answers[K] or an error (protocol.gen.ts, from the
      // server's own table), so the message carrying this ack id is that answer.
      this.pending.set(a, { resolve: (m) => resolve(m as Answer<K>), reject, timer });
      const frame: Record<string, unknown> = { t, a };
      if (d !== undefined) frame.d = d;
      ws.send(JSON.stringify(frame));
    });
  }

  /** The heartbeat: ping when quiet, drop the socket when nothing arrives. */
  private check(ws: WebSocket, started: number): void {
    if (this.ws !== ws) { return; }
    const now = Date.now();
    if (ws.readyState === WebSocket.CONNECTING) {
      if (now - started > OPEN_TIMEOUT_MS) this.drop(ws, "no answer");
      return;
    }
    if (ws.readyState !== WebSocket.OPEN) return;
    // A throttled timer (a hidden tab) is not the server's silence: ask again and wait.
    if (now - this.checked > 4 * CHECK_EVERY_MS) this.heard = Math.max(this.heard, now - PING_EVERY_MS);
    this.checked = now;
    if (now - this.heard > DEAD_AFTER_MS) { this.drop(ws, "no answer"); return; }
    if (now - this.heard >= PING_EVERY_MS && now - this.pinged >= PING_EVERY_MS) {
      this.pinged = now;
      ws.send('{"t":"ping"}');
    }
  }

  /** Give up on a socket that stopped answering (closing it may itself hang: don't wait). */
  private drop(ws: WebSocket, why: string): void {
    ws.onmessage = ws.onclose = null;
    // Closing a socket still opening logs an error in the console: close it if it ever opens.
    if (ws.readyState === WebSocket.CONNECTING) ws.onopen = () => ws.close(4000, why);
    else { ws.onopen = null; ws.close(4000, why); }
    this.lost(4000, why);
  }

  private lost(code: number, reason: string): void {
    this.ws = null;
    window.clearInterval(this.watchdog);
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) {
      window.clearTimeout(p.timer);
      p.reject(new ServerError(reason === "no answer" ? "timeout" : "disconnected", "Connection lost.", null));
    }
    this.onClose(code, reason);
    const wait = this.retry * (0.75 + Math.random() / 2);
    this.retry = Math.min(this.retry * 2, RETRY_MAX_MS);
    this.reconnectTimer = window.setTimeout(() => this.connect(), wait);
  }

  private dispatch(m: Message): void {
    if (m.a !== undefined && typeof m.a === "number" && this.pending.has(m.a)) {
      const p = this.pending.get(m.a)!;
      this.pending.delete(m.a);
      window.clearTimeout(p.timer);
      if (m.t === "error") p.reject(new ServerError(m.d.code, m.d.message, m.d));
      else p.resolve(m);
      if (m.t === "error" || m.t === "ack") return;
    }
    for (const l of this.listeners) l(m);
  }
}
