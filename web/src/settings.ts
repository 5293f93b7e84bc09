// Player preferences kept in localStorage: piece labels and sound.

import type { LabelStyle } from "./pieces";

export interface Settings { labels: LabelStyle; sound: boolean }

const KEY = "hub-settings";

export function loadSettings(): Settings {
  try {
    const raw = JSON.parse(localStorage.getItem(KEY) ?? "{}") as Partial<Settings>;
    return { labels: raw.labels === "western" ? "western" : "kanji", sound: raw.sound !== false };
  } catch {
    return { labels: "kanji", sound: true };
  }
}

export function saveSettings(s: Settings): void {
  localStorage.setItem(KEY, JSON.stringify(s));
}
