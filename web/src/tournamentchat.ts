// The tournament page's chat (`tournament_chat`, docs/protocol.md): the lines the server sends a
// watcher — the tournament's last lines right after the view answering `tournament_watch`, then
// each new line as it is said — at most CHAT_KEPT on screen; for a logged-in registered player
// the form that says one (the error under it: a refusal such as rate_limited); a guest or a
// visitor reads the lines and "Log in to chat". The line and the form are chat.ts's.

import { chatForm, chatLine } from "./chat";
import { errorText } from "./ctx";
import type { PlayerView, TournamentChatLineView } from "./protocol.gen";
import { h } from "./svg";

/** The most lines kept on screen (the oldest dropped first). */
export const CHAT_KEPT = 100;
/** The longest line the server takes (`tournament_chat`'s text). */
export const CHAT_MAX_CHARS = 140;

/** The lines on screen after a `tournament_chat`: `history` (the first after a watch) replaces
 * them, any other appends; the last `kept` stay (pure). */
export function linesAfter<T>(shown: readonly T[], incoming: readonly T[], history: boolean, kept = CHAT_KEPT): T[] {
  const all = history ? [...incoming] : [...shown, ...incoming];
  return all.length > kept ? all.slice(all.length - kept) : all;
}

/** Whether this viewer may say something (a logged-in registered player). */
export function maySay(me: PlayerView | null): boolean {
  return me !== null && !me.guest;
}

export class TournamentChat {
  readonly el: HTMLElement;
  private readonly list = h("ul", { class: "chat-lines", "aria-live": "polite" });
  private readonly error = h("p", { class: "error t-chat-error", role: "alert" });
  private readonly form: HTMLFormElement;
  private readonly login = h("p", { class: "muted t-chat-login", text: "Log in to chat" });
  private lines: TournamentChatLineView[] = [];
  /** The next `tournament_chat` is the history that follows a watch's answer. */
  private history = true;

  /** `say` sends one line (`tournament_chat`; its promise settles with the server's answer). */
  constructor(say: (text: string) => Promise<unknown>) {
    const send = h("button", { type: "submit", class: "primary", "data-action": "t-chat-send", text: "Send" });
    this.form = chatForm(CHAT_MAX_CHARS, (text) => {
      this.error.textContent = "";
      return say(text);
    }, (e) => { this.error.textContent = errorText(e); }, [send]);
    this.el = h("div", { class: "panel chat t-chat" }, [h("h3", { text: "Chat" }), this.list, this.form, this.error, this.login]);
    this.drawFor(null);
  }

  /** The watch was answered: the next lines are the history (they replace those shown). */
  watched(): void {
    this.history = true;
  }

  /** A `tournament_chat` of this tournament. */
  receive(lines: readonly TournamentChatLineView[]): void {
    const atEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 24;
    this.lines = linesAfter(this.lines, lines, this.history);
    const follow = atEnd || this.history;
    this.history = false;
    this.list.replaceChildren(...this.lines.map(chatLine));
    if (follow) this.list.scrollTop = this.list.scrollHeight;
  }

  /** The form for a registered player, "Log in to chat" for anyone else (the form kept, with
   * what was typed, across redraws). */
  drawFor(me: PlayerView | null): void {
    const may = maySay(me);
    this.form.hidden = !may;
    this.login.hidden = may;
    if (!may) this.error.textContent = "";
  }
}
