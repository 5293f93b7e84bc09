// A conditional line made on a board (docs/correspondence.md, "Conditional premoves"): a small
// board starts at the game's position; the player plays the opponent's move, then their reply,
// and so on. The client has no move generator, so each step asks the server (`premove_line`)
// for the position and the legal moves after the line so far, and the board draws the answer
// like any position. Take back pops the last answer (no request), Clear keeps the first, Save
// hands the line (the engine's spelling, as `premoves` stores it) to the panel.
import { Board } from "./board";
import { errorText, type Ctx } from "./ctx";
import type { PremoveLinePayload } from "./protocol.gen";
import { h } from "./svg";
import type { VariantInfo } from "./types";

/** The longest line `premoves` takes (and `premove_line` answers): 10 replies. */
export const MAX_LINE_MOVES = 20;

export interface LineBuilderHooks {
  /** Store the line with the others; resolves true once stored. */
  save(line: string[]): Promise<boolean>;
  /** The player closed the board. */
  close(): void;
  /** Show a refusal (or "" to clear it). */
  error(text: string): void;
}

export class LineBuilder {
  readonly el: HTMLElement;
  private readonly board: Board;
  /** The server's answers: [0] the game's position, [i] after the line's first i moves. */
  private steps: PremoveLinePayload[] = [];
  private busy = false;
  private readonly moveList = h("ol", { class: "premove-building" });
  private readonly hint = h("p", { class: "premove-hint muted", role: "status" });
  private readonly undo = h("button", { type: "button", "data-action": "premove-undo", text: "Take back" });
  private readonly clear = h("button", { type: "button", "data-action": "premove-reset", text: "Clear" });
  private readonly save = h("button", { type: "button", class: "primary", "data-action": "premove-save", text: "Save line" });

  constructor(private readonly ctx: Ctx, private readonly gameId: string, variant: VariantInfo, side: 0 | 1, private readonly hooks: LineBuilderHooks) {
    this.board = new Board(variant, side, ctx.settings.labels, (uci) => void this.step(uci));
    this.board.tooltips = ctx.settings.tooltips;
    const close = h("button", { type: "button", "data-action": "premove-close", text: "Close" });
    this.undo.addEventListener("click", () => { if (this.steps.length > 1 && !this.busy) { this.steps.pop(); this.draw(); } });
    this.clear.addEventListener("click", () => { if (!this.busy) { this.steps.length = Math.min(this.steps.length, 1); this.draw(); } });
    this.save.addEventListener("click", () => void this.store());
    close.addEventListener("click", () => this.hooks.close());
    this.el = h("div", { class: "premove-builder" }, [this.hint, this.board.el, this.moveList,
      h("div", { class: "premove-buttons" }, [this.undo, this.clear, this.save, close])]);
    this.draw();
  }

  /** The ply the line starts after (null until the server answered). */
  get basePly(): number | null { return this.steps[0]?.ply ?? null; }

  /** (Re)start from the game's current position. */
  async start(): Promise<void> {
    this.steps = [];
    await this.ask([]);
  }

  private get last(): PremoveLinePayload | undefined { return this.steps[this.steps.length - 1]; }

  private async step(uci: string): Promise<void> {
    const last = this.last;
    if (!last || this.busy) return;
    await this.ask([...last.moves, uci]);
  }

  /** The server's position after `moves`, pushed as the next step; a refusal is shown and the
   * board stays where it was. */
  private async ask(moves: string[]): Promise<void> {
    this.busy = true;
    this.draw();
    try {
      const answer = await this.ctx.conn.request("premove_line", { game: this.gameId, moves });
      this.steps.push(answer.d);
      this.hooks.error("");
    } catch (e) {
      this.hooks.error(errorText(e));
    } finally {
      this.busy = false;
      this.draw();
    }
  }

  private async store(): Promise<void> {
    const line = this.last?.moves ?? [];
    if (this.busy || line.length < 2 || line.length % 2) return;
    this.busy = true;
    this.draw();
    const saved = await this.hooks.save(line);
    this.busy = false;
    if (saved) this.steps.length = Math.min(this.steps.length, 1);  // ready for the next line
    this.draw();
  }

  private draw(): void {
    const last = this.last;
    const moves = last?.moves ?? [];
    const full = moves.length >= MAX_LINE_MOVES;
    const canMove = last !== undefined && !this.busy && !full && last.legal.length > 0;
    if (last) {
      this.board.set({ fen: last.fen, legal: canMove ? last.legal : [], last: moves[moves.length - 1] ?? null,
        check: last.check, interactive: canMove, premoveSide: null });
    }
    this.el.dataset.moves = moves.join(" ");
    this.el.dataset.busy = String(this.busy);
    this.moveList.replaceChildren(...(last?.displays ?? []).map((text, i) =>
      h("li", { class: i % 2 ? "mine" : "theirs", "data-uci": moves[i], text: `${i + 1}. ${i % 2 ? "you" : "they"}: ${text}` })));
    this.hint.textContent = !last ? "Loading the position…"
      : last.legal.length === 0 ? `The game would be over here${last.result ? ` (${last.result})` : ""}.`
      : full ? `The line is full (${MAX_LINE_MOVES} moves).`
      : moves.length === 0 ? "Play a move your opponent might make."
      : moves.length % 2 === 0 ? "Save the line, or play your opponent's next move."
      : "Play your reply.";
    this.undo.disabled = this.busy || moves.length === 0;
    this.clear.disabled = this.busy || moves.length === 0;
    this.save.disabled = this.busy || moves.length < 2 || moves.length % 2 === 1;
    this.save.title = moves.length % 2 === 1 ? "Add your reply first" : "";
  }
}
