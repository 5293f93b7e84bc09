import { describe, expect, it } from "vitest";
import type { PlayerView } from "../src/protocol.gen";
import { CHAT_KEPT, linesAfter, maySay } from "../src/tournamentchat";

const line = (n: number) => ({ user: `p${n}`, text: `line ${n}`, at: n });

describe("the tournament chat's lines", () => {
  it("replaces the lines shown with the history that follows a watch", () => {
    expect(linesAfter([line(1), line(2)], [line(2), line(3)], true)).toEqual([line(2), line(3)]);
    expect(linesAfter([line(1)], [], true)).toEqual([]);
  });
  it("appends a new line after the history", () => {
    expect(linesAfter([line(1), line(2)], [line(3)], false)).toEqual([line(1), line(2), line(3)]);
  });
  it("keeps the last 100, the oldest dropped first", () => {
    const shown = Array.from({ length: CHAT_KEPT }, (_, i) => line(i));
    const after = linesAfter(shown, [line(100), line(101)], false);
    expect(CHAT_KEPT).toBe(100);
    expect(after).toHaveLength(100);
    expect(after[0]).toEqual(line(2));
    expect(after[99]).toEqual(line(101));
    expect(linesAfter([], Array.from({ length: 120 }, (_, i) => line(i)), true, 50)[0]).toEqual(line(70));
  });
  it("does not change the lines it was given", () => {
    const shown = [line(1)];
    linesAfter(shown, [line(2)], false);
    expect(shown).toEqual([line(1)]);
  });
});

describe("who may say something", () => {
  const player: PlayerView = { id: "u1", name: "ann", guest: false };
  it("a logged-in registered player only", () => {
    expect(maySay(player)).toBe(true);
    expect(maySay({ ...player, guest: true })).toBe(false);
    expect(maySay(null)).toBe(false);
  });
});
