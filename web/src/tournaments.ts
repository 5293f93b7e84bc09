// The tournaments page (/tournaments): upcoming, running and finished tournaments (the server's
// `tournament_list` of each status, refreshed while the page is open) and the create form (every option of
// `tournament_create`: format, variant, Fischer or byoyomi clock, rated, a start time or "when
// N have joined", duration or rounds, password, minimum rating, bots, the computer, berserk).

import { errorText, type Ctx } from "./ctx";
import { h } from "./svg";
import type { TournamentSummaryView } from "./protocol.gen";
import { byStatus, createCommand, STATUS_WORDS, termsText, whenText, type CreateFields, type TournamentStatus } from "./tourney";

const REFRESH_MS = 5000;

export class TournamentsPage {
  readonly el: HTMLElement;
  private readonly lists: Record<TournamentStatus, HTMLElement> = {
    created: h("ul", { class: "tournaments", "data-status": "created" }),
    started: h("ul", { class: "tournaments", "data-status": "started" }),
    finished: h("ul", { class: "tournaments", "data-status": "finished" }),
  };
  private readonly listError = h("p", { class: "error", role: "alert" });
  private readonly formError = h("p", { class: "error", role: "alert" });
  private listed: TournamentSummaryView[] = [];
  private timer = 0;
  private ticker = 0;
  private form!: HTMLFormElement;

  constructor(private readonly ctx: Ctx) {
    const columns = (["started", "created", "finished"] as const).map((s) =>
      h("div", { class: "panel" }, [h("h2", { text: STATUS_WORDS[s] }), this.lists[s]]));
    this.el = h("section", { class: "tournaments-page" }, [
      h("div", { class: "panel create-panel" }, [h("h2", { text: "Create a tournament" }), this.buildForm(), this.formError]),
      h("div", { class: "tournament-lists" }, [...columns, this.listError]),
    ]);
  }

  /** On screen: list now and every few seconds (a listing has no subscription). */
  async enter(): Promise<void> {
    await this.refresh();
    window.clearInterval(this.timer);
    this.timer = window.setInterval(() => void this.refresh(), REFRESH_MS);
    window.clearInterval(this.ticker);
    this.ticker = window.setInterval(() => this.draw(), 1000);  // the countdowns
  }

  leave(): void {
    window.clearInterval(this.timer);
    window.clearInterval(this.ticker);
  }

  private async refresh(): Promise<void> {
    if (!this.ctx.conn.open) return;
    try {
      // One listing per status: many finished tournaments never crowd out the upcoming ones.
      const answers = await Promise.all((["started", "created", "finished"] as const).map((status) => this.ctx.conn.request("tournament_list", { status })));
      this.listed = answers.flatMap((a) => a.d.tournaments);
      this.listError.textContent = "";
      this.draw();
    } catch (e) { this.listError.textContent = errorText(e); }
  }

