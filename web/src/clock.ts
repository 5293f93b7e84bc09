// Clock display: Fischer main time, or byoyomi main time then the periods (the running one
// counting down). The server's clocks are live at the message's arrival; the running side's
// time is counted down locally from then.

import type { GameSummaryView, SideClockView, TimeControlView } from "./protocol.gen";

export function formatMs(ms: number): string {
  const clamped = Math.max(0, ms);
  const total = Math.floor(clamped / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const base = h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(s).padStart(2, "0")}` : `${m}:${String(s).padStart(2, "0")}`;
  return clamped < 10000 ? `${base}.${Math.floor((clamped % 1000) / 100)}` : base;
}

export interface ClockView { main: string; byoyomi: string; low: boolean; inByoyomi: boolean }

/** What a side's clock shows `elapsed` ms after `clock` was reported (running or not). */
export function clockView(clock: SideClockView, tc: TimeControlView, running: boolean, elapsed: number): ClockView {
  let ms = clock.ms;
  let periods = clock.periods ?? 0;
  let periodMs = clock.period_ms ?? 0;
  if (running) {
    let spend = elapsed;
    const fromMain = Math.min(ms, spend);
    ms -= fromMain;
    spend -= fromMain;
    if (tc.kind === "byoyomi" && spend > 0) {
      while (spend > 0 && periods > 0) {
        const used = Math.min(periodMs, spend);
        periodMs -= used;
        spend -= used;
        if (periodMs <= 0) {
          periods -= 1;
          periodMs = periods > 0 ? tc.period_s * 1000 : 0;
        }
      }
    }
  }
  if (tc.kind !== "byoyomi") return { main: formatMs(ms), byoyomi: "", low: ms < 10000, inByoyomi: false };
  const inByoyomi = ms <= 0;
  const byoyomi = periods > 0 ? `${periods}×${tc.period_s}s` : "";
  return {
    main: inByoyomi ? formatMs(periodMs) : formatMs(ms),
    byoyomi: inByoyomi ? `period ${byoyomi}` : `+ ${byoyomi}`,
    // Main time turns red under 10 s whatever periods follow; a period under 5 s.
    low: inByoyomi ? periodMs < 5000 : ms < 10000,
    inByoyomi,
  };
}

/** A time control as a player reads it: "3+2" (minutes + seconds), "10m + 3×30s", "20s + 3×10s",
 * "3 days per move", "unlimited". */
export function tcText(tc: TimeControlView): string {
  if (tc.kind === "fischer") return `${duration(tc.base_s)} + ${tc.inc_s}s`;
  if (tc.kind === "correspondence") return `${tc.days} ${tc.days === 1 ? "day" : "days"} per move`;
  if (tc.kind === "unlimited") return "unlimited";
  return `${duration(tc.main_s)} + ${tc.periods}×${tc.period_s}s`;
}

function duration(s: number): string {
  if (s === 0) return "0";
  if (s % 60 === 0) return `${s / 60} min`;
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** The time control of a stored game (milliseconds in the review API) in protocol form. */
export function tcOfStored(g: GameSummaryView): TimeControlView {
  const t = g.time_control;
  return t.kind === "byoyomi"
    ? { kind: "byoyomi", main_s: t.base_ms / 1000, period_s: t.byoyomi_ms / 1000, periods: t.periods }
    : { kind: "fischer", base_s: t.base_ms / 1000, inc_s: t.increment_ms / 1000 };
}

/** A main time as the replay shows it after a move: "4:07" (whole seconds). */
export function mainTimeText(ms: number | null): string {
  if (ms === null) return "";
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}
