// Shapes of the variant catalogue (GET /api/variants, server/transport/catalogue.py). What the
// server sends over the websocket and the review API is typed by protocol.gen.ts, generated
// from the server's payload schemas (server/hub/payloads.py and its siblings, scripts/gen_types.py).

import type { GameSnapshot } from "./protocol.gen";

/** Who looks at a game: a player's side or a spectator (the snapshot's `role`). */
export type Role = GameSnapshot["role"];

export interface Atom {
  dx: number; dy: number; min: number; max: number;
  jump: boolean; move: boolean; capture: boolean; initial: boolean;
}

export interface PieceInfo {
  symbol: string; name: string; abbrev: string; kanji: string | null; betza: string;
  royal: boolean; promoted: boolean; promotes_to: string | null;
  atoms: Atom[]; lion: [number, number][] | null;
}

export interface VariantInfo {
  name: string; title: string; family: "shogi" | "chess";
  files: number; ranks: number; start_fen: string;
  drops: boolean; draw_offers: boolean; draw_claims: boolean; byoyomi: boolean;
  promotion: { zone: number; style: string } | null;
  pieces: PieceInfo[];
}
