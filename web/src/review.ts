// Stored games: the filterable list (GET /api/games) and a player's profile (ratings per
// variant and speed, from the rated games' ratings after each game, and recent games).

import { tcOfStored, tcText } from "./clock";
import { errorText, resultText, type Ctx } from "./ctx";
import { h } from "./svg";
import { titledName } from "./names";
import type { GameSummaryView } from "./protocol.gen";

export function gameTable(ctx: Ctx, games: GameSummaryView[]): HTMLElement {
  const rows = games.map((g) => {
    const link = h("a", { href: `/game/${g.id}`, text: "open", "data-open": g.id });
    link.addEventListener("click", (e) => { e.preventDefault(); ctx.navigate(`/game/${g.id}`); });
    const when = (g.started_at ?? g.created_at).replace("T", " ").slice(0, 16);
    return h("tr", { "data-game": g.id }, [
      h("td", { text: when }), h("td", { text: ctx.variants.get(g.variant)?.title ?? g.variant }),
      h("td", {}, [...titledName(g.first), " – ", ...titledName(g.second)]), h("td", { text: g.result ?? "*" }),
      h("td", { text: g.status === "finished" ? resultText(g.result, g.termination, [g.first.name, g.second.name]) : g.status }),
      h("td", { text: g.plies === null ? "–" : String(g.plies) }), h("td", { text: `${tcText(tcOfStored(g))}, ${g.rated ? "rated" : "casual"}` }), h("td", {}, [link]),
    ]);
  });
  return h("table", { class: "games" }, [
    h("thead", {}, [h("tr", {}, ["Date (UTC)", "Variant", "Players", "Result", "Ending", "Plies", "Terms", ""].map((t) => h("th", { text: t })))]),
    h("tbody", {}, rows.length ? rows : [h("tr", {}, [h("td", { colspan: 8, class: "empty", text: "No games." })])]),
  ]);
}

export class ReviewList {
  readonly el: HTMLElement;
  private readonly results = h("div");
  private readonly error = h("p", { class: "error", role: "alert" });
  private cursor: string | null = null;
  private readonly form: HTMLFormElement;

  constructor(private readonly ctx: Ctx, player: string | null) {
    const field = (label: string, input: HTMLElement) => h("label", {}, [h("span", { text: label }), input]);
    this.form = h("form", { class: "filters" }, [
      field("Player", h("input", { type: "text", name: "player", value: player ?? "" })),
      field("Variant", h("select", { name: "variant" }, [h("option", { value: "", text: "any" }), ...[...ctx.variants.values()].map((v) => h("option", { value: v.name, text: v.title }))])),
      field("Result", h("select", { name: "result" }, [["", "any"], ["1-0", "sente / White won"], ["0-1", "gote / Black won"], ["1/2-1/2", "draw"]].map(([v, t]) => h("option", { value: v, text: t })))),
      field("Status", h("select", { name: "status" }, [["", "any"], ["finished", "finished"], ["started", "running"], ["aborted", "aborted"]].map(([v, t]) => h("option", { value: v, text: t })))),
      field("From", h("input", { type: "date", name: "since" })), field("Before", h("input", { type: "date", name: "until" })),
      h("button", { type: "submit", class: "primary", text: "Search" }),
      ctx.me ? h("button", { type: "button", class: "mine", text: "My games" }) : null,
    ]);
    // The filters are the page's address (/review?player=…): shared, and kept by a reload.
    const wanted = new URLSearchParams(location.search);
    for (const el of this.form.querySelectorAll<HTMLInputElement | HTMLSelectElement>("input[name], select[name]")) {
      const value = wanted.get(el.name);
      if (value !== null) el.value = value;
    }
    this.form.querySelector<HTMLButtonElement>("button.mine")?.addEventListener("click", () => {
      this.form.querySelector<HTMLInputElement>('input[name="player"]')!.value = ctx.me!.name;
      this.search();
    });
    this.form.addEventListener("submit", (e) => { e.preventDefault(); this.search(); });
    const more = h("button", { type: "button", class: "more", text: "Older games" });
    more.addEventListener("click", () => void this.load());
    this.el = h("section", { class: "review panel" }, [h("h2", { text: "Games" }), this.form, this.error, this.results, more]);
    void this.load();
  }

  /** The filters as query fields (the empty ones left out). */
  private filters(): URLSearchParams {
    const params = new URLSearchParams();
    for (const [k, v] of new FormData(this.form)) if (String(v)) params.set(k, String(v));
    return params;
  }

  /** A new search: its filters become the page's address, then the first page loads. */
  private search(): void {
    const query = this.filters().toString();
    history.replaceState(null, "", query ? `/review?${query}` : "/review");
    this.cursor = null;
    void this.load();
  }

  private async load(): Promise<void> {
    const params = this.filters();
    params.set("limit", "30");
    if (this.cursor) params.set("cursor", this.cursor);
    this.error.textContent = "";
    try {
      const answer = await fetch(`/api/games?${params}`);
      const body = await answer.json();
      if (!answer.ok) throw new Error(body.error?.message ?? answer.statusText);
      this.cursor = body.next_cursor;
      this.results.replaceChildren(gameTable(this.ctx, body.games as GameSummaryView[]));
      this.el.querySelector<HTMLButtonElement>(".more")!.hidden = !body.next_cursor;
    } catch (e) { this.error.textContent = errorText(e); }
  }
}

export class Profile {
  readonly el: HTMLElement;

  constructor(private readonly ctx: Ctx, private readonly name: string) {
    this.el = h("section", { class: "profile panel" }, [h("h2", { text: name }), h("p", { class: "muted", text: "Loading…" })]);
    void this.load();
  }

  private async load(): Promise<void> {
    const answer = await fetch(`/api/games?player=${encodeURIComponent(this.name)}&limit=100`);
    if (!answer.ok) { this.el.append(h("p", { class: "error", text: "Cannot load this player's games." })); return; }
    // The list's name filter also finds names containing this one: keep this player's games.
    const mine = (p: { name: string }) => p.name.toLowerCase() === this.name.toLowerCase();
    const games = ((await answer.json()).games as GameSummaryView[]).filter((g) => mine(g.first) || mine(g.second));
    const ratings = new Map<string, number>();
    for (const g of games) {  // newest first: the first rated game of a pool gives its rating
      if (!g.rated) continue;
      const me = mine(g.first) ? g.first : g.second;
      const key = `${this.ctx.variants.get(g.variant)?.title ?? g.variant} · ${g.speed}`;
      if (!ratings.has(key) && me.rating_after !== null) ratings.set(key, me.rating_after);
    }
    const table = ratings.size
      ? h("table", { class: "ratings" }, [...ratings].map(([k, r]) => h("tr", {}, [h("td", { text: k }), h("td", { text: String(r) })])))
      : h("p", { class: "muted", text: "No rated games yet (ratings start at 1500)." });
    this.el.replaceChildren(h("h2", { text: this.name }), h("h3", { text: "Ratings" }), table, h("h3", { text: "Recent games" }), gameTable(this.ctx, games.slice(0, 20)));
  }
}
