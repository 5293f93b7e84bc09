import { describe, expect, it } from "vitest";
import { advance, click, movesFrom, parseLegal, parseMove, PASS } from "../src/moves";

describe("parseMove", () => {
  it("reads every form the server sends", () => {
    expect(parseMove("e2e4")).toMatchObject({ from: "e2", path: ["e4"], promo: "" });
    expect(parseMove("c4c5+")).toMatchObject({ from: "c4", path: ["c5"], promo: "+" });
    expect(parseMove("e7e8q")).toMatchObject({ path: ["e8"], promo: "q" });
    expect(parseMove("P@c3")).toMatchObject({ from: null, drop: "P", path: ["c3"] });
    expect(parseMove("h3i4,i4i5")).toMatchObject({ from: "h3", path: ["i4", "i5"] });
    expect(parseMove("h3i4,i4h3")).toMatchObject({ from: "h3", path: ["i4", "h3"] });
    expect(parseMove("n14o15")).toMatchObject({ from: "n14", path: ["o15"] });
    expect(parseMove(PASS)).toBeNull();
  });
});

describe("clicking through the legal list", () => {
  const legal = parseLegal(["c4c5", "c4c5+", "a1a2", "P@b3", "h3i4", "h3i4,i4i5", "h3i4,i4h3", "h3g4", "e7e8q", "e7e8r"]);

  it("lists the first squares from an origin", () => {
    const step = advance(legal, "h3", []);
    expect(step.kind).toBe("continue");
    if (step.kind === "continue") expect([...step.targets].sort()).toEqual(["g4", "i4"]);
    expect(movesFrom(legal, "drop:P").map((m) => m.uci)).toEqual(["P@b3"]);
  });

  it("offers a promotion choice when both forms are legal", () => {
    const r = click(legal, "c4", [], "c5");
    expect(r.step.kind).toBe("done");
    if (r.step.kind === "done") expect(r.step.moves.map((m) => m.uci)).toEqual(["c4c5", "c4c5+"]);
  });

  it("takes a Lion double move as two clicks, or stops on the first square when clicked again", () => {
    const first = click(legal, "h3", [], "i4");
    expect(first.step).toMatchObject({ kind: "continue", stop: true });
    const second = click(legal, "h3", first.clicked, "i5");
    expect(second.step.kind === "done" && second.step.moves[0].uci).toBe("h3i4,i4i5");
    const igui = click(legal, "h3", first.clicked, "h3");
    expect(igui.step.kind === "done" && igui.step.moves[0].uci).toBe("h3i4,i4h3");
    const stop = click(legal, "h3", first.clicked, "i4");
    expect(stop.step.kind === "done" && stop.step.moves[0].uci).toBe("h3i4");
  });

  it("ignores a square the list does not allow", () => {
    expect(click(legal, "a1", [], "a3").step.kind).toBe("none");
    expect(click(legal, "z9", [], "a3").step.kind).toBe("none");
  });
});
