// Conditional premoves of a correspondence game (docs/correspondence.md): the player's own lines
// "if my opponent plays X, answer Y …", listed, added and cleared. A line is made on a small board
// ("Make a line on the board", linebuilder.ts: the server answers the legal moves after each
// step) or typed (moves as the board sends them, separated by spaces); the server checks it, its
// refusal names the line and the move.
import { errorText, type Ctx } from "./ctx";
import { LineBuilder } from "./linebuilder";
import type { PremovesPayload } from "./protocol.gen";
import { h } from "./svg";
import type { VariantInfo } from "./types";

export class PremovePanel {
  readonly el: HTMLElement;
  private lines: string[][] = [];
  private readonly list = h("ol", { class: "premove-lines" });
  private readonly input = h("input", { type: "text", name: "premove-line", maxlength: 400, placeholder: "their move, your reply, …", "aria-label": "Conditional line: your opponent's move, your reply, …" });
  private readonly error = h("p", { class: "premove-error", role: "alert" });  // not the game's own .error
  private readonly clear = h("button", { type: "button", "data-action": "premoves-clear", text: "Clear" });
  private readonly open = h("button", { type: "button", "data-action": "premove-board", text: "Make a line on the board" });
  private readonly form: HTMLFormElement;
  private readonly builderBox = h("div", { class: "premove-builder-box" });
  private builder: LineBuilder | null = null;
  private board: { variant: VariantInfo; side: 0 | 1 } | null = null;
  /** The game's ply when last shown: a builder started before it is out of date. */
  private ply = -1;

  constructor(private readonly ctx: Ctx, private readonly gameId: string) {
    const add = h("button", { type: "submit", class: "primary", "data-action": "premoves-add", text: "Add conditional line" });
    this.form = h("form", { class: "premove-form" }, [this.input, add]);
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      const line = this.input.value.trim().split(/\s+/).filter(Boolean);
      if (line.length) void this.send(() => this.ctx.conn.request("premoves", { game: this.gameId, lines: [...this.lines, line] }));
    });
    this.clear.addEventListener("click", () => void this.send(() => this.ctx.conn.request("premoves_clear", { game: this.gameId })));
    this.open.addEventListener("click", () => this.openBuilder());
    this.el = h("section", { class: "premoves", hidden: true }, [
      h("h3", { text: "Conditional premoves" }),
      h("p", { class: "muted", text: "While your opponent is to move: if they play the first move of a line, your reply is played for you, and so on." }),
      this.list, this.clear, this.open, this.builderBox, this.form, this.error,
    ]);
    this.draw();
  }

  /** The game's variant and the player's side (the board's orientation). */
  configure(variant: VariantInfo, side: 0 | 1): void { this.board = { variant, side }; }

  /** The server's `premoves` message: the lines now stored. */
  update(d: PremovesPayload): void {
    this.lines = d.lines;
    this.draw();
  }

  /** Shown to a player of a running correspondence game only; `canAdd`: the opponent is to move
   * (after `ply` moves: a line being made from an older position starts again). */
  show(visible: boolean, canAdd: boolean, ply: number): void {
    this.el.hidden = !visible;
    this.input.disabled = !canAdd;
    this.open.disabled = !canAdd || !this.board;
    if (!visible || !canAdd) this.closeBuilder();
    else if (this.builder && ply !== this.ply) void this.builder.start();
    this.ply = ply;
  }

  /** A new snapshot of the room: what was shown may be stale (the server sends the lines again). */
  reset(): void {
    this.lines = [];
    this.draw();
  }

  private openBuilder(): void {
    if (this.builder || !this.board) return;
    this.builder = new LineBuilder(this.ctx, this.gameId, this.board.variant, this.board.side, {
      save: (line) => this.send(() => this.ctx.conn.request("premoves", { game: this.gameId, lines: [...this.lines, line] }), false),
      close: () => this.closeBuilder(),
      error: (text) => { this.error.textContent = text; },
    });
    this.builderBox.replaceChildren(this.builder.el);
    this.open.hidden = this.form.hidden = true;
    void this.builder.start();
  }

  private closeBuilder(): void {
    if (!this.builder) return;
    this.builder = null;
    this.builderBox.replaceChildren();
    this.open.hidden = this.form.hidden = false;
  }

  /** Send a command; true once done (a refusal is shown under the panel). */
  private async send(request: () => Promise<unknown>, clearInput = true): Promise<boolean> {
    this.error.textContent = "";
    try {
      await request();
      if (clearInput) this.input.value = "";
      return true;
    } catch (e) {
      this.error.textContent = errorText(e);
      return false;
    }
  }

  private draw(): void {
    this.list.replaceChildren(...this.lines.map((line) => h("li", { class: "premove-line", text: line.join(" ") })));
    if (!this.lines.length) this.list.replaceChildren(h("li", { class: "empty muted", text: "No conditional lines." }));
    this.clear.hidden = !this.lines.length;
  }
}
