// A game's chat: the lines of its room (the players' or the spectators'), and the form that says
// one (the `chat` command).

import type { ChatLineView } from "./protocol.gen";
import { h } from "./svg";

export class GameChat {
  readonly el: HTMLElement;
  private readonly list = h("ul", { class: "chat-lines" });

  /** `say` sends one line (its promise settles with the server's answer); `fail` shows a refusal. */
  constructor(say: (text: string) => Promise<unknown>, fail: (e: unknown) => void) {
    const input = h("input", { type: "text", maxlength: 300, placeholder: "Say something…", "aria-label": "Chat message" });
    const form = h("form", { class: "chat-form" }, [input]);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      say(text).then(() => { input.value = ""; }, (err) => fail(err));
    });
    this.el = h("div", { class: "chat", hidden: true }, [h("h3", { text: "Chat" }), this.list, form]);
  }

  /** Show the room's lines, the last in view; the header says whose chat it is. */
  draw(lines: readonly ChatLineView[], spectator: boolean): void {
    this.list.replaceChildren(...lines.map((l) => h("li", {}, [h("b", { text: `${l.user}: ` }), l.text])));
    this.list.scrollTop = this.list.scrollHeight;
    const header = this.el.querySelector("h3");
    if (header) header.textContent = spectator ? "Spectators' chat" : "Players' chat";
  }
}
