// The one board component, for every variant: an SVG grid of any size up to 15×15 with the
// pieces of pieces.ts, the hands (komadai) beside it, click-click and drag-and-drop input over
// the server's legal list (moves.ts), a promotion dialog, and the piece tooltip.

import { coordLabels, parseFen, squareName, squareXY, type Position } from "./fen";
import { advance, click, movesFrom, parseLegal, type LegalMove, type Origin, type Step } from "./moves";
import { drawPiece, pieceInfo, type LabelStyle } from "./pieces";
import { h, svg } from "./svg";
import type { VariantInfo } from "./types";
import { showPieceTip, hidePieceTip } from "./tooltip";
import { withPendingMove } from "./pending";

export interface BoardState {
  fen: string;
  legal: string[];
  /** The last move's uci (for the highlight), or null. */
  last: string | null;
  check: boolean;
  /** The viewer may move now (a player whose turn it is, game running, at the live ply). */
  interactive: boolean;
  /** The viewer's side while it waits for the opponent's move (a premove may be set), else null. */
  premoveSide: 0 | 1 | null;
  /** The viewer's move sent but not yet confirmed by the server: drawn as played, marked. */
  pending?: string | null;
}

const SQ = 100;
const TIP_DELAY_MS = 500;
const MARGIN = 34;

export class Board {
  readonly el: HTMLElement;
  private readonly root: SVGSVGElement;
  private layer: SVGGElement;
  private readonly hands: [HTMLElement, HTMLElement];
  private pos: Position | null = null;
  private state: BoardState | null = null;
  private moves: LegalMove[] = [];
  private origin: Origin | null = null;
  private clicked: string[] = [];
  private drag: { origin: Origin; x: number; y: number; ghost: SVGGElement | null; pointer: number } | null = null;
  private dialog: HTMLElement | null = null;
  /** A premove: clicked while the opponent was to move, tried against the next legal list. */
  private premove: { from: string; to: string | null } | null = null;
  /** The piece tooltip is on (Settings → Piece tooltips). */
  tooltips = true;
  private tipTimer = 0;
  private tipSquare: string | null = null;
  private arrow: string | null = null;

  constructor(
    private readonly variant: VariantInfo,
    private orientation: 0 | 1,
    private labels: LabelStyle,
    private readonly onMove: (uci: string) => void,
  ) {
    const w = variant.files * SQ + 2 * MARGIN;
    const hgt = variant.ranks * SQ + 2 * MARGIN;
    this.root = svg("svg", { viewBox: `0 0 ${w} ${hgt}`, class: `board board-${variant.family} board-${variant.name}`, role: "img" });
    this.layer = svg("g");
    this.root.append(this.layer);
    this.hands = [h("div", { class: "hand" }), h("div", { class: "hand" })];
    this.el = h("div", { class: `board-wrap files-${variant.files}${variant.drops ? " hands" : ""}`, "data-variant": variant.name }, [this.hands[0], this.root, this.hands[1]]);
    this.el.style.setProperty("--files", String(variant.files));
    this.root.addEventListener("pointerdown", (e) => this.pointerDown(e));
    this.root.addEventListener("pointermove", (e) => this.hover(e));
    this.root.addEventListener("pointerleave", () => this.hideTip());
    this.root.addEventListener("contextmenu", (e) => e.preventDefault());
  }

  setOrientation(side: 0 | 1): void { this.orientation = side; this.render(); }
  /** An arrow along a move (the engine's best move, analysis.ts), or none. */
  setArrow(uci: string | null): void { this.arrow = uci; this.render(); }
  setLabels(labels: LabelStyle): void { this.labels = labels; this.render(); }

  set(state: BoardState): void {
    this.hideTip();  // the position may have changed under it: never a stale tooltip
    const sameSelection = this.state && state.fen === this.state.fen && state.legal.join() === this.state.legal.join();
    this.state = state;
    this.pos = parseFen(state.fen, this.variant.files, this.variant.ranks);
    this.moves = state.interactive ? parseLegal(state.legal) : [];
    if (!sameSelection || !state.interactive) this.cancel();
    const premove = this.premove;
    if (state.interactive || state.premoveSide === null) this.premove = null;
    if (state.interactive && premove?.to) this.playPremove(premove.from, premove.to);
    this.render();
  }

