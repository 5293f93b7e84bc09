// Player preferences kept in localStorage: piece labels, sound, move confirmation, tooltips.

import type { LabelStyle } from "./pieces";

export interface Settings {
  labels: LabelStyle;
  sound: boolean;
  /** Ask "Confirm move" before a move is sent (for phones: a stray tap plays nothing). */
  confirmMoves: boolean;
  /** The piece tooltip (name and move diagram). */
  tooltips: boolean;
}

const KEY = "hub-settings";

export const DEFAULTS: Settings = { labels: "kanji", sound: true, confirmMoves: false, tooltips: true };

export function loadSettings(): Settings {
  try {
    const raw = JSON.parse(localStorage.getItem(KEY) ?? "{}") as Partial<Settings>;
    return {
      labels: raw.labels === "western" ? "western" : "kanji",
      sound: raw.sound !== false,
      confirmMoves: raw.confirmMoves === true,
      tooltips: raw.tooltips !== false,
    };
  } catch {
    return { ...DEFAULTS };
  }
}

export function saveSettings(s: Settings): void {
  localStorage.setItem(KEY, JSON.stringify(s));
}
