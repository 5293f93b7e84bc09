// Players' names in lists and headers: a bot account (the Bot API, docs/bots.md) carries
// lichess's "BOT" title before its name, wherever the server's view says `bot: true`.

import { h } from "./svg";

/** The title before a bot's name (with its space), or nothing. */
export function botTitle(p: { bot?: boolean }): (HTMLElement | string)[] {
  return p.bot ? [h("span", { class: "bot-title", title: "A bot account: a program playing through the Bot API", text: "BOT" }), " "] : [];
}

/** The name with its title, as children of an element. */
export function titledName(p: { name: string; bot?: boolean }, name: string = p.name): (HTMLElement | string)[] {
  return [...botTitle(p), name];
}
