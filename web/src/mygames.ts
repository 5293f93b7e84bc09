// The player's own games (docs/protocol.md, "Your games and notifications"): the "your turn"
// list from `my_games`, kept up to date by the `my_game` pushes of correspondence games, the
// count in the header on every page, the /turns page, and a browser notification when it
// becomes the player's turn while this page is in another tab (the Notifications API; the
// permission is asked only when the player presses the page's button).

import { tcText } from "./clock";
import type { Ctx } from "./ctx";
import { errorText } from "./ctx";
import type { Message } from "./net";
import type { MyGameView } from "./protocol.gen";
import { h } from "./svg";
import { sideWord } from "./words";

/** Games waiting for the player's move that the header counts: correspondence games (a
 * real-time game's turn changes every few seconds, and its player is at the board). */
export function waiting(games: Iterable<MyGameView>): MyGameView[] {
  return [...games].filter((g) => g.your_turn && g.speed === "correspondence");
}

/** The notification's words for a game that became the player's turn. */
export function turnNotice(g: MyGameView, title: string): { title: string; body: string } {
  return { title: `Your turn against ${g.opponent}`, body: `${title} · move ${g.plies + 1}` };
}

function notificationsAvailable(): boolean { return typeof Notification !== "undefined"; }

export class MyGames {
  games = new Map<string, MyGameView>();
  /** Order of the last `my_games` answer (the server's: waiting first); pushed games go first. */
  private order: string[] = [];
  private page: TurnsPage | null = null;
  private readonly link = document.getElementById("turns-link")!;
  private readonly count = document.getElementById("turn-count")!;

  constructor(private readonly ctx: Ctx) {}

  /** Logged in (or reconnected): read the list again; guests have none. */
  async refresh(): Promise<void> {
    const me = this.ctx.me;
    this.link.hidden = !me || me.guest;
    if (!me || me.guest) { this.games.clear(); this.draw(); return; }
    try {
      const answer = await this.ctx.conn.request("my_games");
      this.games = new Map(answer.d.games.map((g) => [g.game, g]));
      this.order = answer.d.games.map((g) => g.game);
      this.draw();
    } catch (e) { this.page?.error(errorText(e)); }
  }

  loggedOut(): void { this.link.hidden = true; this.games.clear(); this.draw(); }

  onMessage(m: Message): void {
    if (m.t !== "my_game") return;
    const before = this.games.get(m.d.game);
    if (m.d.finished) this.games.delete(m.d.game);
    else {
      this.games.set(m.d.game, m.d);
      if (!this.order.includes(m.d.game)) this.order.unshift(m.d.game);
    }
    if (m.d.your_turn && !before?.your_turn) this.notify(m.d);
    this.draw();
  }

  /** The page /turns is shown (or left: null). */
  show(page: TurnsPage | null): void { this.page = page; this.draw(); }

  list(): MyGameView[] {
    const all = this.order.map((id) => this.games.get(id)).filter((g): g is MyGameView => g !== undefined);
    return [...all.filter((g) => g.your_turn), ...all.filter((g) => !g.your_turn)];
  }

  private draw(): void {
    const n = waiting(this.games.values()).length;
    this.count.textContent = String(n);
    this.count.hidden = n === 0;
    this.link.setAttribute("aria-label", n ? `Your turn in ${n} game${n === 1 ? "" : "s"}` : "Your games");
    this.page?.draw(this.list());
  }

  /** A browser notification, when the player allowed them and this page is not in view. */
  private notify(g: MyGameView): void {
    if (!notificationsAvailable() || Notification.permission !== "granted") return;
    if (document.visibilityState === "visible") return;
    const words = turnNotice(g, this.ctx.variants.get(g.variant)?.title ?? g.variant);
    const note = new Notification(words.title, { body: words.body, tag: `turn-${g.game}` });
    note.onclick = () => { window.focus(); this.ctx.navigate(`/game/${g.game}`); note.close(); };
  }
}

/** The /turns page: the games waiting for the player's move, then their other running games,
 * and the button that turns browser notifications on. */
export class TurnsPage {
  readonly el: HTMLElement;
  private readonly waitingList = h("ul", { class: "my-games waiting" });
  private readonly otherList = h("ul", { class: "my-games others" });
  private readonly note = h("p", { class: "error", role: "alert" });
  private readonly permission = h("div", { class: "notify-permission" });

  constructor(private readonly ctx: Ctx) {
    this.el = h("section", { class: "turns panel" }, [
      h("h2", { text: "Your turn" }), this.waitingList,
      h("h2", { text: "Your other games" }), this.otherList,
      this.note, this.permission,
    ]);
    this.drawPermission();
  }

  error(text: string): void { this.note.textContent = text; }

  draw(games: MyGameView[]): void {
    this.note.textContent = "";
    const row = (g: MyGameView) => {
      const v = this.ctx.variants.get(g.variant);
      const link = h("a", { href: `/game/${g.game}`, class: "game-link", text: `${v?.title ?? g.variant} against ${g.opponent}` });
      link.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/game/${g.game}`); });
      const you = sideWord(v, g.side);
      const detail = `${tcText(g.tc)} · ${g.rated ? "rated" : "casual"} · you play ${you} · move ${g.plies + 1}`;
      return h("li", { "data-game": g.game, class: g.your_turn ? "your-turn" : "" }, [link, h("span", { class: "muted", text: detail })]);
    };
    const mine = games.filter((g) => g.your_turn);
    const others = games.filter((g) => !g.your_turn);
    this.waitingList.replaceChildren(...(mine.length ? mine.map(row) : [h("li", { class: "muted", text: "No game is waiting for your move." })]));
    this.otherList.replaceChildren(...(others.length ? others.map(row) : [h("li", { class: "muted", text: "None." })]));
  }

  private drawPermission(): void {
    if (!notificationsAvailable()) {
      this.permission.replaceChildren(h("p", { class: "muted", text: "This browser has no notifications." }));
      return;
    }
    const state = Notification.permission;
    if (state === "granted") {
      this.permission.replaceChildren(h("p", { class: "muted notify-on", text: "Browser notifications are on: you are told when it becomes your turn while this site is in another tab." }));
      return;
    }
    if (state === "denied") {
      this.permission.replaceChildren(h("p", { class: "muted", text: "Notifications are blocked for this site in the browser's settings." }));
      return;
    }
    const button = h("button", { type: "button", class: "primary", name: "notify", text: "Notify me in this browser when it is my turn" });
    button.addEventListener("click", () => { void Notification.requestPermission().then(() => this.drawPermission()); });
    this.permission.replaceChildren(button);
  }
}
