import { describe, expect, it } from "vitest";
import type { ChallengeView } from "../src/protocol.gen";
import type { VariantInfo } from "../src/types";
import { abortText, challengeColour, readerColour, sideTitle, sideWord } from "../src/words";

const shogi = { name: "minishogi", family: "shogi" } as VariantInfo;
const spartan = { name: "spartan", family: "chess" } as VariantInfo;

describe("words", () => {
  it("names sides in the family's words", () => {
    expect(sideWord(shogi, "second")).toBe("gote");
    expect(sideWord(spartan, "first")).toBe("the Persians (White)");
    expect(sideWord({ name: "wildcastle", family: "chess" } as VariantInfo, "second")).toBe("Black");
  });
  it("tells each party of a challenge its side", () => {
    const c = { from: { id: "a" }, to: { id: "b" }, colour: "first" } as ChallengeView;
    expect(challengeColour(c, "a", shogi)).toBe("you play sente");
    expect(challengeColour(c, "b", shogi)).toBe("you play gote");
    expect(challengeColour({ ...c, colour: "random" }, "b", shogi)).toBe("colours drawn at random");
  });
  it("tells the reader of a seek the side they get", () => {
    expect(readerColour("first", false, shogi)).toBe("you play gote");
    expect(readerColour("first", true, shogi)).toBe("you play sente");
    expect(readerColour("second", false, spartan)).toBe("you play the Persians (White)");
    expect(readerColour("random", false, spartan)).toBe("colours drawn at random");
  });
  it("starts a line with a side's word", () => {
    expect(sideTitle(shogi, "first")).toBe("Sente");
    expect(sideTitle(spartan, "second")).toBe("The Spartans (Black)");
  });
  it("says why a game was aborted", () => {
    expect(abortText("second_aborted", ["al", "bo"], 1)).toBe("Game aborted by bo");
    expect(abortText("no_first_move", ["al", "bo"], 0)).toBe("Game aborted: al made no first move in time");
    expect(abortText("no_first_move", ["al", "bo"], 1)).toBe("Game aborted: bo made no first move in time");
    expect(abortText(null, ["al", "bo"], 0)).toBe("Game aborted before both players had moved");
  });
});
