// Notices over any page (bottom of the screen): a challenge received away from the lobby, with
// Accept and Decline; a challenge withdrawn or cancelled. Each has a key, so the event that ends
// a challenge removes its notice; informational ones go by themselves after a while.

import { h } from "./svg";

export class Notices {
  private readonly box = h("div", { class: "notices", "aria-live": "polite" });
  private readonly timers = new Map<string, number>();

  constructor() { document.body.append(this.box); }

  /** Show (or replace) the notice `key`; `ms` > 0 removes it after that long. */
  show(key: string, content: (Node | string)[], ms = 0, kind = "info"): HTMLElement {
    this.remove(key);
    const close = h("button", { type: "button", class: "close", "aria-label": "Dismiss", text: "×" });
    close.addEventListener("click", () => this.remove(key));
    const el = h("div", { class: `notice ${kind}`, "data-notice": key, role: "status" }, [h("div", { class: "body" }, content), close]);
    this.box.append(el);
    if (ms > 0) this.timers.set(key, window.setTimeout(() => this.remove(key), ms));
    return el;
  }

  remove(key: string): void {
    window.clearTimeout(this.timers.get(key));
    this.timers.delete(key);
    this.box.querySelector(`[data-notice="${CSS.escape(key)}"]`)?.remove();
  }
}
