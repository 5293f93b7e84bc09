import { describe, expect, it } from "vitest";
import { turnNotice, waiting } from "../src/mygames";
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
});
