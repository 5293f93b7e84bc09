// The review tools under a game's move list: the export downloads (PGN, KIF, USI), Copy FEN /
// SFEN of the shown position and a link to it.

import { h } from "./svg";

export class ReviewTools {
  readonly el = h("div", { class: "review-tools" });
  /** One button for the page's life: a redraw while a click is being answered keeps its result. */
  private readonly copy = h("button", { type: "button", "data-action": "copy-fen" });
  private shown = 0;

  constructor(
    private readonly gameId: () => string,
    private readonly family: () => "shogi" | "chess",
    /** The FEN (chess) or SFEN (shogi) of the position after `ply` moves. */
    private readonly textAt: (ply: number) => Promise<string>,
  ) {
    this.copy.addEventListener("click", async () => {
      const text = await this.textAt(this.shown);
      this.copy.dataset.copied = text;
      navigator.clipboard?.writeText(text).then(() => { this.copy.textContent = "Copied"; }, () => { this.copy.textContent = "Copy failed"; });
    });
  }

  /** The tools for the position after `ply` moves; `formats` the stored game's, if known. */
  draw(ply: number, formats?: string[]): void {
    this.shown = ply;
    const id = this.gameId();
    const shogi = this.family() === "shogi";
    const links = (formats ?? (shogi ? ["pgn", "kif", "usi"] : ["pgn"])).map((f) =>
      h("a", { href: `/api/games/${id}.${f}`, download: `${id}.${f}`, class: "button", "data-export": f, text: f.toUpperCase() }));
    if (this.copy.dataset.ply !== String(ply)) {
      this.copy.dataset.ply = String(ply);
      this.copy.textContent = shogi ? "Copy SFEN" : "Copy FEN";
    }
    const share = h("a", { href: `/game/${id}#${ply}`, class: "share", text: "Link to this position" });
    this.el.replaceChildren(h("span", { class: "muted", text: "Download " }), ...links, this.copy, share);
  }
}
