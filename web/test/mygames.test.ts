import { describe, expect, it } from "vitest";
import { listAfter, newTurns, turnNotice, waiting } from "../src/mygames";
import type { MyGameView } from "../src/protocol.gen";

const game = (over: Partial<MyGameView>): MyGameView => ({
  game: "g1", variant: "daishogi", tc: { kind: "correspondence", days: 3 }, speed: "correspondence", rated: false,
  opponent: "bob", side: "first", turn: "first", your_turn: true, plies: 40, finished: false, result: null, ...over,
});

describe("the your-turn list", () => {
  it("counts correspondence games waiting for the player, never real-time ones", () => {
    const games = [game({}), game({ game: "g2", your_turn: false }),
      game({ game: "g3", speed: "blitz", tc: { kind: "fischer", base_s: 180, inc_s: 2 } })];
    expect(waiting(games).map((g) => g.game)).toEqual(["g1"]);
  });

  it("words a notification with the opponent and the move to make", () => {
    expect(turnNotice(game({}), "Dai Shogi")).toEqual({ title: "Your turn against bob", body: "Dai Shogi · move 41" });
  });

  it("keeps what was pushed while my_games was out over the answer, read before it", () => {
    // g1: the answer read the store before the opponent's move the page was pushed; g2: only
    // in the answer; g3: started after the reading; g4: finished meanwhile.
    const answer = [game({ your_turn: false, plies: 41 }), game({ game: "g2" }), game({ game: "g4" })];
    const pushed = new Map([["g1", game({ plies: 42 })], ["g3", game({ game: "g3", plies: 0 })],
      ["g4", game({ game: "g4", finished: true, result: "1-0" })]]);
    const { games, order } = listAfter(answer, pushed);
    expect(order).toEqual(["g3", "g1", "g2"]);
    expect(games.get("g1")?.plies).toBe(42);
    expect(games.has("g4")).toBe(false);
    expect(listAfter(answer, new Map()).order).toEqual(["g1", "g2", "g4"]);
  });

  it("tells the correspondence games that became the player's turn between two readings", () => {
    const before = new Map([["g1", game({ your_turn: false })], ["g2", game({ game: "g2" })]]);
    const after = new Map([["g1", game({})], ["g2", game({ game: "g2" })], ["g3", game({ game: "g3" })],
      ["g4", game({ game: "g4", speed: "blitz", tc: { kind: "fischer", base_s: 180, inc_s: 2 } })]]);
    expect(newTurns(before, after).map((g) => g.game)).toEqual(["g1", "g3"]);
  });

  it("notifies a turn again when the game went on meanwhile (the player moved elsewhere)", () => {
    const before = new Map([["g1", game({ plies: 40 })], ["g2", game({ game: "g2", plies: 12 })]]);
    const after = new Map([["g1", game({ plies: 42 })], ["g2", game({ game: "g2", plies: 12 })]]);
    expect(newTurns(before, after).map((g) => g.game)).toEqual(["g1"]);
  });
});
