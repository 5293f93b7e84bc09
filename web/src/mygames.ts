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

/** The list after a `my_games` answer: the answer's games in its order, but for the games
 * pushed (`my_game`) while the request was out, whose latest push stands. The server reads the
 * answer from the store when the request reaches it, so a push that arrives before the answer
 * may be of a later move than the answer knows (and one of an earlier move is followed by the
 * push of the later one): without this, the answer would take back a turn the page has shown
 * (and the next turn's notification would be missed, the game seeming already the player's). */
export function listAfter(answer: MyGameView[], pushed: ReadonlyMap<string, MyGameView>): { games: Map<string, MyGameView>; order: string[] } {
  const games = new Map(answer.map((g) => [g.game, g]));
  const order = answer.map((g) => g.game);
  for (const [id, g] of pushed) {
    if (g.finished) { games.delete(id); continue; }
    if (!games.has(id)) order.unshift(id);
    games.set(id, g);
  }
  return { games, order: order.filter((id) => games.has(id)) };
}

/** The correspondence games of `after` waiting for the player's move that were not in
 * `before`, or were at another ply (the player moved elsewhere, from another tab or device,
 * and the opponent answered while this page was not connected); a real-time game's turn is
 * never pushed, so `before` cannot tell its change. */
export function newTurns(before: ReadonlyMap<string, MyGameView>, after: ReadonlyMap<string, MyGameView>): MyGameView[] {
  return waiting(after.values()).filter((g) => {
    const was = before.get(g.game);
    return !was?.your_turn || was.plies !== g.plies;
  });
}

function notificationsAvailable(): boolean { return typeof Notification !== "undefined"; }

export class MyGames {
  games = new Map<string, MyGameView>();
  /** Order of the last `my_games` answer (the server's: waiting first); pushed games go first. */
  private order: string[] = [];
  /** The list was read since the player logged in (a reading after that is a reconnection's). */
  private read = false;
  /** The `my_game` pushes received while a `my_games` request is out (by game: the latest). */
  private pushed: Map<string, MyGameView> | null = null;
  private page: TurnsPage | null = null;
  private readonly link = document.getElementById("turns-link")!;
  private readonly count = document.getElementById("turn-count")!;

  constructor(private readonly ctx: Ctx) {}

  /** Logged in (or reconnected): read the list again; guests have none. A game that became
   * the player's turn while the page was not connected (its `my_game` went to a closed
   * socket) is notified now, as its push would have been; the first reading after logging in
   * notifies nothing (the page has just been opened). */
  async refresh(): Promise<void> {
    const me = this.ctx.me;
    this.link.hidden = !me || me.guest;
    if (!me || me.guest) { this.reset(); this.draw(); return; }
    const pushed = new Map<string, MyGameView>();
    this.pushed = pushed;
    try {
      const answer = await this.ctx.conn.request("my_games");
      if (this.pushed !== pushed) return;  // a later reading (a reconnection) or a logout replaced this one
      this.pushed = null;
      const { games, order } = listAfter(answer.d.games, pushed);
      const before = this.games;
      const again = this.read;
      this.games = games;
      this.order = order;
      this.read = true;
      if (again) for (const g of newTurns(before, games)) this.notify(g);
      this.draw();
    } catch (e) {
      if (this.pushed === pushed) this.pushed = null;
      this.page?.error(errorText(e));
    }
  }

  loggedOut(): void { this.link.hidden = true; this.reset(); this.draw(); }

  private reset(): void { this.games.clear(); this.order = []; this.read = false; this.pushed = null; }

  onMessage(m: Message): void {
    if (m.t !== "my_game") return;
    this.pushed?.set(m.d.game, m.d);
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

  /** `state`: the answer to the player's click (else the browser's setting, read). */
  private drawPermission(state?: NotificationPermission): void {
    if (!notificationsAvailable()) {
      this.permission.replaceChildren(h("p", { class: "muted", text: "This browser has no notifications." }));
      return;
    }
    state ??= Notification.permission;
    if (state === "granted") {
      this.permission.replaceChildren(h("p", { class: "muted notify-on", text: "Browser notifications are on: you are told when it becomes your turn while this site is in another tab." }));
      return;
    }
    if (state === "denied") {
      this.permission.replaceChildren(h("p", { class: "muted", text: "Notifications are blocked for this site in the browser's settings." }));
      return;
    }
    const button = h("button", { type: "button", class: "primary", name: "notify", text: "Notify me in this browser when it is my turn" });
    button.addEventListener("click", () => { void Notification.requestPermission().then((answer) => this.drawPermission(answer)); });
    this.permission.replaceChildren(button);
  }
}
