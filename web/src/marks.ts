// The tournaments' marks, drawn here (no icon font): the arena's flame (on fire) and the
// berserk bolt, in the standings, the pairings and a game's clocks; a tournament game's line
// on its page.

import type { SideName, TournamentTagView } from "./protocol.gen";
import { h, svg } from "./svg";

/** "A tournament game (round 3): the tournament's standings" (a link to its page). */
export function tournamentLine(tag: Pick<TournamentTagView, "id" | "round">, navigate: (path: string) => void): HTMLElement {
  const link = h("a", { href: `/tournament/${tag.id}`, class: "tournament-link", text: "the tournament's standings" });
  link.addEventListener("click", (e) => { e.preventDefault(); navigate(`/tournament/${tag.id}`); });
  return h("p", { class: "tournament-game" }, [`A tournament game (round ${tag.round}): `, link]);
}

/** Who berserked, from a snapshot's or a stored game's list of sides. */
export function berserkedSides(sides: SideName[]): Record<SideName, boolean> {
  return { first: sides.includes("first"), second: sides.includes("second") };
}

/** The arena's "on fire" mark (two wins in a row: points count double). */
export function fireMark(): SVGSVGElement {
  const icon = svg("svg", { viewBox: "0 0 16 16", class: "mark fire", role: "img", "aria-label": "on fire" }, [
    svg("title", {}, ["On fire: two wins in a row, points count double"]),
    svg("path", { d: "M8 1c1 3 5 4.5 5 9a5 5 0 0 1-10 0c0-2.5 1.5-3.5 2-5 .8 1.2 1 2.3 1 3.2C7.6 7 8.6 4.6 8 1z", fill: "#e8590c" }),
    svg("path", { d: "M8 8.5c.5 1.5 2.5 2.2 2.5 4a2.5 2.5 0 0 1-5 0c0-1.2.8-1.8 1-2.6.4.6.6 1 .6 1.6.6-.8 1-1.8.9-3z", fill: "#ffd43b" }),
  ]);
  return icon;
}

/** The berserk mark (a bolt), with the count of games berserked when more than one. */
export function berserkMark(count = 1): HTMLElement {
  const bolt = svg("svg", { viewBox: "0 0 16 16", class: "mark berserk", role: "img", "aria-label": "berserk" }, [
    svg("title", {}, [count > 1 ? `Berserked ${count} games` : "Berserked"]),
    svg("path", { d: "M9.5 1 3 9h4l-1.5 6L13 7H9z", fill: "#c92a2a" }),
  ]);
  return h("span", { class: "berserks", "data-berserks": count }, [bolt, count > 1 ? h("small", { text: String(count) }) : null]);
}
