// The lobby: the seek form (every option of the protocol), the live seek list, challenges,
// the players online and the live games list (both refreshed while the lobby is open).

import { tcText } from "./clock";
import { computerControls } from "./computer";
import { errorText, type Ctx } from "./ctx";
import type { Message } from "./net";
import type { ChallengeView, Commands, GameSummaryView, SeekView, TimeControlView, WhoPlayerView } from "./protocol.gen";
import { h } from "./svg";
import { titledName } from "./names";
import { challengeColour, readerColour, sideTitle } from "./words";

/** A challenge as its two players read it: who, what, and the side the reader gets. */
export function challengeText(c: ChallengeView, ctx: Ctx): string {
  const v = ctx.variants.get(c.variant);
  const who = c.to.id === ctx.me?.id ? `${c.from.name} challenges you` : `You challenge ${c.to.name}`;
  return `${who}: ${v?.title ?? c.variant}, ${tcText(c.tc)}, ${c.rated ? "rated" : "casual"}, ${challengeColour(c, ctx.me?.id, v)}`;
}

type Colour = NonNullable<Commands["seek"]["colour"]>;

/** A seek's side for its reader: "you play gote" ("you play" is the column's header, spelt out
 * on a phone where the header is hidden), or "random". */
function seekSide(text: string): (HTMLElement | string)[] {
  const side = text.startsWith("you play ") ? text.slice("you play ".length) : null;
  return side === null ? ["random"] : [h("span", { class: "you", text: "you play " }), side];
}

export class Lobby {
  readonly el: HTMLElement;
  private seeks = new Map<number, SeekView>();
  private live: GameSummaryView[] = [];
  private online: WhoPlayerView[] = [];
  private timer = 0;
  private readonly seekList = h("tbody");
  private readonly challengeBox = h("div", { class: "challenges" });
  private readonly liveBox = h("ul", { class: "live-games" });
  private readonly playersBox = h("ul", { class: "players" });
  private readonly formError = h("p", { class: "error", role: "alert" });
  private readonly listError = h("p", { class: "error", role: "alert" });
  private form!: HTMLFormElement;

  constructor(private readonly ctx: Ctx) {
    this.el = h("section", { class: "lobby" }, [
      h("div", { class: "panel seek-panel" }, [h("h2", { text: "Create a game" }), this.buildForm(), this.formError]),
      h("div", { class: "panel" }, [
        h("h2", { text: "Open seeks" }),
        h("table", { class: "seeks" }, [h("thead", {}, [h("tr", {}, ["Player", "Rating", "Variant", "Time", "Mode", "You play", ""].map((c) => h("th", { text: c })))]), this.seekList]),
        this.listError,
        h("h2", { text: "Challenges" }), this.challengeBox,
      ]),
      h("div", { class: "panel" }, [h("h2", { text: "Online now" }), this.playersBox, h("h2", { text: "Games being played" }), this.liveBox]),
    ]);
  }

  /** The lobby is on screen: subscribe to seeks and refresh the live games and who is online. */
  async enter(): Promise<void> {
    try {
      const answer = await this.ctx.conn.request("sought", { watch: true });
      this.seeks = new Map(answer.d.seeks.map((s) => [s.id, s]));
    } catch (e) { this.listError.textContent = errorText(e); }
    this.draw();
    await this.refreshLive();
    window.clearInterval(this.timer);
    this.timer = window.setInterval(() => void this.refreshLive(), 5000);  // `who` has no subscription
  }

  leave(): void {
    window.clearInterval(this.timer);
    if (this.ctx.conn.open) this.ctx.conn.request("sought", { watch: false }).catch(() => {});
  }

  /** A lobby message; `gone` is the challenge a `challenge_*` message ended (main.ts has
   * removed it from the context already). */
  onMessage(m: Message, gone?: ChallengeView): void {
    switch (m.t) {
      case "seek_added": this.seeks.set(m.d.id, m.d); break;
      case "seek_removed": this.seeks.delete(m.d.id); break;
      case "challenge": case "challenge_withdrawn": case "challenge_accepted": break;
      case "challenge_declined": this.note(gone, `declined${m.d.reason ? ": " + m.d.reason : ""}`); break;
      case "challenge_cancelled": this.note(gone, `cancelled (${m.d.reason})`); break;
      default: return;
    }
    this.draw();
  }

