import { describe, expect, it } from "vitest";
import { clockView, formatDaysMs, formatMs, tcOfStored, tcText } from "../src/clock";
import type { GameSummaryView } from "../src/protocol.gen";

const BYO = { kind: "byoyomi" as const, main_s: 60, period_s: 10, periods: 3 };
const FISCHER = { kind: "fischer" as const, base_s: 180, inc_s: 2 };

describe("clock display", () => {
  it("formats times, with tenths under ten seconds", () => {
    expect(formatMs(185000)).toBe("3:05");
    expect(formatMs(3723000)).toBe("1:02:03");
    expect(formatMs(9450)).toBe("0:09.4");
    expect(formatMs(-5)).toBe("0:00.0");
  });

  it("shows a correspondence clock in days and hours while a day is left", () => {
    expect(formatDaysMs(3 * 86_400_000)).toBe("3 d 0 h");
    expect(formatDaysMs(3 * 86_400_000 - 1000)).toBe("2 d 23 h");
    expect(formatDaysMs(86_399_000)).toBe("23:59:59");
    const corr = clockView({ ms: 86_400_000 }, { kind: "correspondence", days: 1 }, true, 60_000);
    expect(corr.main).toBe("23:59:00");
  });

  it("turns byoyomi main time red under ten seconds, periods or not", () => {
    const main = clockView({ ms: 9000, periods: 3, period_ms: 10000 }, BYO, false, 0);
    expect([main.low, main.inByoyomi, main.byoyomi]).toEqual([true, false, "+ 3×10s"]);
    expect(clockView({ ms: 11000, periods: 3, period_ms: 10000 }, BYO, false, 0).low).toBe(false);
  });

  it("reads time controls as players write them", () => {
    expect(tcText(FISCHER)).toBe("3 min + 2s");
    expect(tcText({ kind: "byoyomi", main_s: 20, period_s: 10, periods: 3 })).toBe("20s + 3×10s");
    expect(tcText({ kind: "byoyomi", main_s: 600, period_s: 30, periods: 1 })).toBe("10 min + 1×30s");
  });

  it("counts a running Fischer clock down and warns when low", () => {
    const v = clockView({ ms: 12000 }, FISCHER, true, 3000);
    expect(v).toMatchObject({ main: "0:09.0", low: true, byoyomi: "" });
    expect(clockView({ ms: 12000 }, FISCHER, false, 3000).main).toBe("0:12");
  });

  it("runs from main time into byoyomi periods", () => {
    const clock = { ms: 2000, periods: 3, period_ms: 10000 };
    expect(clockView(clock, BYO, false, 0)).toMatchObject({ main: "0:02.0", byoyomi: "+ 3×10s", inByoyomi: false });
    const into = clockView(clock, BYO, true, 5000);           // 2 s main, 3 s of the first period
    expect(into).toMatchObject({ main: "0:07.0", byoyomi: "period 3×10s", inByoyomi: true });
    const spent = clockView(clock, BYO, true, 2000 + 10000 + 6000); // one whole period gone
    expect(spent).toMatchObject({ main: "0:04.0", byoyomi: "period 2×10s", low: true });
  });
});

describe("stored time controls", () => {
  it("reads the review API's milliseconds", () => {
    const g = { time_control: { kind: "byoyomi", base_ms: 300000, increment_ms: 0, byoyomi_ms: 20000, periods: 3, text: "300+20x3" } } as GameSummaryView;
    expect(tcText(tcOfStored(g))).toBe("5 min + 3×20s");
    const f = { time_control: { kind: "fischer", base_ms: 180000, increment_ms: 2000, byoyomi_ms: 0, periods: 0, text: "180+2" } } as GameSummaryView;
    expect(tcOfStored(f)).toEqual({ kind: "fischer", base_s: 180, inc_s: 2 });
  });
});
