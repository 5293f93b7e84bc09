// The piece tooltip: name, kanji, Betza and move diagram, shown by the board (board.ts) after a
// pause over a piece or at once with Alt or Shift (mouse), or on a long press (touch); its
// diagram points the way the piece moves on screen.

import { drawDiagram, MARK_LEGEND } from "./diagram";
import { h } from "./svg";
import type { PieceInfo, VariantInfo } from "./types";
import { sideWord } from "./words";

let tip: HTMLElement | null = null;
let shownFor = "";

export function showPieceTip(variant: VariantInfo, info: PieceInfo, side: 0 | 1, x: number, y: number, square: string, turned: boolean): void {
  const key = `${variant.name}:${info.symbol}:${side}:${square}:${turned}`;
  if (!tip) {
    tip = h("div", { class: "piece-tip", role: "tooltip" });
    document.body.append(tip);
  }
  if (shownFor !== key) {
    shownFor = key;
    const promotes = info.promotes_to ? variant.pieces.find((p) => p.symbol === info.promotes_to) : undefined;
    const owner = sideWord(variant, side === 0 ? "first" : "second");
    const parts: (Node | null)[] = [
      h("div", { class: "tip-title" }, [
        h("strong", { text: info.name }),
        info.kanji ? h("span", { class: "tip-kanji", text: ` ${info.kanji}` }) : null,
        h("span", { class: "tip-meta", text: ` (${info.abbrev}, ${owner})` }),
      ]),
      drawDiagram(info, 16, turned),
      h("div", { class: "tip-betza", text: `Betza: ${info.betza}${info.lion ? " + Lion power" : ""}` }),
      promotes ? h("div", { text: `Promotes to ${promotes.name}` }) : null,
      h("ul", { class: "tip-legend" }, MARK_LEGEND.filter(([m]) => hasMark(info, m)).map(([m, text]) => h("li", {}, [h("i", { class: `d-${m}` }), text]))),
    ];
    tip.replaceChildren(...parts.filter((p): p is Node => p !== null));
  }
  tip.hidden = false;
  const width = 220;
  tip.style.left = `${Math.min(x + 16, window.innerWidth - width - 8)}px`;
  tip.style.top = `${Math.min(y + 16, window.innerHeight - 260)}px`;
}

function hasMark(info: PieceInfo, mark: string): boolean {
  if (mark === "lion") return info.lion !== null;
  if (mark === "ride") return info.atoms.some((a) => a.max === 0);
  if (mark === "initial") return info.atoms.some((a) => a.initial);
  if (mark === "move") return info.atoms.some((a) => a.move && !a.capture && !a.initial);
  if (mark === "capture") return info.atoms.some((a) => a.capture && !a.move);
  return info.atoms.some((a) => a.move && a.capture);
}

export function hidePieceTip(): void {
  if (tip) tip.hidden = true;
  shownFor = "";
}
