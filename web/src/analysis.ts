// Computer analysis on the review page (docs/web.md): the request button, progress while a
// worker analyses (queued / n of m positions), the evaluation graph (click a point to go
// there), the judged moves' marks for the move list and the engine's best move for the board.
// The server computes everything (scores from the first player's view, lichess's judgements);
// this module only shows it. Over the websocket (`analysis`, and `analyse` to request, in the
// logged-in player's name), or without a connection GET / POST /api/game/<id>/analysis.

import { errorText, type Ctx } from "./ctx";
import type { AdviceView, AnalysisView, ScoreView, ShownAdviceView, ShownPlyEvalView } from "./protocol.gen";
import { h, svg } from "./svg";
import { sideTitle } from "./words";


export const GLYPHS: Record<AdviceView["judgement"], string> = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const POLL_MS = 1500;
const W = 600;
const H = 120;

/** Winning chances on [-1, 1] from the first player's view (lichess's curve), for the graph. */
export function winChances(score: ScoreView): number {
  if (score.mate !== undefined) return score.mate > 0 ? 1 : -1;
  const cp = Math.max(-1000, Math.min(1000, score.cp ?? 0));
  return 2 / (1 + Math.exp(-0.00368208 * cp)) - 1;
}

/** A score as players read it: +0.35, −1.20, #3, #−2 (first player's view). */
export function scoreText(score: ScoreView): string {
  if (score.mate !== undefined) return `#${score.mate}`;
  const pawns = (score.cp ?? 0) / 100;
  return `${pawns > 0 ? "+" : ""}${pawns.toFixed(2)}`;
}

/** A line of moves from the position after `ply` moves, numbered as the move list numbers
 * them: shogi by move ("13. P-7f 14. P-3d"), chess by full move ("7. Nf3 Nc6", "7... Nc6 8. d4";
 * `secondFirst`: the game began with the second player's move). */
export function lineText(moves: string[], ply: number, family: "shogi" | "chess", secondFirst = false): string {
  if (family === "shogi") return moves.map((m, i) => `${ply + i + 1}. ${m}`).join(" ");
  const offset = secondFirst ? 1 : 0;
  return moves.map((m, i) => {
    const p = ply + i + offset;  // half-moves before this one, counted from a first-player move
    const n = Math.floor(p / 2) + 1;
    return p % 2 === 0 ? `${n}. ${m}` : i === 0 ? `${n}... ${m}` : m;
  }).join(" ");
}

export class AnalysisPanel {
  readonly el: HTMLElement;
  view: AnalysisView | null = null;
  private timer = 0;
  private shown = 0;
  private readonly body = h("div", { class: "analysis-body" });

  constructor(
    private readonly ctx: Ctx,
    private readonly gameId: string,
    private readonly finished: () => boolean,
    private readonly goto: (ply: number) => void,
    private readonly changed: () => void,
    /** The game's variant (its name), once the page knows it. */
    private readonly variant: () => string | undefined = () => undefined,
    /** Whether the game began with the second player's move (a chess line's numbers). */
    private readonly secondFirst: () => boolean = () => false,
  ) {
    this.el = h("section", { class: "analysis", "data-analysis": "none" }, [h("h3", { text: "Computer analysis" }), this.body]);
    void this.load();
  }

  destroy(): void { window.clearTimeout(this.timer); }

  evalAt(ply: number): ShownPlyEvalView | null { return this.view?.plies.find((p) => p.ply === ply) ?? null; }
  adviceAt(ply: number): ShownAdviceView | null { return this.view?.advice.find((a) => a.ply === ply) ?? null; }

  /** The shown position changed: move the graph's cursor. */
  show(ply: number): void { this.shown = ply; this.draw(); }

