// Piece artwork, drawn by this project (docs/web.md, "Artwork"): shogi-family pieces are
// pentagons with their kanji (promoted sides in red) pointing at the opponent; chess-family
// pieces are silhouettes; Spartan Chess's own army (the second player) is drawn as bronze
// helmets and shields, distinct from the Persians' pieces. Every drawing fits a 100×100 box.

import { svg } from "./svg";
import type { PieceInfo, VariantInfo } from "./types";

export type LabelStyle = "kanji" | "western";

/** One piece drawn in a 100×100 box, upright for its owner; the caller rotates the second player's shogi pieces. */
export function drawPiece(variant: VariantInfo, info: PieceInfo | undefined, symbol: string, side: 0 | 1,
  labels: LabelStyle): SVGGElement {
  if (variant.family === "shogi") return shogiPiece(variant, info, symbol, labels);
  if (variant.name === "spartan" && side === 1) return spartanPiece(symbol);
  return chessPiece(symbol, side);
}

const PENTAGON = "M50 4 L84 18 L94 96 L6 96 L16 18 Z";

function shogiPiece(variant: VariantInfo, info: PieceInfo | undefined, symbol: string, labels: LabelStyle): SVGGElement {
  const promoted = symbol.startsWith("+");
  const colour = promoted ? "#c0141c" : "#1b1b1b";
  const g = svg("g", { class: "piece shogi" });
  g.append(svg("path", { d: PENTAGON, fill: "#f3d9a4", stroke: "#7a5a2a", "stroke-width": 3, "stroke-linejoin": "round" }));
  const text = labels === "kanji" && info?.kanji ? info.kanji : (info?.abbrev ?? symbol).replace(/^\+/, "");
  const chars = [...text];
  const big = variant.files > 9;
  if (labels === "kanji" && info?.kanji && chars.length >= 2) {
    // Two (or three: 成 + name) kanji read top to bottom, as on real Dai Shogi pieces.
    const size = chars.length > 2 ? 26 : 36;
    chars.forEach((c, i) => {
      const y = chars.length > 2 ? 36 + i * 26 : 48 + i * 36;
      g.append(svg("text", { x: 50, y, "font-size": size, "text-anchor": "middle", fill: colour, class: "kanji" }, [c]));
    });
  } else {
    const western = !(labels === "kanji" && info?.kanji);
    const size = western ? (text.length > 2 ? 28 : text.length > 1 ? 38 : 52) : (big ? 54 : 58);
    g.append(svg("text", { x: 50, y: western ? 70 : 74, "font-size": size, "text-anchor": "middle", fill: colour,
      class: western ? "western" : "kanji", "font-weight": western ? 700 : 400 }, [text]));
  }
  return g;
}

// Chess silhouettes (stroke-drawn, filled by side).
const CHESS_PATHS: Record<string, string> = {
  P: "M50 22a11 11 0 1 1 0 22a11 11 0 1 1 0-22M40 46h20l6 30H34ZM26 80h48v10H26Z",
  R: "M28 20h9v8h8v-8h10v8h8v-8h9v18l-7 6v30H35V44l-7-6ZM24 78h52v12H24Z",
  N: "M30 88h46l-2-22c0-26-8-46-30-50l-4 8-6-2 0 10-12 14 2 10 8 2 10-6 6 2c-8 10-16 16-18 34Z",
  B: "M50 10a6 6 0 1 1 0 12a6 6 0 1 1 0-12M50 22c16 10 20 26 12 40H38c-8-14-4-30 12-40ZM40 64h20l4 12H36ZM26 80h48v10H26Z",
  Q: "M20 30l12 34 8-32 10 30 10-30 8 32 12-34-6 46H26ZM26 80h48v10H26Z",
  K: "M46 8h8v8h8v8h-8v8h-8v-8h-8v-8h8ZM28 40c10-8 34-8 44 0l-6 36H34ZM26 80h48v10H26Z",
};
const CHESS_MARKS: Record<string, string> = {
  B: "M46 36h8M50 32v8",
  N: "M40 40a3 3 0 1 0 0.1 0",
};

function chessPiece(symbol: string, side: 0 | 1): SVGGElement {
  const fill = side === 0 ? "#fafafa" : "#2a2a2a";
  const line = side === 0 ? "#1e1e1e" : "#e8e8e8";
  const g = svg("g", { class: "piece chess" });
  g.append(svg("path", { d: CHESS_PATHS[symbol] ?? CHESS_PATHS.P, fill, stroke: side === 0 ? "#1e1e1e" : "#000", "stroke-width": 3, "stroke-linejoin": "round" }));
  const mark = CHESS_MARKS[symbol];
  if (mark) g.append(svg("path", { d: mark, fill: "none", stroke: line, "stroke-width": 3, "stroke-linecap": "round" }));
  return g;
}

// Spartans: crimson-crested bronze helmets with the piece's initial, the Hoplite a round shield
// with the lambda of Lakedaimon, the Kings crowned helmets.
const HELMET = "M22 86V52c0-22 12-34 28-34s28 12 28 34v34H60V62h-6v24h-8V62h-6v24Z";
const CREST = "M30 22c6-14 34-14 40 0-8-4-32-4-40 0Z";
const SPARTAN_LETTER: Record<string, string> = { K: "", W: "W", G: "G", L: "L", C: "C" };

function spartanPiece(symbol: string): SVGGElement {
  const g = svg("g", { class: "piece spartan" });
  if (symbol === "H") {
    g.append(svg("circle", { cx: 50, cy: 54, r: 36, fill: "#b0732a", stroke: "#3b1d06", "stroke-width": 4 }));
    g.append(svg("circle", { cx: 50, cy: 54, r: 27, fill: "none", stroke: "#e0b060", "stroke-width": 3 }));
    g.append(svg("path", { d: "M36 72 50 34 64 72", fill: "none", stroke: "#8e0f14", "stroke-width": 8, "stroke-linejoin": "round" }));
    return g;
  }
  g.append(svg("path", { d: CREST, fill: "#a3141b", stroke: "#3b1d06", "stroke-width": 2 }));
  g.append(svg("path", { d: HELMET, fill: "#b0732a", stroke: "#3b1d06", "stroke-width": 3, "stroke-linejoin": "round" }));
  if (symbol === "K") {
    g.append(svg("path", { d: "M34 46l6-12 10 8 10-8 6 12Z", fill: "#f2c94c", stroke: "#3b1d06", "stroke-width": 2 }));
  } else {
    g.append(svg("text", { x: 50, y: 56, "font-size": 26, "font-weight": 700, "text-anchor": "middle", fill: "#fff2d0", class: "western" }, [SPARTAN_LETTER[symbol] ?? symbol]));
  }
  return g;
}

export function pieceInfo(variant: VariantInfo, symbol: string): PieceInfo | undefined {
  return variant.pieces.find((p) => p.symbol === symbol);
}
