import { describe, expect, it } from "vitest";
import { lineText, scoreText, winChances } from "../src/analysis";

describe("analysis display", () => {
  it("reads scores as players do, from the first player's view", () => {
    expect(scoreText({ cp: 35 })).toBe("+0.35");
    expect(scoreText({ cp: -120 })).toBe("-1.20");
    expect(scoreText({ cp: 0 })).toBe("0.00");
    expect(scoreText({ mate: 3 })).toBe("#3");
    expect(scoreText({ mate: -2 })).toBe("#-2");
  });

  it("graphs lichess's winning chances, mates at the edges", () => {
    expect(winChances({ cp: 0 })).toBe(0);
    expect(winChances({ cp: 100 })).toBeCloseTo(0.182, 3);
    expect(winChances({ cp: -5000 })).toBeCloseTo(winChances({ cp: -1000 }), 9);
    expect(winChances({ mate: 4 })).toBe(1);
    expect(winChances({ mate: -1 })).toBe(-1);
  });
  it("numbers an engine line as the move list numbers moves", () => {
    expect(lineText(["P-7f", "P-3d"], 12, "shogi")).toBe("13. P-7f 14. P-3d");
    expect(lineText(["Nf3", "Nc6", "d4"], 12, "chess")).toBe("7. Nf3 Nc6 8. d4");
    expect(lineText(["Nc6", "d4"], 13, "chess")).toBe("7... Nc6 8. d4");
    expect(lineText(["e5"], 0, "chess", true)).toBe("1... e5");
    expect(lineText([], 4, "shogi")).toBe("");
  });
});