  private draw(): void {
    const groups = byStatus(this.listed);
    const now = Date.now();
    for (const status of ["created", "started", "finished"] as const) {
      const items = groups[status].map((t) => {
        const s = t.settings;
        const link = h("a", { href: `/tournament/${t.id}`, class: "t-name", text: s.name });
        link.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/tournament/${t.id}`); });
        const countdown = status === "created" ? s.start_at_ms : null;
        return h("li", { "data-tournament": t.id }, [link,
          h("span", { class: "muted t-terms", text: termsText(s, this.ctx.variants.get(s.variant)?.title ?? s.variant) }),
          h("span", { class: "t-when", text: whenText(status, s, countdown, now) })]);
      });
      this.lists[status].replaceChildren(...(items.length ? items : [h("li", { class: "empty", text: "None." })]));
    }
  }

  private buildForm(): HTMLFormElement {
    const field = (label: string, input: HTMLElement, cls = "") => h("label", { class: cls }, [h("span", { text: label }), input]);
    const num = (name: string, value: number | string, min: number, max: number, required = true) =>
      h("input", { type: "number", name, value, min, max, required, placeholder: required ? undefined : "any" });
    const check = (name: string, label: string, checked: boolean) => h("label", { class: "check" }, [h("input", { type: "checkbox", name, checked }), h("span", { text: label })]);
    const format = h("select", { name: "format" }, [["arena", "Arena"], ["swiss", "Swiss"], ["round_robin", "Round robin"], ["double_round_robin", "Double round robin"]].map(([v, t]) => h("option", { value: v, text: t })));
    const variant = h("select", { name: "variant" }, [...this.ctx.variants.values()].map((v) => h("option", { value: v.name, text: v.title })));
    const kind = h("select", { name: "kind" }, [h("option", { value: "fischer", text: "Fischer (increment)" }), h("option", { value: "byoyomi", text: "Byoyomi" })]);
    const fischer = h("div", { class: "tc fischer" }, [field("Minutes", num("base_min", 3, 0, 180)), field("Increment (s)", num("inc", 2, 0, 180))]);
    const byoyomi = h("div", { class: "tc byoyomi", hidden: true }, [field("Main (min)", num("main_min", 5, 0, 180)), field("Period (s)", num("period", 10, 1, 600)), field("Periods", num("periods", 1, 1, 10))]);
    const start = h("select", { name: "start" }, [["in", "In … minutes"], ["at", "At a date and time"], ["joined", "When … players have joined"]].map(([v, t]) => h("option", { value: v, text: t })));
    const startIn = field("Starts in (min)", num("start_in", 10, 0, 10080), "start-in");
    const startAt = field("Starts at (your time)", h("input", { type: "datetime-local", name: "start_at" }), "start-at");
    const startJoined = field("Players to start", num("start_joined", 4, 2, 1000), "start-joined");
    const duration = field("Duration (min)", num("duration_min", 60, 1, 10080), "arena-only");
    const roundsField = field("Rounds", num("rounds", 7, 1, 50), "swiss-only");
    const berserk = h("label", { class: "check arena-only" }, [h("input", { type: "checkbox", name: "berserk", checked: true }), h("span", { text: "Berserk allowed (halve your clock for +1 point)" })]);
    const guest = this.ctx.me?.guest ?? true;
    const sync = () => {
      const v = this.ctx.variants.get(variant.value);
      const byo = kind.querySelector<HTMLOptionElement>('option[value="byoyomi"]')!;
      byo.disabled = !v?.byoyomi;
      if (!v?.byoyomi) kind.value = "fischer";
      fischer.hidden = kind.value !== "fischer";
      byoyomi.hidden = kind.value !== "byoyomi";
      startIn.hidden = start.value !== "in";
      startAt.hidden = start.value !== "at";
      startJoined.hidden = start.value !== "joined";
      duration.hidden = berserk.hidden = format.value !== "arena";
      roundsField.hidden = format.value !== "swiss";
      // Hidden inputs are not checked by the browser's validation.
      for (const el of [startIn, startAt, startJoined, duration, roundsField]) for (const i of el.querySelectorAll("input")) i.disabled = Boolean(el.hidden);
    };
    for (const el of [variant, kind, start, format]) el.addEventListener("change", sync);
    const form = h("form", { class: "tournament-form" }, [
      field("Name", h("input", { type: "text", name: "name", required: true, maxlength: 80, placeholder: "Sunday arena" })),
      h("div", { class: "row2" }, [field("Format", format), field("Variant", variant)]),
      field("Clock", kind), fischer, byoyomi,
      h("div", { class: "row2" }, [field("Start", start), startIn, startAt, startJoined]),
      h("div", { class: "row2" }, [duration, roundsField]),
      h("label", { class: "check" }, [h("input", { type: "checkbox", name: "rated", disabled: guest }), h("span", { text: guest ? "Rated (registered players only)" : "Rated" })]),
      berserk,
      h("details", { class: "more-options" }, [h("summary", { text: "Entry conditions" }),
        field("Password (optional)", h("input", { type: "text", name: "password", maxlength: 128, autocomplete: "off" })),
        h("div", { class: "row2" }, [field("Minimum rating", num("min_rating", "", 0, 4000, false)), field("Most players", num("max_players", "", 2, 1000, false))]),
        check("bots", "Bots may enter", true), check("computer", "The computer may enter", false)]),
      h("div", { class: "buttons" }, [h("button", { type: "submit", class: "primary", name: "create", text: "Create tournament" })]),
    ]);
    form.addEventListener("submit", (e) => { e.preventDefault(); void this.create(); });
    this.form = form;
    sync();
    return form;
  }

  private fields(): CreateFields {
    const f = new FormData(this.form);
    const s = (k: string) => String(f.get(k) ?? "");
    const b = (k: string) => f.get(k) === "on";
    return {
      name: s("name"), format: s("format"), variant: s("variant"), kind: s("kind"),
      base_min: s("base_min"), inc: s("inc"), main_min: s("main_min"), period: s("period"), periods: s("periods"),
      rated: b("rated"), start: s("start"), start_in: s("start_in"), start_at: s("start_at"), start_joined: s("start_joined"),
      duration_min: s("duration_min"), rounds: s("rounds"), password: s("password"), min_rating: s("min_rating"),
      max_players: s("max_players"), bots: b("bots"), computer: b("computer"), berserk: b("berserk"),
    };
  }

  private async create(): Promise<void> {
    this.formError.textContent = "";
    const cmd = createCommand(this.fields(), Date.now());
    if (typeof cmd === "string") { this.formError.textContent = cmd; return; }
    try {
      const ack = await this.ctx.conn.request("tournament_create", cmd);
      const id = (ack.d as { tournament?: string }).tournament;
      if (id) this.ctx.navigate(`/tournament/${id}`);
    } catch (e) { this.formError.textContent = errorText(e); }
  }
}
