// A game's chat: the lines of its room (the players' or the spectators'), and the form that says
// one (the `chat` command). Its pieces — a line, the form — are the tournament chat's too
// (tournamentchat.ts).

import type { ChatLineView } from "./protocol.gen";
import { h } from "./svg";

/** One line of a chat: the speaker in bold, then the text (a text node: never markup). */
export function chatLine(line: { user: string; text: string }): HTMLElement {
  return h("li", {}, [h("b", { text: `${line.user}: ` }), line.text]);
}

/** The form that says a line: the input (at most `maxlength` characters) and `extra` controls
 * after it (a Send button). A submit sends the trimmed text (nothing when blank, nothing while a
 * line is on its way: a double tap says it once) with `say`; the input is cleared when the
 * server took it, a refusal goes to `fail`. */
export function chatForm(maxlength: number, say: (text: string) => Promise<unknown>, fail: (e: unknown) => void, extra: HTMLElement[] = []): HTMLFormElement {
  const input = h("input", { type: "text", name: "text", maxlength, placeholder: "Say something…", "aria-label": "Chat message", autocomplete: "off" });
  const form = h("form", { class: "chat-form" }, [input, ...extra]);
  let sending = false;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || sending) return;
    sending = true;
    say(text).then(() => { input.value = ""; }, (err) => fail(err)).finally(() => { sending = false; });
  });
  return form;
}

/** Show `lines` in `list`, the last in view. */
export function drawLines(list: HTMLElement, lines: readonly { user: string; text: string }[]): void {
  list.replaceChildren(...lines.map(chatLine));
  list.scrollTop = list.scrollHeight;
}

export class GameChat {
  readonly el: HTMLElement;
  private readonly list = h("ul", { class: "chat-lines" });

  /** `say` sends one line (its promise settles with the server's answer); `fail` shows a refusal. */
  constructor(say: (text: string) => Promise<unknown>, fail: (e: unknown) => void) {
    this.el = h("div", { class: "chat", hidden: true }, [h("h3", { text: "Chat" }), this.list, chatForm(300, say, fail)]);
  }

  /** Show the room's lines, the last in view; the header says whose chat it is. */
  draw(lines: readonly ChatLineView[], spectator: boolean): void {
    drawLines(this.list, lines);
    const header = this.el.querySelector("h3");
    if (header) header.textContent = spectator ? "Spectators' chat" : "Players' chat";
  }
}
