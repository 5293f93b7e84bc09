// One websocket to the hub (docs/protocol.md): requests carry an ack id and resolve with the
// answer of that id; everything else goes to the message listeners. Reconnects by itself.

import type { CommandKind, Commands, ErrorCode, MessageKind } from "./protocol.gen";

export interface Message { t: MessageKind; d: any; v?: number; a?: number | string }

export class ServerError extends Error {
  constructor(readonly code: ErrorCode | "disconnected", message: string, readonly data: any) { super(message); }
}

type Listener = (m: Message) => void;

export class Connection {
  private ws: WebSocket | null = null;
  private nextAck = 1;
  private pending = new Map<number, { resolve: (m: Message) => void; reject: (e: ServerError) => void }>();
  private listeners: Listener[] = [];
  private retry = 500;
  onOpen: () => void = () => {};
  onClose: (code: number, reason: string) => void = () => {};

  connect(): void {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => { this.retry = 500; this.onOpen(); };
    ws.onmessage = (event) => this.dispatch(JSON.parse(String(event.data)) as Message);
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      for (const p of this.pending.values()) p.reject(new ServerError("disconnected", "Connection lost.", null));
      this.pending.clear();
      this.onClose(event.code, event.reason);
      window.setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 8000);
    };
  }

  get open(): boolean { return this.ws?.readyState === WebSocket.OPEN; }

  listen(listener: Listener): void { this.listeners.push(listener); }

  request<K extends CommandKind>(t: K, d?: Commands[K]): Promise<Message> {
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
        reject(new ServerError("disconnected", "Not connected to the server.", null));
        return;
      }
      const a = this.nextAck++;
      this.pending.set(a, { resolve, reject });
      const frame: Record<string, unknown> = { t, a };
      if (d !== undefined) frame.d = d;
      this.ws.send(JSON.stringify(frame));
    });
  }

  private dispatch(m: Message): void {
    if (m.a !== undefined && typeof m.a === "number" && this.pending.has(m.a)) {
      const p = this.pending.get(m.a)!;
      this.pending.delete(m.a);
      if (m.t === "error") p.reject(new ServerError(m.d.code, m.d.message, m.d));
      else p.resolve(m);
      if (m.t === "error" || m.t === "ack") return;
    }
    for (const l of this.listeners) l(m);
  }
}