  private async load(attempt = 0): Promise<void> {
    window.clearTimeout(this.timer);
    if (!this.ctx.conn.open && attempt < 30) {  // the page's websocket is still opening
      this.timer = window.setTimeout(() => void this.load(attempt + 1), 300);
      return;
    }
    try {
      this.view = await this.fetchView();
    } catch (e) { this.body.replaceChildren(h("p", { class: "error", text: errorText(e) })); return; }
    if (this.view && (this.view.state === "queued" || this.view.state === "running")) {
      this.timer = window.setTimeout(() => void this.load(), POLL_MS);
    }
    this.draw();
    this.changed();
  }

  /** The analysis over the websocket (`analysis`), else GET; null when there is none. */
  private async fetchView(): Promise<AnalysisView | null> {
    if (this.ctx.conn.open) {
      try {
        return (await this.ctx.conn.request("analysis", { game: this.gameId })).d;
      } catch (e) {
        if ((e as { code?: string }).code === "no_analysis") return null;
        throw e;
      }
    }
    const answer = await fetch(`/api/game/${encodeURIComponent(this.gameId)}/analysis`);
    const body = await answer.json();
    if (answer.status === 404) return null;
    if (!answer.ok) throw new Error(body.error ?? answer.statusText);
    return body as AnalysisView;
  }

  private async request(limits: object): Promise<void> {
    this.refusal = null;
    try {
      if (this.ctx.conn.open) await this.ctx.conn.request("analyse", { game: this.gameId, ...limits });
      else {
        const answer = await fetch(`/api/game/${encodeURIComponent(this.gameId)}/analysis`, {
          method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(limits) });
        if (!answer.ok) throw new Error((await answer.json()).error ?? answer.statusText);
      }
      await this.load();
    } catch (e) { this.refusal = errorText(e); this.draw(); }
  }

  private draw(): void {
    const v = this.view;
    this.el.dataset.analysis = v ? v.state : "none";
    if (!v || v.state === "failed") {
      if (!this.finished()) { this.body.replaceChildren(h("p", { class: "muted", text: "Finished games can be analysed." })); return; }
      // The form is built once: redrawing (every ply shown) keeps the player's choice.
      const { kind, button } = this.form ??= this.requestForm();
      const failed = v?.state === "failed" ? h("p", { class: "error", text: `The last analysis failed: ${v.error ?? "unknown"}` }) : null;
      const slow = this.variant() === "daishogi" ? h("p", { class: "muted", text: "Dai Shogi is slow: about a second per position." }) : "";
      // Only registered players may request one (docs/engines.md): say so before the click.
      const who = this.ctx.me && !this.ctx.me.guest ? "" : h("p", { class: "muted", "data-note": "registered-only", text: "Requesting an analysis needs a registered account: log in or register above." });
      // The refusal of the last click is state, not a node added once: a redraw (another ply
      // shown, the view loaded again) keeps it on screen.
      const refused = this.refusal === null ? "" : h("p", { class: "error", role: "alert", text: this.refusal });
      this.body.replaceChildren(failed ?? "", h("div", { class: "analysis-request" }, [button, kind]), refused, who, slow);
      return;
    }
    const parts: (HTMLElement | SVGElement)[] = [];
    if (v.state !== "done") {
      const what = v.state === "queued" ? "Queued…" : `Analysing: ${v.progress.done} of ${v.progress.total} positions`;
      parts.push(h("p", { class: "analysis-progress", role: "status", text: `${what} (about ${v.estimate_s} s left)` }),
        h("progress", { max: v.progress.total, value: v.progress.done }));
    }
    parts.push(this.graph(v));
    const names = ["first", "second"] as const;
    parts.push(h("table", { class: "analysis-summary" }, [
      h("tr", {}, [["", ""], ["?!", "inaccuracies"], ["?", "mistakes"], ["??", "blunders"], ["ACPL", "average centipawn loss"], ["Acc.", "accuracy"]]
        .map(([t, title]) => h("th", { text: t, title }))),
      ...names.map((side) => {
        const s = v.summary[side];
        return h("tr", { "data-side": side }, [h("td", { text: sideTitle(this.ctx.variants.get(this.variant() ?? ""), side) }), h("td", { text: String(s.inaccuracy) }),
          h("td", { text: String(s.mistake) }), h("td", { text: String(s.blunder) }), h("td", { text: s.acpl === null ? "–" : String(s.acpl) }),
          h("td", { text: s.accuracy === null ? "–" : `${s.accuracy}%` })]);
      }),
    ]));
    const here = this.evalAt(this.shown);
    // The line in the move list's notation (the server's `pv_display`), numbered as it is.
    const family = this.ctx.variants.get(this.variant() ?? "")?.family ?? "shogi";
    if (here) parts.push(h("p", { class: "analysis-line" }, [h("b", { text: scoreText(here.score) }), ` depth ${here.depth}: ${lineText(here.pv_display, this.shown, family, this.secondFirst()) || "–"}`]));
    const judged = this.adviceAt(this.shown);
    if (judged?.best_display) parts.push(h("p", { class: "analysis-advice", text: `${judged.judgement[0].toUpperCase()}${judged.judgement.slice(1)}. ${judged.best_display} was best.` }));
    this.body.replaceChildren(...parts);
  }

