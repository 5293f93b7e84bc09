import { describe, expect, it } from "vitest";
import { moveRows } from "../src/movelist";

describe("moveRows", () => {
  it("numbers chess moves by pairs", () => {
    const rows = moveRows(["Na3", "a6", "Nb3", "a5", "e4"], "chess");
    expect(rows.map((r) => [r.number, r.cells.map((c) => c?.text ?? null)])).toEqual([[1, ["Na3", "a6"]], [2, ["Nb3", "a5"]], [3, ["e4"]]]);  // no "…" after the last move
    expect(rows[1].cells[1]?.ply).toBe(4);
  });
  it("starts with an empty first half when the second player moves first", () => {
    const rows = moveRows(["e5", "Nf3"], "chess", true);
    expect(rows.map((r) => r.cells.map((c) => c?.ply ?? null))).toEqual([[null, 1], [2]]);
  });
  it("numbers every shogi move", () => {
    expect(moveRows(["P-7f", "P-3d"], "shogi").map((r) => [r.number, r.cells[0]?.text])).toEqual([[1, "P-7f"], [2, "P-3d"]]);
  });
});
