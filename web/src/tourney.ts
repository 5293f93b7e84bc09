// What the tournament pages show, as pure functions of the server's views (docs/tournaments.md):
// a tournament's one-line terms, its start and countdown in words, the listings grouped by
// status, the rounds offered, the create form read into a `tournament_create` command, and
// whether a tournament game's player may still berserk. No DOM here (unit-tested).

import { tcText } from "./clock";
import type {
  Commands, TimeControlView, TournamentPairingView, TournamentSettingsView,
  TournamentPageView, TournamentStandingsPayload, TournamentStandingView, TournamentSummaryView, TournamentTagView,
} from "./protocol.gen";

export type TournamentFormat = TournamentSettingsView["format"];
export type TournamentStatus = TournamentSummaryView["status"];

export const FORMAT_WORDS: Record<TournamentFormat, string> = {
  arena: "Arena", swiss: "Swiss", round_robin: "Round robin", double_round_robin: "Double round robin",
};

export const STATUS_WORDS: Record<TournamentStatus, string> = {
  created: "Upcoming", started: "Running", finished: "Finished",
};

/** A span of time as a countdown: "1:02:03", "4:05", "0:09" (never negative). */
export function countdownText(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600), m = Math.floor((total % 3600) / 60), s = total % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}

/** A length in minutes or hours: "45 min", "2 h", "1 h 30 min" (a number never parted from
 * its unit at a line's end: no-break spaces). */
export function durationText(ms: number): string {
  const minutes = Math.round(ms / 60000);
  const h = Math.floor(minutes / 60), m = minutes % 60;
  if (h === 0) return `${m}\u00a0min`;
  return m === 0 ? `${h}\u00a0h` : `${h}\u00a0h ${m}\u00a0min`;
}

/** The format's length: "60 min", "7 rounds", "single round robin". */
export function lengthText(s: TournamentSettingsView): string {
  if (s.format === "arena") return s.duration_ms === null ? "" : durationText(s.duration_ms);
  if (s.format === "swiss") return s.rounds === null ? "" : `${s.rounds} round${s.rounds === 1 ? "" : "s"}`;
  return s.format === "round_robin" ? "everyone meets everyone once" : "everyone meets everyone twice";
}

/** The terms on one line: "Arena · Mini-Shogi · 3+2 · rated · 60 min · berserk · password". */
export function termsText(s: TournamentSettingsView, variantTitle: string): string {
  const bits = [FORMAT_WORDS[s.format], variantTitle, tcText(s.tc), s.rated ? "rated" : "casual", lengthText(s)];
  if (s.format === "arena" && s.berserk) bits.push("berserk allowed");
  if (s.min_rating !== null) bits.push(`rating ≥ ${s.min_rating}`);
  if (!s.bots) bits.push("no bots");
  if (s.computer) bits.push("the computer may enter");
  if (s.password) bits.push("password");
  return bits.filter(Boolean).join(" · ");
}

/** When it starts (or ends), in words, at `now` (epoch ms; the server's times are epoch ms). */
export function whenText(status: TournamentStatus, s: TournamentSettingsView, countdownMs: number | null, now: number): string {
  if (status === "finished") return "Finished";
  if (status === "started") return countdownMs === null ? "Running" : `Running · ends in ${countdownText(countdownMs - now)}`;
  const parts: string[] = [];
  if (countdownMs !== null) parts.push(countdownMs > now ? `Starts in ${countdownText(countdownMs - now)}` : "Starting…");
  if (s.start_when_joined !== null) parts.push(`${parts.length ? "or" : "Starts"} when ${s.start_when_joined} players have joined`);
  return parts.join(" ") || "Not started";
}

/** A listing split by status, each newest first as the server sends them. */
export function byStatus(list: TournamentSummaryView[]): Record<TournamentStatus, TournamentSummaryView[]> {
  const out: Record<TournamentStatus, TournamentSummaryView[]> = { created: [], started: [], finished: [] };
  for (const t of list) out[t.status].push(t);
  return out;
}

