// The server's legal moves as something a player clicks through. The client decides nothing
// about legality: it only narrows the server's list (docs/protocol.md, "move") as squares are
// clicked, and sends the list's own string.
//
// Forms: "e2e4", "c4c5+" (shogi promotion), "e7e8q" (chess promotion), "P@c3" (drop),
// "h3i4,i4i5" (multi-leg Lion move; "h3i4,i4h3" is igui), "@@@@" (pass).

export interface LegalMove {
  uci: string;
  /** Origin square, or null for a drop. */
  from: string | null;
  /** Dropped piece symbol (upper case), or null. */
  drop: string | null;
  /** Squares visited after the origin, in order; the last is where the piece ends. */
  path: string[];
  /** "" none, "+" shogi promotion, else the chess promotion piece letter. */
  promo: string;
}

export const PASS = "@@@@";
const SQ = "[a-o](?:1[0-5]|[1-9])";
const DROP_RE = new RegExp(`^([A-Z]['!]?)@(${SQ})$`);
const LEG_RE = new RegExp(`^(${SQ})(${SQ})$`);
const SIMPLE_RE = new RegExp(`^(${SQ})(${SQ})(\\+|[a-z]['!]?)?$`);

export function parseMove(uci: string): LegalMove | null {
  if (uci === PASS) return null;
  const drop = DROP_RE.exec(uci);
  if (drop) return { uci, from: null, drop: drop[1], path: [drop[2]], promo: "" };
  if (uci.includes(",")) {
    const legs = uci.split(",");
    let promo = "";
    const last = legs[legs.length - 1];
    if (last.endsWith("+")) { promo = "+"; legs[legs.length - 1] = last.slice(0, -1); }
    const parsed = legs.map((leg) => LEG_RE.exec(leg));
    if (parsed.some((p) => p === null)) return null;
    return { uci, from: parsed[0]![1], drop: null, path: parsed.map((p) => p![2]), promo };
  }
  const m = SIMPLE_RE.exec(uci);
  if (!m) return null;
  return { uci, from: m[1], drop: null, path: [m[2]], promo: m[3] ?? "" };
}

export function parseLegal(legal: string[]): LegalMove[] {
  return legal.map(parseMove).filter((m): m is LegalMove => m !== null);
}

/** Where a player starts a move: an origin square, or "drop:<symbol>" for a hand piece. */
export type Origin = string;

export function originOf(m: LegalMove): Origin {
  return m.from ?? `drop:${m.drop}`;
}

export function movesFrom(moves: LegalMove[], origin: Origin): LegalMove[] {
  return moves.filter((m) => originOf(m) === origin);
}

/** What the clicks so far leave open. */
export type Step =
  | { kind: "none" }
  /** Click one of `targets` next; `stop` is true when the path so far is itself a move. */
  | { kind: "continue"; targets: Set<string>; stop: boolean }
  /** The path is complete; more than one move means a promotion choice. */
  | { kind: "done"; moves: LegalMove[] };

function samePrefix(path: string[], prefix: string[]): boolean {
  return prefix.every((sq, i) => path[i] === sq);
}

/** After choosing `origin` and clicking the squares `clicked`, what may come next. */
export function advance(moves: LegalMove[], origin: Origin, clicked: string[]): Step {
  const candidates = movesFrom(moves, origin).filter((m) => samePrefix(m.path, clicked));
  if (candidates.length === 0) return { kind: "none" };
  const complete = candidates.filter((m) => m.path.length === clicked.length);
  const longer = candidates.filter((m) => m.path.length > clicked.length);
  if (longer.length === 0) return { kind: "done", moves: complete };
  const targets = new Set(longer.map((m) => m.path[clicked.length]));
  return { kind: "continue", targets, stop: complete.length > 0 };
}

/**
 * Clicking `square` in the state (origin, clicked). Returns the new clicked path and step:
 * clicking the last clicked square again stops there (a Lion that ends its move on the
 * first square).
 */
export function click(moves: LegalMove[], origin: Origin, clicked: string[], square: string):
    { clicked: string[]; step: Step } {
  const current = advance(moves, origin, clicked);
  if (current.kind === "continue" && current.stop && clicked.length > 0 && square === clicked[clicked.length - 1]) {
    const complete = movesFrom(moves, origin).filter((m) => m.path.length === clicked.length && samePrefix(m.path, clicked));
    return { clicked, step: { kind: "done", moves: complete } };
  }
  if (current.kind !== "continue" || !current.targets.has(square)) return { clicked, step: { kind: "none" } };
  const next = [...clicked, square];
  return { clicked: next, step: advance(moves, origin, next) };
}

/** The promotion choices among complete moves: "" (stay), "+", or chess piece letters. */
export function promotionChoices(done: LegalMove[]): string[] {
  return done.map((m) => m.promo);
}
