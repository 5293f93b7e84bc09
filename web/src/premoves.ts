// Conditional premoves of a correspondence game (docs/correspondence.md): the player's own lines
// "if my opponent plays X, answer Y …", listed, added and cleared. The board knows the legal moves
// of the current position only, so a line is typed (moves as the board sends them, separated by
// spaces) and the server checks it; its refusal names the line and the move.
import { errorText, type Ctx } from "./ctx";
import type { PremovesPayload } from "./protocol.gen";
import { h } from "./svg";

export class PremovePanel {
  readonly el: HTMLElement;
  private lines: string[][] = [];
  private readonly list = h("ol", { class: "premove-lines" });
  private readonly input = h("input", { type: "text", name: "premove-line", maxlength: 400, placeholder: "their move, your reply, …", "aria-label": "Conditional line: your opponent's move, your reply, …" });
  private readonly error = h("p", { class: "premove-error", role: "alert" });  // not the game's own .error
  private readonly clear = h("button", { type: "button", "data-action": "premoves-clear", text: "Clear" });

  constructor(private readonly ctx: Ctx, private readonly gameId: string) {
    const add = h("button", { type: "submit", class: "primary", "data-action": "premoves-add", text: "Add conditional line" });
    const form = h("form", { class: "premove-form" }, [this.input, add]);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const line = this.input.value.trim().split(/\s+/).filter(Boolean);
      if (line.length) void this.send(() => this.ctx.conn.request("premoves", { game: this.gameId, lines: [...this.lines, line] }));
    });
    this.clear.addEventListener("click", () => void this.send(() => this.ctx.conn.request("premoves_clear", { game: this.gameId })));
    this.el = h("section", { class: "premoves", hidden: true }, [
      h("h3", { text: "Conditional premoves" }),
      h("p", { class: "muted", text: "While your opponent is to move: if they play the first move of a line, your reply is played for you, and so on." }),
      this.list, this.clear, form, this.error,
    ]);
    this.draw();
  }

  /** The server's `premoves` message: the lines now stored. */
  update(d: PremovesPayload): void {
    this.lines = d.lines;
    this.draw();
  }

  /** Shown to a player of a running correspondence game only; `canAdd`: the opponent is to move. */
  show(visible: boolean, canAdd: boolean): void {
    this.el.hidden = !visible;
    this.input.disabled = !canAdd;
  }

  /** A new snapshot of the room: what was shown may be stale (the server sends the lines again). */
  reset(): void {
    this.lines = [];
    this.draw();
  }

  private async send(request: () => Promise<unknown>): Promise<void> {
    this.error.textContent = "";
    try {
      await request();
      this.input.value = "";
    } catch (e) {
      this.error.textContent = errorText(e);
    }
  }

  private draw(): void {
    this.list.replaceChildren(...this.lines.map((line) => h("li", { class: "premove-line", text: line.join(" ") })));
    if (!this.lines.length) this.list.replaceChildren(h("li", { class: "empty muted", text: "No conditional lines." }));
    this.clear.hidden = !this.lines.length;
  }
}