/** The games being played, the leader's first: ordered by the better rank of their players. */
export function gamesBeingPlayed(pairings: TournamentPairingView[], playing: string[], standings: TournamentStandingView[]): TournamentPairingView[] {
  const now = new Set(playing);
  const rank = new Map(standings.map((r) => [r.player, r.rank]));
  const placed = (p: TournamentPairingView) => Math.min(rank.get(p.white) ?? Infinity, rank.get(p.black) ?? Infinity);
  return pairings.filter((p) => now.has(p.game)).sort((a, b) => placed(a) - placed(b));
}

/** The games a view names: its pairings (the current round's, or an arena's top games being
 * played) and the viewer's own (`mine`). */
export function namedGames(view: TournamentPageView): TournamentPairingView[] {
  const seen = new Set(view.pairings.map((p) => p.game));
  return [...view.pairings, ...view.mine.filter((p) => !seen.has(p.game))];
}

/** Whether a standings push (one page) leaves the page something it cannot draw from the push
 * alone, so the view must be asked for: the status or the round changed (the podium, a round's
 * pairings), a game is played that the view would name but does not (the view names every game
 * of the current round, else the top games: the first page's players' are among them), or a game
 * it names as played by the page's players ended (the push names the games of its own players
 * only). A join, a pause or a withdrawal needs nothing more. */
export function needsView(view: TournamentPageView, push: TournamentStandingsPayload): boolean {
  if (push.status !== view.status || push.round !== view.round) return true;
  const named = namedGames(view);
  const known = new Set(named.map((p) => p.game));
  const complete = view.pairings.length >= view.pairings_total;
  if ((complete || push.page === 1) && push.playing.some((g) => !known.has(g))) return true;
  const onPage = new Set(push.standings.map((r) => r.player));
  const playing = new Set(push.playing);
  return named.some((p) => p.result === null && (onPage.has(p.white) || onPage.has(p.black)) && !playing.has(p.game));
}

/** The games being played after a page's push: the page's players' games as the push names
 * them, the others' as the view last knew them. */
export function mergePlaying(playing: string[], pairings: TournamentPairingView[], push: TournamentStandingsPayload): string[] {
  const onPage = new Set(push.standings.map((r) => r.player));
  const pageGames = new Set(pairings.filter((p) => onPage.has(p.white) || onPage.has(p.black)).map((p) => p.game));
  return [...new Set([...playing.filter((g) => !pageGames.has(g)), ...push.playing])];
}

/** The rounds a selector offers, the latest first: "Round 3 (current)", "Wave 2" … */
export function roundChoices(current: number, arena: boolean): { round: number; text: string }[] {
  const word = arena ? "Wave" : "Round";
  const out: { round: number; text: string }[] = [];
  for (let r = current; r >= 1; r--) out.push({ round: r, text: `${word} ${r}${r === current ? " (current)" : ""}` });
  return out;
}

/** The standings pager: its words and which way it can turn. */
export function pagerText(page: number, pages: number): { text: string; prev: boolean; next: boolean } {
  return { text: `Page ${page} of ${pages}`, prev: page > 1, next: page < pages };
}

/** How long a page waits between two asks for the view: a second in a small tournament, ten in
 * a large one (each watcher asks, and a large field's pushes are frequent; the view itself is
 * bounded, ~10 kB). `players`: the number of entries (the view's `players`). */
export function viewInterval(players: number): number {
  return players > 100 ? 10000 : 1000;
}

/** A score as the format counts it: arena points are whole, chess points halves ("2½"). */
export function scoreText(score: number): string {
  const whole = Math.floor(score);
  const half = score - whole >= 0.5;
  return half ? `${whole === 0 ? "" : whole}½` : String(whole);
}

/** A player's entry, if any, among the standings (the server's player ids). */
export function entryOf(standings: TournamentStandingView[], playerId: string | undefined): TournamentStandingView | null {
  return playerId === undefined ? null : standings.find((r) => r.player === playerId) ?? null;
}

