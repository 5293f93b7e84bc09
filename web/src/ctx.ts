// What every view shares: the connection, the logged-in player, the catalogue and settings.

import type { Connection } from "./net";
import type { Settings } from "./settings";
import type { ChallengeView, PlayerView } from "./protocol.gen";
import type { VariantInfo } from "./types";
import { abortText } from "./words";

export interface Ctx {
  conn: Connection;
  me: PlayerView | null;
  variants: Map<string, VariantInfo>;
  settings: Settings;
  /** Go to a page of the client (pushes history). */
  navigate(path: string): void;
  /** The running game of this player, from hello (or null). */
  runningGame: string | null;
  /** This player's open challenges, sent and received (hello, then the challenge events). */
  challenges: Map<number, ChallengeView>;
}

export const RESULT_WORDS: Record<string, string> = {
  checkmate: "checkmate", stalemate: "stalemate", royal_capture: "capture of the king",
  repetition: "repetition", perpetual_check: "perpetual check", fifty_moves: "the fifty-move rule",
  seventy_five_moves: "the seventy-five-move rule", dead_position: "dead position",
  resignation: "resignation", time: "time", agreement: "agreement", abort: "abort", abandonment: "abandonment",
};

export function resultText(result: string | null, termination: string | null, names: [string, string], detail?: string | null, plies = 0): string {
  const why = termination ? RESULT_WORDS[termination] ?? termination : "";
  if (result === "1-0") return `${names[0]} wins${why ? " by " + why : ""}`;
  if (result === "0-1") return `${names[1]} wins${why ? " by " + why : ""}`;
  if (result === "1/2-1/2") return `Draw${why ? " by " + why : ""}`;
  if (termination === "abort") return abortText(detail, names, plies);
  return "Game over";
}

export function errorText(e: unknown): string {
  if (e && typeof e === "object" && "message" in e) return String((e as { message: string }).message);
  return String(e);
}
