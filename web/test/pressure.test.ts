import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { clockView } from "../src/clock";
import { TimePressure } from "../src/pressure";
import type { SideClockView, TimeControlView } from "../src/protocol.gen";

// The sounds asked for (with sound on), in order.
const { beeps } = vi.hoisted(() => ({ beeps: [] as string[] }));
vi.mock("../src/sound", () => ({ beep: (kind: string, enabled: boolean) => { if (enabled) beeps.push(kind); } }));

const FISCHER: TimeControlView = { kind: "fischer", base_s: 180, inc_s: 2 };
const BYO: TimeControlView = { kind: "byoyomi", main_s: 15, period_s: 10, periods: 3 };

/** The player's turn as the game view draws it: a redraw every 100 ms for `ms`, from `clock`
 * (the clock at the turn's start); then the opponent's turn, where the player has no clock. */
function turn(p: TimePressure, tc: TimeControlView, clock: SideClockView, ms: number, sound = true): void {
  for (let t = 0; t <= ms; t += 100) p.update(true, clockView(clock, tc, true, t), true, sound);
  p.update(false, null, false, sound);
}

describe("the low-time sound", () => {
  beforeEach(() => {
    beeps.length = 0;
    vi.stubGlobal("document", { title: "" });
  });
  afterEach(() => { vi.unstubAllGlobals(); });

  it("sounds once when a Fischer clock turns low, not on every move while it stays low", () => {
    const p = new TimePressure();
    turn(p, FISCHER, { ms: 15000 }, 4000);   // 15 s → 11 s: not low
    expect(beeps).toEqual([]);
    turn(p, FISCHER, { ms: 13000 }, 5000);   // 13 s → 8 s: low from 10 s
    expect(beeps).toEqual(["low"]);
    turn(p, FISCHER, { ms: 9500 }, 3000);    // still low on the next move
    turn(p, FISCHER, { ms: 8000 }, 3000);
    expect(beeps).toEqual(["low"]);
    turn(p, FISCHER, { ms: 12000 }, 4000);   // the increments lifted it: turning low again warns again
    expect(beeps).toEqual(["low", "low"]);
  });

  it("sounds once when byoyomi main time turns low, then once for each period that runs low", () => {
    const p = new TimePressure();
    turn(p, BYO, { ms: 12000, periods: 3, period_ms: 10000 }, 10000);   // main time 12 s → 2 s
    expect(beeps).toEqual(["low"]);
    // The rest of main time, a whole period, 6 s of the next: each period warns at 5 s left.
    turn(p, BYO, { ms: 2000, periods: 3, period_ms: 10000 }, 2000 + 10000 + 6000);
    expect(beeps).toEqual(["low", "low", "low"]);  // main time still low: not again; two periods
    turn(p, BYO, { ms: 0, periods: 2, period_ms: 10000 }, 4000);   // moved with 6 s left
    expect(beeps).toHaveLength(3);
    turn(p, BYO, { ms: 0, periods: 2, period_ms: 10000 }, 7000);   // the next move's period runs low
    expect(beeps).toHaveLength(4);
  });

  it("warns each byoyomi period when periods are short enough to start low", () => {
    const p = new TimePressure();
    const short: TimeControlView = { kind: "byoyomi", main_s: 0, period_s: 3, periods: 3 };
    turn(p, short, { ms: 0, periods: 3, period_ms: 3000 }, 2000);
    turn(p, short, { ms: 0, periods: 3, period_ms: 3000 }, 4000);  // the second move uses a period up
    expect(beeps).toEqual(["low", "low", "low"]);
  });

  it("stays silent with sound off and before the clock runs", () => {
    turn(new TimePressure(), FISCHER, { ms: 12000 }, 4000, false);
    // The player's turn before the first move, the clock not running yet: low, but no warning.
    new TimePressure().update(true, clockView({ ms: 5000 }, FISCHER, false, 0), false, true);
    expect(beeps).toEqual([]);
  });
});