  /** The premove if the server's list holds it (a Lion stops after its first square and a
   * promotion opens the dialog, as when clicked); otherwise it is dropped. */
  private playPremove(from: string, to: string): void {
    const step = click(this.moves, from, [], to);
    if (step.step.kind === "none") return;
    this.origin = from;
    this.clicked = step.clicked;
    if (step.step.kind === "done") this.finish(step.step.moves);
  }

  /** A click while waiting: pick one of the viewer's pieces, then any square. */
  private premoveClick(square: string, side: 0 | 1): void {
    const [f, r] = squareXY(square);
    const own = this.pos?.board[r][f]?.side === side;
    const p = this.premove;
    if (p && p.to === null && square !== p.from) this.premove = { from: p.from, to: square };
    else if (own && p?.from !== square) this.premove = { from: square, to: null };
    else this.premove = null;
    this.render();
  }

  /** Screen position (column, row) of a square for the current orientation. */
  private cell(file: number, rank: number): [number, number] {
    const { files, ranks } = this.variant;
    return this.orientation === 0 ? [file, ranks - 1 - rank] : [files - 1 - file, rank];
  }

  private squareAt(clientX: number, clientY: number): string | null {
    const ctm = this.root.getScreenCTM();
    if (!ctm) return null;
    const p = new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse());
    const col = Math.floor((p.x - MARGIN) / SQ);
    const row = Math.floor((p.y - MARGIN) / SQ);
    const { files, ranks } = this.variant;
    if (col < 0 || row < 0 || col >= files || row >= ranks) return null;
    return this.orientation === 0 ? squareName(col, ranks - 1 - row) : squareName(files - 1 - col, row);
  }

  private step(): Step {
    return this.origin === null ? { kind: "none" } : advance(this.moves, this.origin, this.clicked);
  }

  private cancel(): void {
    this.origin = null;
    this.clicked = [];
    this.dialog?.remove();
    this.dialog = null;
  }

  private render(): void {
    const pending = this.state?.pending ?? null;
    const pos = this.pos && pending ? withPendingMove(this.pos, pending) : this.pos;
    if (!pos) return;
    if (pending) this.el.dataset.pending = pending;
    else delete this.el.dataset.pending;
    const pendingSquares = lastMoveSquares(pending);
    const { files, ranks, family } = this.variant;
    const layer = svg("g");
    const labels = coordLabels(family, files, ranks);
    const step = this.step();
    const lastSquares = lastMoveSquares(this.state?.last ?? null);
    const originSquare = this.origin && !this.origin.startsWith("drop:") ? this.origin : null;
    for (let rank = 0; rank < ranks; rank++) {
      for (let file = 0; file < files; file++) {
        const [col, row] = this.cell(file, rank);
        const name = squareName(file, rank);
        const dark = family === "chess" && (file + rank) % 2 === 0;
        const cls = ["sq", dark ? "dark" : "light"];
        if (pendingSquares.includes(name)) cls.push("pending");
        else if (lastSquares.includes(name)) cls.push("last");
        if (name === originSquare) cls.push("selected");
        if (this.clicked.includes(name)) cls.push("via");
        if (this.premove && (this.premove.from === name || this.premove.to === name)) cls.push("premove");
        layer.append(svg("rect", { x: MARGIN + col * SQ, y: MARGIN + row * SQ, width: SQ, height: SQ, class: cls.join(" "), "data-square": name }));
      }
    }
    if (family === "shogi") {
      for (let i = 0; i <= files; i++) layer.append(svg("line", { x1: MARGIN + i * SQ, y1: MARGIN, x2: MARGIN + i * SQ, y2: MARGIN + ranks * SQ, class: "grid" }));
      for (let i = 0; i <= ranks; i++) layer.append(svg("line", { x1: MARGIN, y1: MARGIN + i * SQ, x2: MARGIN + files * SQ, y2: MARGIN + i * SQ, class: "grid" }));
    }
    // Coordinates: shogi files along the top and ranks down the right; chess files below and ranks on the left.
    for (let file = 0; file < files; file++) {
      const [col] = this.cell(file, 0);
      const y = family === "shogi" ? MARGIN - 9 : MARGIN + ranks * SQ + 27;
      layer.append(svg("text", { x: MARGIN + col * SQ + SQ / 2, y, class: "coord", "text-anchor": "middle" }, [labels.file[file]]));
    }
    for (let rank = 0; rank < ranks; rank++) {
      const [, row] = this.cell(0, rank);
      const x = family === "shogi" ? MARGIN + files * SQ + MARGIN / 2 : MARGIN / 2;
      layer.append(svg("text", { x, y: MARGIN + row * SQ + SQ / 2 + 9, class: "coord", "text-anchor": "middle" }, [labels.rank[rank]]));
    }
    for (let rank = 0; rank < ranks; rank++) {
      for (let file = 0; file < files; file++) {
        const piece = pos.board[rank][file];
        if (!piece) continue;
        const [col, row] = this.cell(file, rank);
        const g = this.pieceNode(piece.symbol, piece.side);
        g.setAttribute("transform", `translate(${MARGIN + col * SQ} ${MARGIN + row * SQ})`);
        g.setAttribute("data-square", squareName(file, rank));
        if (this.state?.check && piece.side === pos.turn && pieceInfo(this.variant, piece.symbol)?.royal) {
          layer.append(svg("circle", { cx: MARGIN + col * SQ + SQ / 2, cy: MARGIN + row * SQ + SQ / 2, r: SQ * 0.48, class: "in-check" }));
        }
        layer.append(g);
      }
    }
    if (step.kind === "continue") {
      for (const target of step.targets) {
        const [f, r] = squareXY(target);
        const [col, row] = this.cell(f, r);
        const occupied = pos.board[r][f] !== null && target !== this.origin;
        layer.append(svg("circle", { cx: MARGIN + col * SQ + SQ / 2, cy: MARGIN + row * SQ + SQ / 2, r: occupied ? SQ * 0.44 : SQ * 0.15,
          class: occupied ? "target capture" : "target", "data-target": target }));
      }
    }
    if (this.arrow) layer.append(this.arrowNode(this.arrow));
    this.layer.replaceWith(layer);
    this.layer = layer;
    this.renderHands(pos);
  }

  /** A move's path as an arrow (a drop: a ring on its square). */
  private arrowNode(uci: string): SVGGElement {
    const centre = (name: string): [number, number] => {
      const [f, r] = squareXY(name);
      const [col, row] = this.cell(f, r);
      return [MARGIN + col * SQ + SQ / 2, MARGIN + row * SQ + SQ / 2];
    };
    const squares = lastMoveSquares(uci);
    const g = svg("g", { class: "best-arrow", "data-arrow": uci });
    if (squares.length === 0) return g;  // a pass
    if (squares.length === 1) {
      const [x, y] = centre(squares[0]);
      g.append(svg("circle", { cx: x, cy: y, r: SQ * 0.42 }));
      return g;
    }
    const points = squares.map(centre);
    g.append(svg("polyline", { points: points.map((p) => p.join(",")).join(" ") }));
    const [[x1, y1], [x2, y2]] = points.slice(-2);
    const angle = (Math.atan2(y2 - y1, x2 - x1) * 180) / Math.PI;
    g.append(svg("polygon", { points: "0,0 -30,-18 -30,18", transform: `translate(${x2} ${y2}) rotate(${angle})` }));
    return g;
  }

  private pieceNode(symbol: string, side: 0 | 1): SVGGElement {
    const g = svg("g", { class: `pc side-${side}`, "data-piece": symbol });
    const art = drawPiece(this.variant, pieceInfo(this.variant, symbol), symbol, side, this.labels);
    // Shogi pieces point at the opponent: the side at the top of the screen is turned round.
    if (this.variant.family === "shogi" && side !== this.orientation) art.setAttribute("transform", "rotate(180 50 50)");
    g.append(art);
    return g;
  }

  private renderHands(pos: Position): void {
    const top = (1 - this.orientation) as 0 | 1;
    for (const [slot, side] of [[0, top], [1, this.orientation]] as [number, 0 | 1][]) {
      const box = this.hands[slot];
      box.replaceChildren();
      box.hidden = !this.variant.drops;
      box.dataset.side = side === 0 ? "first" : "second";
      for (const info of this.variant.pieces) {
        const count = pos.hands[side].get(info.symbol);
        if (!count) continue;
        const origin = `drop:${info.symbol}`;
        const droppable = side === pos.turn && movesFrom(this.moves, origin).length > 0;
        const art = svg("svg", { viewBox: "0 0 100 100", class: "hand-piece" }, [this.pieceNode(info.symbol, side)]);
        const button = h("button", { class: `hand-slot${this.origin === origin ? " selected" : ""}`, "data-drop": info.symbol,
          disabled: !droppable, title: info.name, type: "button" }, [art, h("span", { class: "count", text: String(count) })]);
        button.addEventListener("pointerdown", (e) => {
          e.preventDefault();
          if (this.origin === origin) { this.cancel(); this.render(); return; }
          this.select(origin, e);
        });
        box.append(button);
      }
    }
  }

  private select(origin: Origin, e: PointerEvent): void {
    this.cancel();
    this.origin = origin;
    this.drag = { origin, x: e.clientX, y: e.clientY, ghost: null, pointer: e.pointerId };
    const move = (ev: PointerEvent) => this.dragMove(ev);
    const up = (ev: PointerEvent) => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      this.dragEnd(ev);
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
    this.render();
  }

  private pointerDown(e: PointerEvent): void {
    if (e.button !== 0) return;
    this.hideTip();
    const square = this.squareAt(e.clientX, e.clientY);
    if (square === null) { this.cancel(); this.render(); return; }
    e.preventDefault();
    const waiting = this.state && !this.state.interactive ? this.state.premoveSide : null;
    if (waiting !== null && waiting !== undefined) { this.premoveClick(square, waiting); return; }
    if (this.origin !== null && this.tryClick(square)) return;
    if (movesFrom(this.moves, square).length > 0 && this.origin !== square) {
      this.select(square, e);
      return;
    }
    if (this.origin === square) { this.cancel(); this.render(); return; }
    if (this.origin !== null) { this.cancel(); this.render(); }
    if (e.pointerType !== "mouse") this.longPress(square, e);
  }

  /** A click on `square` during a move; false when the square plays no part in it. */
  private tryClick(square: string): boolean {
    if (this.origin === null) return false;
    const result = click(this.moves, this.origin, this.clicked, square);
    if (result.step.kind === "none") return false;
    this.clicked = result.clicked;
    if (result.step.kind === "done") this.finish(result.step.moves);
    else this.render();
    return true;
  }

  private finish(moves: LegalMove[]): void {
    if (moves.length === 1) {
      const uci = moves[0].uci;
      this.cancel();
      this.render();
      this.onMove(uci);
      return;
    }
    this.render();
    this.promotionDialog(moves);
  }

  private promotionDialog(moves: LegalMove[]): void {
    const pos = this.pos!;
    const origin = this.origin!;
    const [f, r] = origin.startsWith("drop:") ? [0, 0] : squareXY(origin);
    const symbol = pos.board[r]?.[f]?.symbol ?? "P";
    const side = pos.turn;
    const buttons = moves.map((m) => {
      let shown = symbol;
      let label = "Do not promote";
      if (m.promo === "+") { shown = pieceInfo(this.variant, symbol)?.promotes_to ?? "+" + symbol; label = "Promote"; }
      else if (m.promo) { shown = m.promo.toUpperCase(); label = pieceInfo(this.variant, shown)?.name ?? shown; }
      const art = svg("svg", { viewBox: "0 0 100 100", class: "promo-piece" }, [drawPiece(this.variant, pieceInfo(this.variant, shown), shown, side, this.labels)]);
      const b = h("button", { type: "button", class: "promo-choice", "data-promo": m.promo || "=", title: label }, [art, h("span", { text: label })]);
      b.addEventListener("click", () => { this.cancel(); this.render(); this.onMove(m.uci); });
      return b;
    });
    const cancel = h("button", { type: "button", class: "promo-cancel", text: "Cancel" });
    cancel.addEventListener("click", () => { this.cancel(); this.render(); });
    this.dialog = h("div", { class: "promo-dialog", role: "dialog", "aria-label": "Promotion" }, [h("div", { class: "promo-box" }, [h("p", { text: "Promotion" }), h("div", { class: "promo-row" }, buttons), cancel])]);
    this.el.append(this.dialog);
  }

  private dragMove(e: PointerEvent): void {
    const d = this.drag;
    if (!d || e.pointerId !== d.pointer) return;
    if (!d.ghost && Math.hypot(e.clientX - d.x, e.clientY - d.y) < 6) return;
    const ctm = this.root.getScreenCTM();
    if (!ctm) return;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
    if (!d.ghost) {
      const symbol = this.originPiece(d.origin);
      if (!symbol) return;
      d.ghost = this.pieceNode(symbol.symbol, symbol.side);
      d.ghost.classList.add("ghost");
      this.root.append(d.ghost);
    }
    d.ghost.setAttribute("transform", `translate(${p.x - SQ / 2} ${p.y - SQ / 2})`);
  }

  private originPiece(origin: Origin): { symbol: string; side: 0 | 1 } | null {
    if (!this.pos) return null;
    if (origin.startsWith("drop:")) return { symbol: origin.slice(5), side: this.pos.turn };
    const [f, r] = squareXY(origin);
    return this.pos.board[r][f];
  }

  private dragEnd(e: PointerEvent): void {
    const d = this.drag;
    this.drag = null;
    if (!d || !d.ghost) return;
    d.ghost.remove();
    const square = this.squareAt(e.clientX, e.clientY);
    if (square === null || square === d.origin) return;
    if (!this.tryClick(square)) { this.cancel(); this.render(); }
  }

  /** The mouse over a piece: its tooltip after a pause, at once with Alt or Shift; never while
   * a move is being made (it would cover the move dots) or when turned off in the settings. */
  private hover(e: PointerEvent): void {
    if (e.pointerType !== "mouse") return;
    const square = this.squareAt(e.clientX, e.clientY);
    const busy = this.drag !== null || this.origin !== null || e.buttons !== 0;
    const piece = square && !busy && this.tooltips ? this.pieceOn(square) : null;
    if (!piece || !square) this.hideTip();
    else if (e.altKey || e.shiftKey) { this.hideTip(); this.showTip(square, e.clientX, e.clientY); }
    else if (square !== this.tipSquare) {
      this.hideTip();
      this.tipSquare = square;
      const [x, y] = [e.clientX, e.clientY];
      this.tipTimer = window.setTimeout(() => this.showTip(square, x, y), TIP_DELAY_MS);
    }
    if (square) this.el.dataset.hover = square;
  }

  private pieceOn(square: string): { symbol: string; side: 0 | 1 } | null {
    const [f, r] = squareXY(square);
    return this.pos?.board[r]?.[f] ?? null;
  }

  private showTip(square: string, x: number, y: number): void {
    const piece = this.pieceOn(square);
    const info = piece ? pieceInfo(this.variant, piece.symbol) : undefined;
    if (!piece || !info) return;
    this.tipSquare = square;
    // A piece moves up the screen when its side is the one at the bottom.
    showPieceTip(this.variant, info, piece.side, x, y, square, piece.side !== this.orientation);
  }

  private hideTip(): void {
    window.clearTimeout(this.tipTimer);
    this.tipSquare = null;
    hidePieceTip();
  }

  private longPress(square: string, e: PointerEvent): void {
    if (!this.tooltips || !this.pieceOn(square)) return;
    const timer = window.setTimeout(() => this.showTip(square, e.clientX, e.clientY), 450);
    const stop = () => { window.clearTimeout(timer); window.removeEventListener("pointerup", stop); };
    window.addEventListener("pointerup", stop);
  }
}

/** Squares of a move to highlight: origin, every square visited. */
export function lastMoveSquares(uci: string | null): string[] {
  if (!uci) return [];
  return uci.match(/[a-o](?:1[0-5]|[1-9])/g) ?? [];
}
