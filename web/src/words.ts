// How the client names sides and explains outcomes, in one place: sente/gote in shogi, White/
// Black in chess (Persians/Spartans in Spartan Chess), never "first"/"second" on screen.

import type { ChallengeView, SideName } from "./protocol.gen";
import type { VariantInfo } from "./types";

export function sideWord(v: VariantInfo | undefined, side: SideName): string {
  if (v?.family === "shogi") return side === "first" ? "sente" : "gote";
  if (v?.name === "spartan") return side === "first" ? "the Persians (White)" : "the Spartans (Black)";
  return side === "first" ? "White" : "Black";
}

/** A side's word starting a sentence or a list entry ("Sente", "The Persians (White)"). */
export function sideTitle(v: VariantInfo | undefined, side: SideName): string {
  const word = sideWord(v, side);
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** The side the reader gets from a seek or challenge whose author asked for `colour`. */
export function readerColour(colour: string, authorIsMe: boolean, v: VariantInfo | undefined): string {
  if (colour !== "first" && colour !== "second") return "colours drawn at random";
  const mine: SideName = authorIsMe ? colour : colour === "first" ? "second" : "first";
  return `you play ${sideWord(v, mine)}`;
}

/** The side a challenge gives the viewer (`colour` is the sender's wish). */
export function challengeColour(c: ChallengeView, meId: string | undefined, v: VariantInfo | undefined): string {
  return readerColour(c.colour, c.to.id !== meId, v);
}

/** Why a game was aborted, from the `end` event's `detail` and the moves made. */
export function abortText(detail: string | null | undefined, names: [string, string], plies: number): string {
  if (detail === "first_aborted") return `Game aborted by ${names[0]}`;
  if (detail === "second_aborted") return `Game aborted by ${names[1]}`;
  if (detail === "no_first_move") return `Game aborted: ${names[plies === 0 ? 0 : 1]} made no first move in time`;
  return "Game aborted before both players had moved";
}
