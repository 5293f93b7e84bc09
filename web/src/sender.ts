// The player's own moves on their way to the server: proposed (Settings → Confirm moves, until
// "Confirm move"), then pending until the server confirms (its ack or the move event) or
// refuses it (an error, with the reason). A pending move survives a lost connection: it is
// sent again once the game is re-joined (the server acks a resend of a move it already has).

import { errorText } from "./ctx";
import { LOST, type Connection } from "./net";
import type { MoveFields } from "./protocol.gen";
import { h } from "./svg";

/** A move of the player's on its way: the played move's own fields (protocol.gen.ts). */
type OwnMove = Pick<MoveFields, "ply" | "uci">;
type State = { legal: string[]; fen: string; ply: number };

export interface SenderHost {
  readonly conn: Connection;
  readonly gameId: string;
  confirmMoves(): boolean;
  redraw(): void;
  /** The move was refused: say why (and resynchronise from the error's `state`). */
  refused(text: string, state: State | null): void;
  clearError(): void;
}

export class MoveSender {
  pending: OwnMove | null = null;
  proposed: OwnMove | null = null;
  /** "Connection lost — reconnecting…" / "Sending your move…" under the board. */
  readonly note = h("p", { class: "conn-note", role: "status", hidden: true });
  readonly confirmBox = h("div", { class: "move-confirm", hidden: true });

  constructor(private readonly host: SenderHost) {}

  /** The player chose `uci` as move number `ply`. */
  async play(uci: string, ply: number, confirmed = false): Promise<void> {
    if (this.pending) return;
    if (this.host.confirmMoves() && !confirmed && uci !== "@@@@") {
      this.proposed = { ply, uci };
      this.host.redraw();
      return;
    }
    this.proposed = null;
    this.pending = { ply, uci };
    this.host.clearError();
    this.host.redraw();
    await this.send();
  }

  /** Send the pending move (again after a reconnection). A lost answer keeps it pending. */
  async send(): Promise<void> {
    const p = this.pending;
    this.drawNote();
    if (!p || !this.host.conn.open) return;
    try {
      await this.host.conn.request("move", { game: this.host.gameId, ply: p.ply, move: p.uci });
      if (this.pending === p) this.settle(null);
    } catch (e) {
      if (this.pending !== p) return;
      if (LOST.has((e as { code?: string }).code ?? "")) { this.drawNote(); return; }
      this.settle(errorText(e), (e as { data?: { state?: State } }).data?.state ?? null);
    }
    this.host.redraw();
  }

  /** What the server now shows: `moves` played so far, the game `over` or not. */
  reconcile(moves: string[], over: boolean): void {
    const p = this.pending;
    if (!p) return;
    if (moves.length >= p.ply) this.settle(moves[p.ply - 1] === p.uci ? null : "the position changed.");
    else if (over) this.settle("the game is over.");
  }

  /** The move the board draws as played at the live position (pending or proposed), if any;
   * a proposal that no longer fits (another ply, not the player's turn) is dropped. */
  shown(ply: number, myTurn: boolean): string | null {
    if (this.proposed && (this.proposed.ply !== ply + 1 || !myTurn)) this.proposed = null;
    this.drawConfirm();
    return this.pending?.uci ?? this.proposed?.uci ?? null;
  }

  drawNote(): void {
    const open = this.host.conn.open;
    const text = !open
      ? `Connection lost — reconnecting…${this.pending ? " Your move (marked on the board) will be sent when it is back." : ""}`
      : this.pending ? "Sending your move…" : "";
    this.note.textContent = text;
    this.note.hidden = text === "";
    this.note.classList.toggle("bad", !open);
  }

  private settle(refused: string | null, state: State | null = null): void {
    if (!this.pending) return;
    this.pending = null;
    if (refused !== null) this.host.refused(`Your move was not played: ${refused}`, state);
    this.drawNote();
  }

  private drawConfirm(): void {
    const p = this.proposed;
    this.confirmBox.hidden = p === null;
    if (!p) { this.confirmBox.replaceChildren(); return; }
    const cancel = h("button", { type: "button", "data-action": "move-cancel", text: "Cancel" });
    cancel.addEventListener("click", () => { this.proposed = null; this.host.redraw(); });
    const ok = h("button", { type: "button", "data-action": "move-confirm", class: "primary", text: "Confirm move" });
    ok.addEventListener("click", () => { if (this.proposed === p) void this.play(p.uci, p.ply, true); });
    this.confirmBox.replaceChildren(cancel, ok);
  }
}
