import { describe, expect, it } from "vitest";
import { diagramMarks } from "../src/diagram";
import type { Atom, PieceInfo } from "../src/types";

const atom = (dx: number, dy: number, extra: Partial<Atom> = {}): Atom =>
  ({ dx, dy, min: 1, max: 1, jump: false, move: true, capture: true, initial: false, ...extra });

const piece = (atoms: Atom[], lion: [number, number][] | null = null): PieceInfo =>
  ({ symbol: "X", name: "X", abbrev: "X", kanji: null, betza: "", royal: false, promoted: false, promotes_to: null, atoms, lion });

describe("move diagrams", () => {
  it("marks a chess pawn's move, captures and double step apart", () => {
    const marks = diagramMarks(piece([
      atom(0, 1, { capture: false }), atom(-1, 1, { move: false }), atom(1, 1, { move: false }),
      atom(0, 1, { min: 2, max: 2, capture: false, initial: true }),
    ]));
    expect(marks.get("0,1")).toBe("move");
    expect(marks.get("1,1")).toBe("capture");
    expect(marks.get("0,2")).toBe("initial");
    expect(marks.size).toBe(4);
  });

  it("draws a rider's line to the edge of the diagram", () => {
    const marks = diagramMarks(piece([atom(0, 1, { max: 0 })]));
    expect([...marks.keys()].sort()).toEqual(["0,1", "0,2", "0,3", "0,4"]);
    expect(marks.get("0,1")).toBe("both");
    expect(marks.get("0,4")).toBe("ride");
  });

  it("shows a full Lion's 5×5 area and a Horned Falcon's forward line", () => {
    const all: [number, number][] = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];
    expect([...diagramMarks(piece([], all)).values()].filter((m) => m === "lion")).toHaveLength(24);
    const falcon = diagramMarks(piece([atom(1, 1, { max: 0 })], [[0, 1]]));
    expect(falcon.get("0,1")).toBe("lion");
    expect(falcon.get("0,2")).toBe("lion");
    expect(falcon.get("0,3")).toBeUndefined();
  });
});
