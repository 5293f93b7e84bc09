// Shapes of what the server sends (docs/protocol.md) and of the variant catalogue
// (GET /api/variants, server/transport/catalogue.py).

export type Side = "first" | "second";
export type Role = Side | "spectator";

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

export interface Player {
  id: string; name: string; guest: boolean; rating?: number | null; provisional?: boolean;
  computer?: boolean;
}

export type TimeControl =
  | { kind: "fischer"; base_s: number; inc_s: number }
  | { kind: "byoyomi"; main_s: number; period_s: number; periods: number };

export interface Seek {
  id: number; player: Player; variant: string; tc: TimeControl; speed: string;
  rated: boolean; colour: "first" | "second" | "random"; range: [number, number] | null;
  manual: boolean;
}

export interface Challenge {
  id: number; from: Player; to: Player; variant: string; tc: TimeControl; speed: string;
  rated: boolean; colour: string; seek: number | null;
}

export interface SideClock { ms: number; periods?: number; period_ms?: number }
export interface Clocks { first: SideClock; second: SideClock; running: Side | null }

export interface ChatLine { game: string; room: string; user: string; user_id: string; text: string }

export interface Absence { claimable: boolean; claim_in_ms: number }

export interface GameSnapshot {
  game: string; variant: string; tc: TimeControl; speed: string; rated: boolean;
  status: "started" | "finished"; role: Role;
  players: { first: Player; second: Player };
  start_fen: string; moves: string[]; displays: string[]; ply: number;
  fen: string; turn: Side; legal: string[]; clocks: Clocks;
  result: string | null; termination: string | null; winner: Side | null;
  offers: { draw: Side | null; takeback: Side | null; rematch: Side | null };
  absent: { first: Absence | null; second: Absence | null };
  chat: ChatLine[];
}

export interface StoredMove {
  ply: number; uci: string; display: string; clock_ms: number | null;
  periods_left: number | null; spent_ms: number | null; at: string | null;
}

export interface StoredPlayer { name: string; id: string | null; rating_before: number | null; rating_after: number | null }

export interface StoredGame {
  id: string; variant: string; status: string; result: string | null; termination: string | null;
  rated: boolean; speed: string;
  time_control: { kind: string; base_ms: number; increment_ms: number; byoyomi_ms: number; periods: number; text: string };
  first: StoredPlayer; second: StoredPlayer; plies: number; start_fen: string; final_fen: string;
  created_at: string; started_at: string | null; finished_at: string | null;
  formats?: string[]; moves?: StoredMove[];
  position?: { ply: number; fen: string; turn: Side; move: string | null; check: boolean; sfen?: string };
}

/** One player of the `who` listing (docs/protocol.md, "who"). */
export interface OnlinePlayer {
  id: string;
  name: string;
  guest: boolean;
  computer?: boolean;
  ratings: Record<string, { rating: number; provisional: boolean }>;
  game: string | null;
}
