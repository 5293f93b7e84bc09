// One tournament's page (/tournament/<id>): its terms and countdown, join (with the password
// when one is needed) / withdraw / pause, the live standings by page of 10 (`tournament_watch`:
// the server pushes the page's `tournament_standings` each time it changes; fire and berserk
// marks; prev / next and "my position", `tournament_page`), the games being played (links to
// watch: the top games of an arena, the leader's first), the pairings per round (the current
// round's come with the view; a selector asks for any round, `tournament_round`, by page of 50)
// and, at the end, the podium; the chat (tournamentchat.ts: the lines pushed to watchers, the form
// for a registered player). A player's own tournament game opens by itself (main.ts follows
// `game_start`).

import { errorText, type Ctx } from "./ctx";
import type { Message } from "./net";
import { berserkMark, fireMark } from "./marks";
import { h } from "./svg";
import { TournamentChat } from "./tournamentchat";
import type { TournamentByeView, TournamentPageView, TournamentPairingView, TournamentRoundPayload, TournamentStandingsPayload, TournamentStandingView } from "./protocol.gen";
import { entryActions, FORMAT_WORDS, gamesBeingPlayed, mergePlaying, namedGames, needsView, pagerText, roundChoices, scoreText, termsText, viewInterval, whenText } from "./tourney";

export class TournamentPage {
  readonly el: HTMLElement;
  private view: TournamentPageView | null = null;
  /** The page asked for (null: the one holding the viewer's row, followed as it moves). */
  private page: number | null = null;
  private readonly head = h("div", { class: "panel t-head" });
  private readonly when = h("p", { class: "t-when", role: "timer" });
  private readonly entry = h("div", { class: "t-entry" });
  private readonly entryError = h("p", { class: "error", role: "alert" });
  private readonly podium = h("div", { class: "podium", hidden: true });
  private readonly standings = h("div", { class: "panel t-standings" });
  private readonly playing = h("div", { class: "panel t-playing" });
  private readonly pairings = h("div", { class: "panel t-pairings" });
  private readonly chat = new TournamentChat((text) => this.ctx.conn.request("tournament_chat", { id: this.id, text }));
  private readonly password = h("input", { type: "password", name: "t-password", placeholder: "Password", "aria-label": "Tournament password", autocomplete: "off" });
  private ticker = 0;
  private viewTimer = 0;
  private lastViewAt = 0;
  private watching = false;
  /** The round whose pairings are shown (null: the current one, followed as rounds go by). */
  private round: number | null = null;
  /** The page of its pairings (by 50). */
  private roundPage = 1;
  /** The round's pairings read with `tournament_round` (a round the view does not carry). */
  private roundRead: TournamentRoundPayload | null = null;
  private roundError = "";
  private roundAsking = false;

  constructor(private readonly ctx: Ctx, readonly id: string) {
    this.el = h("section", { class: "tournament-page", "data-tournament": id }, [
      h("div", { class: "t-main" }, [this.head, this.podium, this.standings]),
      h("div", { class: "t-side" }, [this.playing, this.pairings, this.chat.el]),
    ]);
  }

  /** On screen (and after each reconnection): watch the tournament. */
  async enter(): Promise<void> {
    if (!this.ctx.conn.open) return;
    try {
      const answer = await this.ctx.conn.request("tournament_watch", this.pageArgs());
      this.watching = true;
      this.chat.watched();  // the server's next tournament_chat: the last lines
      this.show(answer.d);
    } catch (e) {
      this.el.replaceChildren(h("p", { class: "error", role: "alert", text: errorText(e) }));
      return;
    }
    window.clearInterval(this.ticker);
    this.ticker = window.setInterval(() => this.drawWhen(), 1000);
  }

  leave(): void {
    window.clearInterval(this.ticker);
    window.clearTimeout(this.viewTimer);
    if (this.watching && this.ctx.conn.open) this.ctx.conn.request("tournament_unwatch", { id: this.id }).catch(() => {});
    this.watching = false;
  }

