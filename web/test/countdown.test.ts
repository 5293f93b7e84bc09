import { describe, expect, it } from "vitest";
import { FirstMoveCountdown, firstMoveText, WARN_S } from "../src/countdown";

describe("the first-move countdown", () => {
  it("counts the server's figure down, rounded up", () => {
    const c = new FirstMoveCountdown(() => {});
    c.set(30000, 1000);
    expect(c.secondsLeft(1000)).toBe(30);
    expect(c.secondsLeft(1001)).toBe(30);
    expect(c.secondsLeft(2000)).toBe(29);
    expect(c.secondsLeft(99999)).toBe(0);
    expect(c.note(true, 2000)?.text).toBe("29 seconds to make your first move");
    expect(c.note(false, 30000)?.text).toBe("1 second to make the first move");
  });
  it("shows nothing without a deadline (both moved, or an exempt side)", () => {
    let warned = 0;
    const c = new FirstMoveCountdown(() => warned++);
    c.set(null, 0);
    expect(c.secondsLeft(0)).toBeNull();
    expect(c.note(true, 0)).toBeNull();
    expect(warned).toBe(0);
  });
  it("warns the player to move once, near the end, and only them", () => {
    let warned = 0;
    const c = new FirstMoveCountdown(() => warned++);
    c.set(20000, 0);
    expect(c.note(true, 5000)?.urgent).toBe(false);
    c.note(false, 20000 - WARN_S * 1000);
    expect(warned).toBe(0);
    expect(c.note(true, 20000 - WARN_S * 1000)?.urgent).toBe(true);
    c.note(true, 19000);
    expect(warned).toBe(1);
    c.set(30000, 20000);  // a new window (after the opponent's first move): a new warning
    c.note(true, 50000 - WARN_S * 1000);
    expect(warned).toBe(2);
  });
  it("reads as lichess's", () => {
    expect(firstMoveText(12, true)).toBe("12 seconds to make your first move");
  });
});