  /** A challenge ended. */
  private note(gone: ChallengeView | undefined, text: string): void {
    if (gone) this.listError.textContent = `Challenge ${gone.from.name} → ${gone.to.name} ${text}`;
  }

  private async refreshLive(): Promise<void> {
    if (!this.ctx.conn.open) return;
    try {
      const [games, who] = await Promise.all([
        this.ctx.conn.request("games", { status: "started", limit: 20 }),
        this.ctx.conn.request("who"),
      ]);
      this.live = games.d.games;
      this.online = who.d.players;
      this.drawLive();
    } catch { /* the next refresh retries */ }
  }

  private buildForm(): HTMLFormElement {
    const variants = [...this.ctx.variants.values()];
    const field = (label: string, input: HTMLElement) => h("label", {}, [h("span", { text: label }), input]);
    const num = (name: string, value: number, min: number, max: number) => h("input", { type: "number", name, value, min, max, required: true });
    const variant = h("select", { name: "variant" }, variants.map((v) => h("option", { value: v.name, text: v.title })));
    const kind = h("select", { name: "kind" }, [h("option", { value: "fischer", text: "Fischer (increment)" }), h("option", { value: "byoyomi", text: "Byoyomi" }),
      h("option", { value: "correspondence", text: "Correspondence (days per move)" }), h("option", { value: "unlimited", text: "Correspondence, no clock" })]);
    const fischer = h("div", { class: "tc fischer" }, [field("Minutes", num("base_min", 5, 0, 180)), field("+ seconds", num("base_sec", 0, 0, 59)), field("Increment (s)", num("inc", 3, 0, 180))]);
    const byoyomi = h("div", { class: "tc byoyomi", hidden: true }, [field("Main (min)", num("main_min", 10, 0, 180)), field("+ seconds", num("main_sec", 0, 0, 59)), field("Period (s)", num("period", 30, 1, 600)), field("Periods", num("periods", 3, 1, 10))]);
    const days = h("select", { name: "days" }, [1, 2, 3, 5, 7, 10, 14].map((d) => h("option", { value: d, text: `${d} ${d === 1 ? "day" : "days"}`, selected: d === 3 })));
    const corr = h("div", { class: "tc correspondence", hidden: true }, [field("Per move", days)]);
    // The colour choice in the variant's words (Sente / Gote, White / Black…); its values stay.
    const colour = h("select", { name: "colour" }, [["random", "Random"], ["first", ""], ["second", ""]].map(([v, t]) => h("option", { value: v, text: t })));
    const syncKind = () => {
      const v = this.ctx.variants.get(variant.value);
      for (const side of ["first", "second"] as const) colour.querySelector<HTMLOptionElement>(`option[value="${side}"]`)!.textContent = sideTitle(v, side);
      const byo = kind.querySelector<HTMLOptionElement>('option[value="byoyomi"]')!;
      byo.disabled = !v?.byoyomi;
      if (!v?.byoyomi) kind.value = "fischer";
      fischer.hidden = kind.value !== "fischer";
      byoyomi.hidden = kind.value !== "byoyomi";
      corr.hidden = kind.value !== "correspondence";
    };
    variant.addEventListener("change", syncKind);
    kind.addEventListener("change", syncKind);
    const guest = this.ctx.me?.guest ?? true;
    const form = h("form", { class: "seek-form" }, [
      field("Variant", variant), field("Clock", kind), fischer, byoyomi, corr,
      h("label", { class: "check" }, [h("input", { type: "checkbox", name: "rated", disabled: guest }), h("span", { text: guest ? "Rated (registered players only)" : "Rated" })]),
      field("Colour", colour),
      h("div", { class: "range" }, [field("Rating from", h("input", { type: "number", name: "range_min", min: 0, max: 4000, placeholder: "any" })), field("to", h("input", { type: "number", name: "range_max", min: 0, max: 4000, placeholder: "any" }))]),
      h("label", { class: "check" }, [h("input", { type: "checkbox", name: "manual" }), h("span", { text: "Let me accept each opponent (manual)" })]),
      h("div", { class: "buttons" }, [h("button", { type: "submit", class: "primary", name: "seek", text: "Seek" }),
        h("input", { type: "text", name: "opponent", placeholder: "player name", "aria-label": "Opponent to challenge" }),
        h("button", { type: "button", name: "challenge", text: "Challenge" })]),
      computerControls(this.ctx, () => this.terms(), this.formError),
      h("p", { class: "muted help first-move-help", text: "A new game is aborted if a player makes no first move in time: the game page counts the seconds down (\"28 seconds to make your first move\"), with a beep near the end." }),
    ]);
    form.addEventListener("submit", (e) => { e.preventDefault(); void this.seek(); });
    form.querySelector<HTMLButtonElement>('button[name="challenge"]')!.addEventListener("click", () => void this.challenge());
    this.form = form;
    syncKind();
    return form;
  }