  onMessage(m: Message): void {
    if (m.t === "tournament" && m.d.id === this.id && m.a === undefined) { this.show(m.d); return; }
    if (m.t === "tournament_chat" && m.d.id === this.id) { this.chat.receive(m.d.lines); return; }
    if (m.t !== "tournament_standings" || m.d.id !== this.id || m.a !== undefined) return;
    this.showPage(m.d);
  }

  private pageArgs(): { id: string; page?: number } {
    return this.page === null ? { id: this.id } : { id: this.id, page: this.page };
  }

  /** A page of the standings (pushed, or the answer to `tournament_page`): its rows, the games
   * its players play, the round and the status at once; the pairings and the podium come with
   * the whole view, asked for when the push changed them (needsView), spaced by viewInterval. */
  private showPage(d: TournamentStandingsPayload): void {
    const v = this.view;
    if (!v) return;
    const more = needsView(v, d);
    const me = this.ctx.me?.id;
    const mine = d.standings.find((r) => r.player === me);
    this.view = {
      ...v, status: d.status, round: d.round, standings: d.standings, page: d.page, pages: d.pages, players: d.players,
      playing: mergePlaying(v.playing, namedGames(v), d), me: mine ?? v.me,
    };
    this.draw();
    if (more) this.askView();
  }

  /** Turn to `page` (null: "my position"); pushes follow it from now on. */
  private async turn(page: number | null): Promise<void> {
    this.page = page;
    try {
      const answer = await this.ctx.conn.request("tournament_page", this.pageArgs());
      this.showPage(answer.d);
    } catch (e) { this.entryError.textContent = errorText(e); }
  }

  private askView(): void {
    if (this.viewTimer) return;
    const every = viewInterval(this.view?.players ?? 0);
    // Spread over a fifth of the interval: a push reaches every watcher at once.
    const wait = Math.max(0, this.lastViewAt + every - Date.now()) + (every > 1000 ? Math.random() * every / 5 : 0);
    this.viewTimer = window.setTimeout(() => {
      this.lastViewAt = Date.now();
      this.ctx.conn.request("tournament", this.pageArgs()).then((a) => { this.viewTimer = 0; this.show(a.d); }, () => { this.viewTimer = 0; });
    }, wait);
  }

  private show(view: TournamentPageView): void {
    // The games being played the view names: its pairings' and the viewer's own.
    const playing = [...view.playing, ...view.mine.filter((p) => p.result === null).map((p) => p.game)];
    this.view = { ...view, playing: [...new Set(playing)] };
    this.draw();
    // A round read earlier may have changed: read again the one shown if it has games on.
    const read = this.roundRead;
    if (read && this.shownRound() === read.round && (read.playing.length > 0 || read.round === view.round)) void this.readRound();
  }

  /** The round the pairings panel shows. */
  private shownRound(): number {
    return this.round ?? this.view?.round ?? 0;
  }

  /** Whether the view itself carries the shown round's pairings (a Swiss's or a round robin's
   * current round, first page; an arena's view carries its games being played instead). */
  private fromView(): boolean {
    const v = this.view!;
    return v.settings.format !== "arena" && this.shownRound() === v.round && this.roundPage === 1 && v.pairings.length >= v.pairings_total;
  }

  /** Ask for the shown round's page of pairings (`tournament_round`). */
  private async readRound(): Promise<void> {
    const round = this.shownRound();
    if (round < 1 || this.roundAsking) return;
    this.roundAsking = true;
    try {
      const answer = await this.ctx.conn.request("tournament_round", { id: this.id, round, page: this.roundPage });
      this.roundRead = answer.d;
      this.roundError = "";
    } catch (e) { this.roundError = errorText(e); }
    this.roundAsking = false;
    if (this.view) this.drawPairings();
  }

