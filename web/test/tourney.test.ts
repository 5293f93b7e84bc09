import { describe, expect, it } from "vitest";
import type { TournamentSettingsView, TournamentStandingView, TournamentSummaryView } from "../src/protocol.gen";
import {
  byStatus, countdownText, createCommand, entryActions, entryOf, gamesBeingPlayed, mayBerserk, mergePlaying, needsView, pagerText, roundChoices, viewInterval, scoreText, termsText, whenText, type CreateFields,
} from "../src/tourney";

const ARENA: TournamentSettingsView = {
  name: "Hourly", format: "arena", variant: "minishogi", tc: { kind: "fischer", base_s: 180, inc_s: 2 }, rated: true,
  start_at_ms: 1_000_000, start_when_joined: null, duration_ms: 3_600_000, rounds: null, password: false,
  min_rating: null, bots: true, computer: false, max_players: 1000, berserk: true,
};

const FIELDS: CreateFields = {
  name: " Sunday cup ", format: "arena", variant: "minishogi", kind: "fischer", base_min: "3", inc: "2",
  main_min: "5", period: "10", periods: "1", rated: true, start: "in", start_in: "10", start_at: "", start_joined: "4",
  duration_min: "45", rounds: "7", password: "", min_rating: "", max_players: "", bots: true, computer: false, berserk: true,
};

function row(player: string, status: TournamentStandingView["status"] = "active"): TournamentStandingView {
  return { rank: 1, player, name: player, rating: 1500, score: 0, games: 0, status, tiebreaks: {}, fire: false, berserks: 0, sheet: [] };
}

describe("tournament words", () => {
  it("counts down in hours, minutes and seconds, never below zero", () => {
    expect(countdownText(3_723_000)).toBe("1:02:03");
    expect(countdownText(65_000)).toBe("1:05");
    expect(countdownText(8_100)).toBe("0:09");  // a started second counts
    expect(countdownText(-5)).toBe("0:00");
  });
  it("says the terms on one line", () => {
    expect(termsText(ARENA, "Mini-Shogi")).toBe("Arena · Mini-Shogi · 3 min + 2s · rated · 1\u00a0h · berserk allowed");
    expect(termsText({ ...ARENA, duration_ms: 5_400_000, berserk: false }, "Mini-Shogi")).toBe("Arena · Mini-Shogi · 3 min + 2s · rated · 1\u00a0h 30\u00a0min");
    const swiss = { ...ARENA, format: "swiss" as const, rounds: 5, duration_ms: null, rated: false, password: true, min_rating: 1600, bots: false };
    expect(termsText(swiss, "Sho Shogi")).toBe("Swiss · Sho Shogi · 3 min + 2s · casual · 5 rounds · rating ≥ 1600 · no bots · password");
  });
  it("says when it starts or ends", () => {
    expect(whenText("created", ARENA, 1_000_000, 940_000)).toBe("Starts in 1:00");
    expect(whenText("created", { ...ARENA, start_at_ms: null, start_when_joined: 4 }, null, 0)).toBe("Starts when 4 players have joined");
    expect(whenText("created", { ...ARENA, start_when_joined: 8 }, 1_000_000, 999_000)).toBe("Starts in 0:01 or when 8 players have joined");
    expect(whenText("started", ARENA, 2_000_000, 1_000_000)).toBe("Running · ends in 16:40");
    expect(whenText("finished", ARENA, null, 0)).toBe("Finished");
  });
  it("writes chess points with halves", () => {
    expect([0, 0.5, 2, 2.5].map(scoreText)).toEqual(["0", "½", "2", "2½"]);
  });
});