  private terms(): { variant: string; tc: TimeControlView; rated: boolean; colour: Colour } {
    const f = new FormData(this.form);
    const n = (k: string) => Number(f.get(k) ?? 0);
    const kind = f.get("kind");
    const tc: TimeControlView = kind === "byoyomi"
      ? { kind: "byoyomi", main_s: n("main_min") * 60 + n("main_sec"), period_s: n("period"), periods: n("periods") }
      : kind === "correspondence" ? { kind: "correspondence", days: n("days") }
      : kind === "unlimited" ? { kind: "unlimited" }
      : { kind: "fischer", base_s: n("base_min") * 60 + n("base_sec"), inc_s: n("inc") };
    return { variant: String(f.get("variant")), tc, rated: f.get("rated") === "on", colour: String(f.get("colour")) as Colour };
  }

  private async seek(): Promise<void> {
    const f = new FormData(this.form);
    const lo = String(f.get("range_min") ?? ""), hi = String(f.get("range_max") ?? "");
    const range: [number, number] | null = lo || hi ? [Number(lo || 0), Number(hi || 4000)] : null;
    this.formError.textContent = "";
    try {
      const ack = await this.ctx.conn.request("seek", { ...this.terms(), range, manual: f.get("manual") === "on" });
      if (ack.d.game) this.ctx.navigate(`/game/${ack.d.game}`);
    } catch (e) { this.formError.textContent = errorText(e); }
  }

  private async challenge(name?: string): Promise<void> {
    const f = new FormData(this.form);
    const to = name ?? String(f.get("opponent") ?? "").trim();
    this.formError.textContent = "";
    if (!to) { this.formError.textContent = "Name the player to challenge."; return; }
    try {
      await this.ctx.conn.request("match", { to, ...this.terms() });
    } catch (e) { this.formError.textContent = errorText(e); }
  }

  private async act(t: "play" | "unseek" | "accept" | "decline" | "withdraw", d: Commands[typeof t]): Promise<void> {
    this.listError.textContent = "";
    try {
      const ack = await this.ctx.conn.request(t, d);
      if (ack.d.game) this.ctx.navigate(`/game/${ack.d.game}`);
      if (t === "unseek") for (const id of ack.d.removed ?? []) this.seeks.delete(id);
      if (t === "withdraw" || t === "decline" || t === "accept") this.ctx.challenges.delete((d as { id: number }).id);
      this.draw();
    } catch (e) { this.listError.textContent = errorText(e); }
  }

