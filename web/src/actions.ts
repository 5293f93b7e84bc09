// The game's buttons for this viewer (abort or resign, draw, takeback, rematch, absence claims,
// the Lion's pass, flip) and the offers waiting for an answer. Resign and abort take two taps:
// the first turns the button into "Cancel" (where the finger was) and a confirm beside it, which
// gives up after a few seconds (as lichess does), so a stray tap loses nothing.

import type { AckedCommand } from "./net";
import { h } from "./svg";
import type { AbsenceView, GameSnapshot, SideName } from "./protocol.gen";

/** What decides the buttons, filled by the game view. */
export interface ActionState {
  me: SideName | null;
  status: string;
  live: boolean;
  bothMoved: boolean;
  myTurn: boolean;
  rated: boolean;
  drawOffers: boolean;
  /** The server says the side to move may claim a draw now (null: the server did not say). */
  drawClaim: boolean | null;
  drawClaims: boolean;
  myMoves: number;
  offers: GameSnapshot["offers"];
  opponentAway: AbsenceView | null;
  pass: boolean;
  /** A tournament game: no abort (not moving in time loses it), resign from the start; no
   * takeback, no rematch (the tournament pairs). */
  tournament: boolean;
  /** The player may berserk now (a tournament game that allows it, before their first move). */
  berserk: boolean;
  /** A big board (Dai Shogi) offers the zoom. */
  zoomable: boolean;
  nameOf: (side: SideName) => string;
}

export interface ActionHandlers {
  command: (t: AckedCommand, extra?: object) => void;
  pass: () => void;
  flip: () => void;
  /** Toggle the zoomed board; returns whether it is zoomed now. */
  zoom: () => boolean;
}

const CONFIRM_MS = 8000;
const CONFIRM_WORDS: Record<string, [string, string]> = {
  resign: ["Resign", "Yes, resign"],
  abort: ["Abort", "Yes, abort"],
};

export class ActionBar {
  readonly buttons = h("div", { class: "actions" });
  readonly offers = h("div", { class: "offers" });
  private confirming: string | null = null;
  private confirmTimer = 0;
  private last: ActionState | null = null;
  private zoomed = false;

  constructor(private readonly on: ActionHandlers) {}

  render(s: ActionState): void {
    this.last = s;
    const buttons: HTMLElement[] = [];
    const offers: HTMLElement[] = [];
    const add = (label: string, t: AckedCommand, extra: object = {}, cls = "") => {
      const b = h("button", { type: "button", "data-action": t + ("outcome" in extra ? "-" + String((extra as { outcome: string }).outcome) : ""), class: cls, text: label });
      b.addEventListener("click", () => this.on.command(t, extra));
      return b;
    };
    const me = s.me;
    if (me && s.live) {
      const opp: SideName = me === "first" ? "second" : "first";
      if (s.status === "started") {
        buttons.push(...this.confirmable(s.bothMoved || s.tournament ? "resign" : "abort"));
        if (s.berserk) {
          const b = add("Berserk", "berserk", {}, "berserk");
          b.title = "Halve your clock for this game: a win scores one point more (if it lasts 7 moves)";
          buttons.push(b);
        }
        if (s.drawOffers && s.bothMoved) {
          if (s.offers.draw === opp) offers.push(h("span", { text: `${s.nameOf(opp)} offers a draw ` }), add("Accept draw", "draw_accept", {}, "primary"), add("Decline", "draw_decline"));
          else if (s.offers.draw === me) offers.push(h("span", { class: "muted", text: "Draw offered…" }));
          else buttons.push(add("Offer draw", "draw_offer"));
        }
        // Only when the server says the rules allow it (a server that does not say: offered, it answers).
        const claimable = s.drawClaim ?? s.bothMoved;
        if (s.drawClaims && s.myTurn && claimable) buttons.push(add("Claim draw", "claim_draw", {}, "primary"));
        // A tournament game's result is the tournament's: no takebacks there, no rematch after.
        if (!s.rated && !s.tournament) {
          if (s.offers.takeback === opp) offers.push(h("span", { text: `${s.nameOf(opp)} asks to take back ` }), add("Accept takeback", "takeback_accept", {}, "primary"), add("Decline", "takeback_decline"));
          else if (s.offers.takeback === me) offers.push(h("span", { class: "muted", text: "Takeback asked…" }));
          else if (s.myMoves > 0) buttons.push(add("Takeback", "takeback_offer"));
        }
        const gone = s.opponentAway;
        if (gone && gone.claimable && s.bothMoved) offers.push(h("span", { text: `${s.nameOf(opp)} left the game. ` }), add("Claim the win", "abandon_claim", { outcome: "win" }, "primary"), add("Call it a draw", "abandon_claim", { outcome: "draw" }));
        if (s.pass && s.myTurn) {
          const pass = h("button", { type: "button", "data-action": "pass", text: "Pass (Lion)" });
          pass.addEventListener("click", () => this.on.pass());
          buttons.push(pass);
        }
      } else {
        this.confirming = null;
        if (s.tournament) { /* the tournament pairs the next game */ }
        else if (s.offers.rematch === opp) offers.push(h("span", { text: `${s.nameOf(opp)} wants a rematch ` }), add("Accept rematch", "rematch_accept", {}, "primary"), add("Decline", "rematch_decline"));
        else if (s.offers.rematch === me) offers.push(h("span", { class: "muted", text: "Rematch offered…" }));
        else buttons.push(add("Rematch", "rematch_offer"));
      }
    }
    const flip = h("button", { type: "button", "data-action": "flip", text: "Flip board" });
    flip.addEventListener("click", () => this.on.flip());
    buttons.push(flip);
    if (s.zoomable) {
      const zoom = h("button", { type: "button", "data-action": "zoom", text: this.zoomed ? "Whole board" : "Zoom", title: "Bigger squares: pan with a finger, tap to move" });
      zoom.addEventListener("click", () => { this.zoomed = this.on.zoom(); if (this.last) this.render(this.last); });
      buttons.push(zoom);
    }
    this.buttons.replaceChildren(...buttons);
    this.offers.replaceChildren(...offers);
  }

  /** Resign or abort: the button, or while confirming "Cancel" in its place and the confirm. */
  private confirmable(t: "resign" | "abort"): HTMLElement[] {
    const [label, yes] = CONFIRM_WORDS[t];
    if (this.confirming !== t) {
      const b = h("button", { type: "button", "data-action": t, class: "danger", text: label });
      b.addEventListener("click", () => this.ask(t));
      return [b];
    }
    const cancel = h("button", { type: "button", "data-action": `${t}-cancel`, text: "Cancel" });
    cancel.addEventListener("click", () => this.ask(null));
    const confirm = h("button", { type: "button", "data-action": `${t}-confirm`, class: "danger confirm", text: yes });
    confirm.addEventListener("click", () => { this.ask(null); this.on.command(t); });
    return [cancel, confirm];
  }

  private ask(t: string | null): void {
    this.confirming = t;
    window.clearTimeout(this.confirmTimer);
    if (t !== null) this.confirmTimer = window.setTimeout(() => this.ask(null), CONFIRM_MS);
    if (this.last) this.render(this.last);
  }
}