describe("tournament lists", () => {
  it("groups a listing by status, keeping the server's order", () => {
    const t = (id: string, status: TournamentSummaryView["status"]) => ({ id, status, created_by: null, settings: ARENA });
    const groups = byStatus([t("a", "started"), t("b", "created"), t("c", "started"), t("d", "finished")]);
    expect(groups.started.map((x) => x.id)).toEqual(["a", "c"]);
    expect(groups.created.map((x) => x.id)).toEqual(["b"]);
    expect(groups.finished.map((x) => x.id)).toEqual(["d"]);
  });
  it("lists the games being played, the leader's first", () => {
    const p = (game: string, white: string, black: string) => ({ game, round: 2, white, black, white_name: white, black_name: black, result: null, white_berserk: false, black_berserk: false });
    const standings = ["d", "c", "b", "a", "e"].map((name, i) => ({ ...row(name), rank: i + 1 }));
    const games = gamesBeingPlayed([p("g1", "a", "b"), p("g0", "x", "y"), p("g2", "c", "e"), p("g3", "d", "f")], ["g1", "g2"], standings);
    expect(games.map((g) => g.game)).toEqual(["g2", "g1"]);  // c is 2nd, b 3rd; g3 is over
  });
});

describe("entry", () => {
  it("offers join, withdraw, pause and resume as the format and the entry allow", () => {
    expect(entryActions("created", "arena", null, true)).toEqual(["join"]);
    expect(entryActions("created", "arena", null, false)).toEqual([]);
    expect(entryActions("created", "arena", row("me"), true)).toEqual(["withdraw"]);
    expect(entryActions("started", "arena", row("me"), true)).toEqual(["withdraw", "pause"]);
    expect(entryActions("started", "arena", row("me", "paused"), true)).toEqual(["withdraw", "resume"]);
    expect(entryActions("started", "swiss", row("me"), true)).toEqual(["withdraw"]);
    expect(entryActions("started", "swiss", row("me", "withdrawn"), true)).toEqual(["join"]);
    expect(entryActions("started", "round_robin", null, true)).toEqual([]);  // its table is fixed at the start
    expect(entryActions("finished", "arena", row("me"), true)).toEqual([]);
    expect(entryOf([row("a"), row("me")], "me")?.player).toBe("me");
    expect(entryOf([row("a")], undefined)).toBeNull();
  });
  it("offers berserk only before the player's first move in a game that allows it", () => {
    const tag = { id: "t", round: 1, berserk: true };
    expect(mayBerserk(tag, "started", 0, false)).toBe(true);
    expect(mayBerserk(tag, "started", 1, false)).toBe(false);
    expect(mayBerserk(tag, "started", 0, true)).toBe(false);
    expect(mayBerserk(tag, "finished", 0, false)).toBe(false);
    expect(mayBerserk({ ...tag, berserk: false }, "started", 0, false)).toBe(false);
    expect(mayBerserk(undefined, "started", 0, false)).toBe(false);
  });
});

describe("the create form", () => {
  it("reads an arena starting in ten minutes", () => {
    expect(createCommand(FIELDS, 1_000_000)).toEqual({
      name: "Sunday cup", format: "arena", variant: "minishogi", tc: { kind: "fischer", base_s: 180, inc_s: 2 }, rated: true,
      bots: true, computer: false, start_at_ms: 1_600_000, duration_s: 2700, berserk: true,
    });
  });
  it("reads a byoyomi Swiss that starts when six have joined, with entry conditions", () => {
    const cmd = createCommand({ ...FIELDS, format: "swiss", kind: "byoyomi", start: "joined", start_joined: "6", password: "pw", min_rating: "1400", max_players: "32", computer: true }, 0);
    expect(cmd).toEqual({
      name: "Sunday cup", format: "swiss", variant: "minishogi", tc: { kind: "byoyomi", main_s: 300, period_s: 10, periods: 1 }, rated: true,
      bots: true, computer: true, start_when_joined: 6, berserk: false, rounds: 7, password: "pw", min_rating: 1400, max_players: 32,
    });
  });
  it("reads a start time and a round robin (no duration, no rounds, no berserk)", () => {
    const cmd = createCommand({ ...FIELDS, format: "double_round_robin", start: "at", start_at: "x" }, 0, () => 5_000);
    expect(cmd).toMatchObject({ format: "double_round_robin", start_at_ms: 5_000, berserk: false });
    expect(cmd).not.toHaveProperty("duration_s");
    expect(cmd).not.toHaveProperty("rounds");
  });
  it("says what is missing", () => {
    expect(createCommand({ ...FIELDS, name: "  " }, 0)).toBe("Give the tournament a name.");
    expect(createCommand({ ...FIELDS, start: "joined", start_joined: "1" }, 0)).toBe("Say how many players start it (2 or more).");
    expect(createCommand({ ...FIELDS, start: "at" }, 10, () => NaN)).toBe("Choose the start's date and time.");
    expect(createCommand({ ...FIELDS, start: "at" }, 10, () => 5)).toBe("The start time has passed.");
    expect(createCommand({ ...FIELDS, duration_min: "" }, 0)).toBe("Say how long the arena lasts.");
    expect(createCommand({ ...FIELDS, format: "swiss", rounds: "0" }, 0)).toBe("Say how many rounds the Swiss has.");
  });
});