  private draw(): void {
    const me = this.ctx.me;
    const rows = [...this.seeks.values()].map((s) => {
      const mine = s.player.id === me?.id;
      const button = mine
        ? h("button", { type: "button", class: "cancel", text: "Cancel" })
        : h("button", { type: "button", class: "accept", text: s.manual ? "Ask" : "Play" });
      button.addEventListener("click", () => void (mine ? this.act("unseek", { id: s.id }) : this.act("play", { id: s.id })));
      const title = this.ctx.variants.get(s.variant)?.title ?? s.variant;
      return h("tr", { "data-seek": s.id, class: mine ? "mine" : "" }, [
        h("td", {}, titledName(s.player)), h("td", { text: s.player.rating == null ? "–" : `${s.player.rating}${s.player.provisional ? "?" : ""}` }),
        h("td", { text: title }), h("td", { text: `${tcText(s.tc)} (${s.speed})` }),
        h("td", { text: (s.rated ? "rated" : "casual") + (s.range ? ` ${s.range[0]}–${s.range[1]}` : "") + (s.manual ? ", manual" : "") }),
        h("td", { class: "colour" }, seekSide(readerColour(s.colour, mine, this.ctx.variants.get(s.variant)))), h("td", {}, [button]),
      ]);
    });
    this.seekList.replaceChildren(...(rows.length ? rows : [h("tr", {}, [h("td", { colspan: 7, class: "empty", text: "No open seeks: create one." })])]));
    const items = [...this.ctx.challenges.values()].map((c) => {
      const incoming = c.to.id === me?.id;
      const text = challengeText(c, this.ctx);
      const buttons: HTMLElement[] = [];
      if (incoming) {
        const accept = h("button", { type: "button", class: "accept", text: "Accept" });
        accept.addEventListener("click", () => void this.act("accept", { id: c.id }));
        const reason = h("input", { type: "text", placeholder: "reason (optional)", maxlength: 140 });
        const decline = h("button", { type: "button", class: "decline", text: "Decline" });
        decline.addEventListener("click", () => void this.act("decline", reason.value.trim() ? { id: c.id, reason: reason.value.trim() } : { id: c.id }));
        buttons.push(accept, decline, reason);
      } else {
        const withdraw = h("button", { type: "button", class: "withdraw", text: "Withdraw" });
        withdraw.addEventListener("click", () => void this.act("withdraw", { id: c.id }));
        buttons.push(withdraw);
      }
      return h("div", { class: "challenge", "data-challenge": c.id }, [h("span", { text }), ...buttons]);
    });
    this.challengeBox.replaceChildren(...(items.length ? items : [h("p", { class: "empty", text: "None." })]));
    this.drawPlayers();
  }

  private drawLive(): void {
    const items = this.live.map((g) => {
      const a = h("a", { href: `/game/${g.id}` }, [`${this.ctx.variants.get(g.variant)?.title ?? g.variant}: `, ...titledName(g.first), " – ", ...titledName(g.second), g.plies === null ? "" : `, move ${Math.floor(g.plies / 2) + 1} (${g.plies} plies)`]);
      a.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/game/${g.id}`); });
      return h("li", { "data-game": g.id }, [a]);
    });
    this.liveBox.replaceChildren(...(items.length ? items : [h("li", { class: "empty", text: "No game is being played." })]));
    this.drawPlayers();
  }

  /** The players online (the server's `who` list), each with what they do and a Challenge button. */
  private drawPlayers(): void {
    const seeking = new Set([...this.seeks.values()].map((s) => s.player.name));
    // the computer is always online: the form's "Play with the computer" offers it
    const others = this.online.filter((p) => p.name !== this.ctx.me?.name && !p.computer);
    const items = others.map((p) => {
      const what = p.game ? "playing" : seeking.has(p.name) ? "seeking" : p.guest ? "guest" : "online";
      const link = h("a", { href: `/player/${encodeURIComponent(p.name)}` }, titledName(p));
      link.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/player/${encodeURIComponent(p.name)}`); });
      const b = h("button", { type: "button", class: "challenge-player", text: "Challenge", disabled: p.game !== null });
      b.addEventListener("click", () => void this.challenge(p.name));
      return h("li", { "data-player": p.name }, [link, h("span", { class: "muted", text: ` ${what} ` }), b]);
    });
    this.playersBox.replaceChildren(...(items.length ? items : [h("li", { class: "empty", text: "Nobody else is online right now." })]));
  }
}