  /** Show `round` (null: the current one), page `page` of its pairings. */
  private chooseRound(round: number | null, page = 1): void {
    this.round = round !== null && round === this.view?.round ? null : round;
    this.roundPage = page;
    this.roundError = "";
    if (this.fromView()) this.drawPairings();
    else void this.readRound();
  }


  private draw(): void {
    const v = this.view;
    if (!v) return;
    this.el.dataset.status = v.status;
    this.el.dataset.round = String(v.round);
    const s = v.settings;
    const title = this.ctx.variants.get(s.variant)?.title ?? s.variant;
    this.head.replaceChildren(
      h("h2", { text: s.name }),
      h("p", { class: "muted t-terms", text: termsText(s, title) }),
      v.created_by ? h("p", { class: "muted", text: `Created by ${v.created_by}` }) : "",
      this.when, this.entry, this.entryError,
    );
    this.drawWhen();
    this.drawEntry();
    this.chat.drawFor(this.ctx.me);
    this.drawPodium();
    this.drawStandings();
    this.drawPlaying();
    this.drawPairings();
  }

  private drawWhen(): void {
    const v = this.view;
    if (!v) return;
    const text = whenText(v.status, v.settings, v.countdown_ms, Date.now());
    const round = v.status === "started" && v.settings.format !== "arena" && v.round > 0 ? ` · round ${v.round}${v.settings.rounds ? ` of ${v.settings.rounds}` : ""}` : "";
    this.when.textContent = text + round;
  }

