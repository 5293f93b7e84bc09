import { describe, expect, it } from "vitest";
import { coordLabels, parseFen, squareName, squareXY } from "../src/fen";

const DAI = "lnuicsgkgsciunl/a1c'1f1tet1f1c'1a/1x'1a'1wxl!ow1a'1x'1/rf'mvbhdqdhbvmf'r/ppppppppppppppp/" +
  "4p'5p'4/15/15/15/4P'5P'4/PPPPPPPPPPPPPPP/RF'MVBHDQDHBVMF'R/1X'1A'1WOL!XW1A'1X'1/" +
  "A1C'1F1TET1F1C'1A/LNUICSGKGSCIUNL w - - 0 1";

describe("parseFen", () => {
  it("reads Mini-Shogi with its hand", () => {
    const p = parseFen("1bsgk/4p/5/rK3/1GSBR[Ppr] w - - 0 2", 5, 5);
    expect(p.board[4][1]).toEqual({ symbol: "B", side: 1 });
    expect(p.board[1][1]).toEqual({ symbol: "K", side: 0 });
    expect(p.board[0][0]).toBeNull();
    expect([...p.hands[0]]).toEqual([["P", 1]]);
    expect([...p.hands[1]]).toEqual([["P", 1], ["R", 1]]);
    expect(p.turn).toBe(0);
  });

  it("reads Dai Shogi's marked symbols and two-digit runs", () => {
    const p = parseFen(DAI, 15, 15);
    expect(p.board[2][7]).toEqual({ symbol: "L!", side: 0 });
    expect(p.board[12][7]).toEqual({ symbol: "L!", side: 1 });
    expect(p.board[12][1]).toEqual({ symbol: "X'", side: 1 });
    expect(p.board[7].every((c) => c === null)).toBe(true);
  });

  it("reads promoted pieces and the side to move", () => {
    const p = parseFen("4k/5/2+p2/5/K4[-] b - - 0 9", 5, 5);
    expect(p.board[2][2]).toEqual({ symbol: "+P", side: 1 });
    expect(p.turn).toBe(1);
  });

  it("refuses a FEN of the wrong size", () => {
    expect(() => parseFen("8/8 w", 8, 8)).toThrow(/ranks/);
  });
});

describe("coordinates", () => {
  it("names squares both ways", () => {
    expect(squareXY("o15")).toEqual([14, 14]);
    expect(squareName(2, 3)).toBe("c4");
  });

  it("labels shogi files from the right and ranks from the top", () => {
    const l = coordLabels("shogi", 5, 5);
    expect(l.file).toEqual(["5", "4", "3", "2", "1"]);
    expect(l.rank[4]).toBe("a");
    expect(l.rank[0]).toBe("e");
    expect(coordLabels("chess", 8, 8).file[0]).toBe("a");
  });
});