describe("the pushes", () => {
  const pair = (game: string, result: string | null = null, white = "a", black = "b") => ({ game, round: 1, white, black, white_name: white, black_name: black, result, white_berserk: false, black_berserk: false });
  const view = {
    id: "t", status: "started" as const, created_by: null, settings: ARENA, countdown_ms: null, round: 1,
    standings: [], pairings: [pair("g1"), pair("g0", "1-0"), pair("g5", null, "c", "d")], pairings_total: 3, byes: [], playing: ["g1", "g5"],
    playing_count: 2, podium: [], page: 1, pages: 2, players: 14, me: null, mine: [] as ReturnType<typeof pair>[],
  };
  const onPage = [row("a"), row("b")];
  const push = { id: "t", status: "started" as const, round: 1, page: 1, pages: 2, players: 14, standings: onPage, playing: ["g1"] };
  it("asks for the whole view only when the push leaves something undrawn", () => {
    expect(needsView(view, push)).toBe(false);                              // a join, a pause (g5: not this page's)
    expect(needsView(view, { ...push, round: 2 })).toBe(true);              // a new round
    expect(needsView(view, { ...push, status: "finished" })).toBe(true);    // the podium
    expect(needsView(view, { ...push, playing: ["g1", "g2"] })).toBe(true); // a game no pairing names
    expect(needsView(view, { ...push, playing: [] })).toBe(true);           // g1's result
    expect(needsView(view, { ...push, standings: [row("x")], playing: [] })).toBe(false); // another page
    // The view names the top games only (30 of 40): an unknown game on page 2 is not drawn, on page 1 it is.
    const top = { ...view, pairings_total: 40 };
    expect(needsView(top, { ...push, page: 2, playing: ["g1", "g9"] })).toBe(false);
    expect(needsView(top, { ...push, playing: ["g1", "g9"] })).toBe(true);
    // The viewer's own game (not among the pairings) ended: its result is asked for.
    const mine = { ...top, mine: [pair("g7", null, "a", "z")] };
    expect(needsView(mine, { ...push, page: 2 })).toBe(true);
  });
  it("offers the rounds, the latest first", () => {
    expect(roundChoices(3, false).map((c) => c.text)).toEqual(["Round 3 (current)", "Round 2", "Round 1"]);
    expect(roundChoices(1, true)).toEqual([{ round: 1, text: "Wave 1 (current)" }]);
    expect(roundChoices(0, true)).toEqual([]);
  });
  it("keeps the other pages' games being played, and the page's as pushed", () => {
    expect(mergePlaying(view.playing, view.pairings, { ...push, playing: [] })).toEqual(["g5"]);
    expect(mergePlaying(view.playing, view.pairings, { ...push, standings: [row("c")], playing: [] })).toEqual(["g1"]);
  });
  it("turns the standings' pages", () => {
    expect(pagerText(1, 3)).toEqual({ text: "Page 1 of 3", prev: false, next: true });
    expect(pagerText(3, 3)).toEqual({ text: "Page 3 of 3", prev: true, next: false });
    expect(pagerText(1, 1)).toEqual({ text: "Page 1 of 1", prev: false, next: false });
  });
  it("asks less often in a large tournament", () => {
    expect(viewInterval(12)).toBe(1000);
    expect(viewInterval(1000)).toBe(10000);
  });
});