  private drawEntry(): void {
    const v = this.view!;
    const me = this.ctx.me;
    const entry = me ? v.me : null;
    const actions = entryActions(v.status, v.settings.format, entry, me !== null);
    const parts: (HTMLElement | string)[] = [];
    if (entry && entry.status !== "withdrawn" && v.status !== "finished") parts.push(h("span", { class: "you-in", text: entry.status === "paused" ? "You are in (paused)" : "You are in" }));
    const mine = this.myGame();
    if (mine) {
      const a = h("a", { href: `/game/${mine.game}`, class: "button primary", "data-my-game": mine.game, text: "Your game »" });
      a.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/game/${mine.game}`); });
      parts.push(a);
    }
    for (const act of actions) {
      if (act === "join" && v.settings.password) parts.push(this.password);
      const words = { join: "Join", withdraw: "Withdraw", pause: "Pause", resume: "Resume" }[act];
      const b = h("button", { type: "button", "data-action": `t-${act}`, class: act === "join" ? "primary" : act === "withdraw" ? "danger" : "", text: words });
      b.addEventListener("click", () => void this.act(act));
      parts.push(b);
    }
    if (!me && v.status !== "finished") parts.push(h("span", { class: "muted", text: "Log in to join." }));
    this.entry.replaceChildren(...parts);
  }

  /** The viewer's game being played in this tournament, if any. */
  private myGame(): TournamentPairingView | null {
    const me = this.ctx.me?.id;
    const v = this.view!;
    if (!me) return null;
    const playing = new Set(v.playing);
    return namedGames(v).find((p) => playing.has(p.game) && (p.white === me || p.black === me)) ?? null;
  }

  private async act(act: "join" | "withdraw" | "pause" | "resume"): Promise<void> {
    this.entryError.textContent = "";
    const id = this.id;
    try {
      if (act === "join") await this.ctx.conn.request("tournament_join", this.view?.settings.password ? { id, password: this.password.value } : { id });
      else if (act === "withdraw") await this.ctx.conn.request("tournament_withdraw", { id });
      else await this.ctx.conn.request("tournament_pause", { id, pause: act === "pause" });
      this.password.value = "";
    } catch (e) { this.entryError.textContent = errorText(e); }
    // The standings push says what changed; ask anyway in case this page missed it.
    this.askView();
  }

  private playerCell(row: TournamentStandingView): HTMLElement {
    const link = h("a", { href: `/player/${encodeURIComponent(row.name)}`, text: row.name });
    link.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/player/${encodeURIComponent(row.name)}`); });
    return h("td", { class: "t-player" }, [link, row.fire ? fireMark() : null, row.berserks > 0 ? berserkMark(row.berserks) : null,
      row.status !== "active" ? h("span", { class: "muted t-status", text: ` ${row.status}` }) : null]);
  }

  private drawStandings(): void {
    const v = this.view!;
    const arena = v.settings.format === "arena";
    const breaks = [...new Set(v.standings.flatMap((r) => Object.keys(r.tiebreaks)))];
    const me = this.ctx.me?.id;
    const head = ["#", "Player", "Rating", ...(arena ? ["Sheet"] : breaks.map(breakName)), "Score"];
    const pager = pagerText(v.page, v.pages);
    const turn = (action: string, text: string, label: string, enabled: boolean, page: number | null) => {
      const b = h("button", { type: "button", "data-action": action, "aria-label": label, text, disabled: !enabled });
      b.addEventListener("click", () => void this.turn(page));
      return b;
    };
    const nav = v.pages > 1 ? h("nav", { class: "t-pager", "aria-label": "Standings pages" }, [
      turn("t-prev", "‹", "Previous page", pager.prev, v.page - 1),
      h("span", { class: "t-page", text: pager.text }),
      turn("t-next", "›", "Next page", pager.next, v.page + 1),
      v.me ? turn("t-mine", "My position", "The page with my row", true, null) : null,
      h("span", { class: "muted t-players", text: `${v.players} players` }),
    ]) : null;
    const rows = v.standings.map((r) => h("tr", { "data-player": r.name, class: `${r.player === me ? "mine " : ""}${r.fire ? "on-fire" : ""}` }, [
      h("td", { class: "rank", text: String(r.rank) }), this.playerCell(r), h("td", { class: "rating", text: String(r.rating) }),
      ...(arena ? [h("td", { class: "sheet", title: "Each game's points", text: r.sheet.length ? r.sheet.join(" ") : "–" })] : breaks.map((b) => h("td", { text: scoreText(r.tiebreaks[b] ?? 0) }))),
      h("td", { class: "score", text: scoreText(r.score) }),
    ]));
    this.standings.replaceChildren(h("h3", { text: `Standings${arena ? "" : ` · ${FORMAT_WORDS[v.settings.format]}`}` }),
      h("table", { class: "standings" }, [h("thead", {}, [h("tr", {}, head.map((t) => h("th", { text: t })))]),
        h("tbody", {}, rows.length ? rows : [h("tr", {}, [h("td", { colspan: head.length, class: "empty", text: "Nobody has joined yet." })])])]), nav ?? "");
  }

  private drawPodium(): void {
    const v = this.view!;
    const show = v.status === "finished" && v.podium.length > 0;
    this.podium.hidden = !show;
    if (!show) { this.podium.replaceChildren(); return; }
    const places = v.podium.map((r) => h("div", { class: `place place-${r.rank}`, "data-rank": r.rank }, [
      h("span", { class: "medal", text: String(r.rank) }), h("strong", { text: r.name }), h("span", { class: "muted", text: `${scoreText(r.score)} point${r.score === 1 ? "" : "s"}` })]));
    this.podium.replaceChildren(h("h3", { text: "Podium" }), h("div", { class: "places" }, places));
  }

  private gameLink(p: TournamentPairingView): HTMLElement {
    const mark = (b: boolean) => (b ? berserkMark() : null);
    const a = h("a", { href: `/game/${p.game}`, "data-game": p.game }, [p.white_name, mark(p.white_berserk), " – ", p.black_name, mark(p.black_berserk)]);
    a.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/game/${p.game}`); });
    return a;
  }

  private drawPlaying(): void {
    const v = this.view!;
    const games = gamesBeingPlayed(v.pairings, v.playing, v.standings);
    // The standings shown are one page: the leader's game is known on the first page only.
    const leader = v.page === 1 && v.standings.length > 0 ? v.standings[0].player : null;
    const led = (p: TournamentPairingView) => leader !== null && (p.white === leader || p.black === leader);
    const items = games.map((p, i) => h("li", { class: i === 0 && led(p) ? "leader" : "" }, [this.gameLink(p), i === 0 && led(p) && games.length > 1 ? h("span", { class: "muted", text: " · the leader's game" }) : ""]));
    const more = v.playing_count > games.length && games.length > 0 ? h("p", { class: "muted t-more", text: `The top ${games.length} of ${v.playing_count} games.` }) : "";
    this.playing.hidden = v.status === "finished";
    this.playing.replaceChildren(h("h3", { text: "Games being played" }),
      h("ul", { class: "t-games" }, items.length ? items : [h("li", { class: "empty", text: v.status === "created" ? "Not started yet." : "None right now." })]), more);
  }

  private drawPairings(): void {
    const v = this.view!;
    const arena = v.settings.format === "arena";
    const word = arena ? "Wave" : "Round";
    const round = this.shownRound();
    if (round < 1) {
      this.pairings.replaceChildren(h("h3", { text: "Pairings" }), h("p", { class: "empty", text: "No pairings yet." }));
      return;
    }
    const select = h("select", { name: "t-round", "data-action": "t-round", "aria-label": `${word} shown` },
      roundChoices(v.round, arena).map((c) => h("option", { value: String(c.round), text: c.text, selected: c.round === round })));
    select.addEventListener("change", () => this.chooseRound(Number((select as HTMLSelectElement).value)));
    let games: TournamentPairingView[] | null = null;
    let byes: TournamentByeView[] = [];
    let playing = new Set(v.playing);
    let page = 1, pages = 1, total = 0;
    const read = this.roundRead;
    if (this.fromView()) {
      games = v.pairings; byes = v.byes; total = v.pairings_total;
    } else if (read && read.round === round && read.page === this.roundPage) {
      games = read.pairings; byes = read.byes; playing = new Set(read.playing);
      page = read.page; pages = read.pages; total = read.total;
    } else if (!this.roundAsking && !this.roundError) {
      void this.readRound();
    }
    const turn = (label: string, text: string, to: number, enabled: boolean) => {
      const b = h("button", { type: "button", "data-action": `t-round-${label}`, "aria-label": `${label === "prev" ? "Previous" : "Next"} page of the ${word.toLowerCase()}`, text, disabled: !enabled });
      b.addEventListener("click", () => this.chooseRound(round, to));
      return b;
    };
    const nav = pages > 1 ? h("nav", { class: "t-pager", "aria-label": "Pairings pages" }, [
      turn("prev", "‹", page - 1, page > 1), h("span", { class: "t-page", text: pagerText(page, pages).text }),
      turn("next", "›", page + 1, page < pages), h("span", { class: "muted", text: `${total} games` }),
    ]) : null;
    const body = games === null
      ? h("p", { class: this.roundError ? "error" : "muted", text: this.roundError || "Loading…" })
      : h("ul", {}, [
        ...games.map((p) => h("li", {}, [this.gameLink(p), h("span", { class: "result", text: ` ${p.result ?? (playing.has(p.game) ? "playing" : "…")}` })])),
        ...byes.map((b) => h("li", { class: "muted", text: `${b.name}: bye (${scoreText(b.points)})` })),
        ...(games.length || byes.length ? [] : [h("li", { class: "empty", text: "No games." })]),
      ]);
    this.pairings.replaceChildren(h("div", { class: "t-pairings-head" }, [h("h3", { text: "Pairings" }), select]),
      h("div", { class: "t-round", "data-round": round }, [h("h4", { text: `${word} ${round}` }), body, nav ?? ""]));
  }
}

function breakName(key: string): string {
  return { buchholz_cut1: "Buchholz (cut 1)", sonneborn_berger: "SB", performance: "Perf." }[key] ?? key.replace(/_/g, " ");
}