  private form: { kind: HTMLSelectElement; button: HTMLButtonElement } | null = null;
  /** Why the server refused the last request (shown under the form until the next click). */
  private refusal: string | null = null;

  private requestForm(): { kind: HTMLSelectElement; button: HTMLButtonElement } {
    const kind = h("select", { name: "limit", "aria-label": "Limit per position" }, [
      h("option", { value: "", text: "default time" }), h("option", { value: "movetime_ms:1000", text: "1 s a position" }),
      h("option", { value: "movetime_ms:3000", text: "3 s a position" }), h("option", { value: "depth:8", text: "depth 8" }),
      h("option", { value: "depth:12", text: "depth 12" })]);
    const button = h("button", { type: "button", class: "primary", "data-action": "request-analysis", text: "Request computer analysis" });
    button.addEventListener("click", () => {
      button.disabled = true;
      const [key, value] = kind.value.split(":");
      void this.request(key ? { [key]: Number(value) } : {}).finally(() => { button.disabled = false; });
    });
    return { kind, button };
  }

  private graph(v: AnalysisView): SVGSVGElement {
    const total = Math.max(1, v.progress.total - 1, ...v.plies.map((p) => p.ply));
    const x = (ply: number) => (ply / total) * W;
    const y = (w: number) => H / 2 - (w * H) / 2;
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "eval-graph", role: "img", "aria-label": "Evaluation graph" });
    root.append(svg("rect", { x: 0, y: 0, width: W, height: H, class: "eval-bg" }), svg("line", { x1: 0, y1: H / 2, x2: W, y2: H / 2, class: "eval-zero" }));
    const points = v.plies.map((p) => [x(p.ply), y(winChances(p.score))]);
    if (points.length) {
      root.append(svg("path", { class: "eval-area", d: `M0,${H / 2} ${points.map(([a, b]) => `L${a},${b}`).join(" ")} L${points[points.length - 1][0]},${H / 2} Z` }));
      root.append(svg("polyline", { class: "eval-line", points: points.map((p) => p.join(",")).join(" ") }));
    }
    for (const a of v.advice) {
      const e = this.evalAt(a.ply);
      if (e) root.append(svg("circle", { cx: x(a.ply), cy: y(winChances(e.score)), r: 5, class: `eval-mark ${a.judgement}`, "data-ply": a.ply }));
    }
    root.append(svg("line", { x1: x(this.shown), y1: 0, x2: x(this.shown), y2: H, class: "eval-cursor" }));
    root.addEventListener("click", (event) => {
      const box = root.getBoundingClientRect();
      this.goto(Math.max(0, Math.min(v.progress.total, Math.round(((event.clientX - box.left) / box.width) * total))));
    });
    return root;
  }
}