/** What a viewer may do: join (a password field when one is needed), withdraw, pause, resume. */
export function entryActions(
  status: TournamentStatus, format: TournamentFormat, entry: TournamentStandingView | null, loggedIn: boolean,
): ("join" | "withdraw" | "pause" | "resume")[] {
  if (!loggedIn || status === "finished") return [];
  const roundRobin = format === "round_robin" || format === "double_round_robin";
  if (entry === null || entry.status === "withdrawn") return roundRobin && status === "started" ? [] : ["join"];
  const out: ("join" | "withdraw" | "pause" | "resume")[] = ["withdraw"];
  if (format === "arena" && status === "started") out.push(entry.status === "paused" ? "resume" : "pause");
  return out;
}

/** Whether the player (side `me`, `myMoves` moves made) may berserk now: a tournament game that
 * allows it, still running, before their first move, not berserked yet. The server decides. */
export function mayBerserk(tag: TournamentTagView | undefined, status: string, myMoves: number, berserked: boolean): boolean {
  return tag !== undefined && tag.berserk && status === "started" && myMoves === 0 && !berserked;
}

/** The create form's fields as the form holds them (text of inputs, checkboxes as booleans). */
export interface CreateFields {
  name: string;
  format: string;
  variant: string;
  kind: string;
  base_min: string; inc: string;
  main_min: string; period: string; periods: string;
  rated: boolean;
  start: string;  // "in" (minutes from now), "at" (a local date and time), "joined" (N players)
  start_in: string; start_at: string; start_joined: string;
  duration_min: string; rounds: string;
  password: string; min_rating: string; max_players: string;
  bots: boolean; computer: boolean; berserk: boolean;
}

export type CreateCommand = Commands["tournament_create"];

const FORMATS: readonly string[] = ["arena", "swiss", "round_robin", "double_round_robin"];

/** The form read into `tournament_create`, or a sentence saying what is missing. `now`: epoch
 * ms; `parseLocal` reads a `datetime-local` value (the browser's `Date`). The server checks
 * everything again (a malformed command gets its error). */
export function createCommand(f: CreateFields, now: number, parseLocal: (v: string) => number = (v) => new Date(v).getTime()): CreateCommand | string {
  const name = f.name.trim();
  if (!name) return "Give the tournament a name.";
  if (!FORMATS.includes(f.format)) return "Choose a format.";
  const int = (v: string) => (v.trim() === "" ? null : Number(v));
  const tc: TimeControlView = f.kind === "byoyomi"
    ? { kind: "byoyomi", main_s: Math.round(Number(f.main_min) * 60), period_s: Number(f.period), periods: Number(f.periods) }
    : { kind: "fischer", base_s: Math.round(Number(f.base_min) * 60), inc_s: Number(f.inc) };
  const cmd: CreateCommand = { name, format: f.format as TournamentFormat, variant: f.variant, tc, rated: f.rated, bots: f.bots, computer: f.computer };
  if (f.start === "joined") {
    const n = int(f.start_joined);
    if (n === null || !Number.isInteger(n) || n < 2) return "Say how many players start it (2 or more).";
    cmd.start_when_joined = n;
  } else if (f.start === "at") {
    const at = parseLocal(f.start_at);
    if (!Number.isFinite(at)) return "Choose the start's date and time.";
    if (at <= now) return "The start time has passed.";
    cmd.start_at_ms = at;
  } else {
    const minutes = int(f.start_in);
    if (minutes === null || !(minutes >= 0)) return "Say in how many minutes it starts.";
    cmd.start_at_ms = now + Math.round(minutes * 60000);
  }
  if (f.format === "arena") {
    const minutes = int(f.duration_min);
    if (minutes === null || !(minutes > 0)) return "Say how long the arena lasts.";
    cmd.duration_s = Math.round(minutes * 60);
    cmd.berserk = f.berserk;
  } else {
    cmd.berserk = false;
  }
  if (f.format === "swiss") {
    const n = int(f.rounds);
    if (n === null || !Number.isInteger(n) || n < 1) return "Say how many rounds the Swiss has.";
    cmd.rounds = n;
  }
  if (f.password) cmd.password = f.password;
  const minRating = int(f.min_rating);
  if (minRating !== null) cmd.min_rating = minRating;
  const maxPlayers = int(f.max_players);
  if (maxPlayers !== null) cmd.max_players = maxPlayers;
  return cmd;
}
