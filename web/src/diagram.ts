// A piece's move diagram from the server's catalogue (Betza atoms and Lion directions): a 9×9
// grid around the piece, forward = up, or turned round (forward = down) for a piece that moves
// down the screen, as the opponent's pieces do.

import { svg } from "./svg";
import type { PieceInfo } from "./types";

export type Mark = "both" | "move" | "capture" | "ride" | "lion" | "initial";

const SIZE = 9;
const C = 4;

/** Offset "dx,dy" → how the piece reaches it (riders marked along their lines). */
export function diagramMarks(piece: PieceInfo): Map<string, Mark> {
  const marks = new Map<string, Mark>();
  const put = (dx: number, dy: number, mark: Mark) => {
    if (Math.abs(dx) > C || Math.abs(dy) > C || (dx === 0 && dy === 0)) return;
    const key = `${dx},${dy}`;
    const old = marks.get(key);
    if (old === undefined || old === "ride" || old === "initial" || (old === "move" && mark === "capture") || (old === "capture" && mark === "move")) {
      marks.set(key, old !== undefined && old !== mark && (old === "move" || old === "capture") && (mark === "move" || mark === "capture") ? "both" : mark);
    }
  };
  for (const a of piece.atoms) {
    const kind: Mark = a.initial ? "initial" : a.move && a.capture ? "both" : a.move ? "move" : "capture";
    const last = a.max === 0 ? SIZE : a.max;
    for (let k = a.min; k <= last; k++) put(a.dx * k, a.dy * k, a.max === 0 && k > 1 ? "ride" : kind);
  }
  if (piece.lion) {
    const full = piece.lion.length === 8;
    for (let x = -2; x <= 2; x++) for (let y = -2; y <= 2; y++) {
      const inLine = piece.lion.some(([dx, dy]) => (x === dx && y === dy) || (x === 2 * dx && y === 2 * dy));
      if ((full || inLine) && (x || y)) marks.set(`${x},${y}`, "lion");
    }
  }
  return marks;
}

export function drawDiagram(piece: PieceInfo, cell = 16, turned = false): SVGSVGElement {
  const s = SIZE * cell;
  const root = svg("svg", { viewBox: `0 0 ${s} ${s}`, width: s, height: s, class: "diagram", "data-turned": String(turned) });
  const marks = diagramMarks(piece);
  for (let y = 0; y < SIZE; y++) for (let x = 0; x < SIZE; x++) {
    const dx = turned ? C - x : x - C, dy = turned ? y - C : C - y;
    const mark = marks.get(`${dx},${dy}`);
    root.append(svg("rect", { x: x * cell, y: y * cell, width: cell, height: cell, class: `d-cell ${mark ? "d-" + mark : ""}` }));
  }
  root.append(svg("circle", { cx: C * cell + cell / 2, cy: C * cell + cell / 2, r: cell / 3, class: "d-piece" }));
  return root;
}

export const MARK_LEGEND: [Mark, string][] = [
  ["both", "moves or captures"], ["move", "moves only"], ["capture", "captures only"],
  ["ride", "slides any distance"], ["lion", "Lion power (two steps, igui)"], ["initial", "first move only"],
];
