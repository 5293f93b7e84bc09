// "Play with the computer": a level and a button under the lobby's game form. The variant,
// clock and colour are the form's; the server starts a casual game at once (`challenge_ai`,
// docs/protocol.md) and the client opens it.

import { errorText, type Ctx } from "./ctx";
import { h } from "./svg";
import type { Commands } from "./protocol.gen";
import type { TimeControlView } from "./protocol.gen";

/** The computer's levels: 1 the weakest, 8 the engine's best at the clock (docs/engines.md). */
export const LEVELS = [1, 2, 3, 4, 5, 6, 7, 8];

export interface Terms { variant: string; tc: TimeControlView; colour: NonNullable<Commands["challenge_ai"]["colour"]> }

/** The level select and the button; `terms` reads the form, `error` shows a refusal. */
export function computerControls(ctx: Ctx, terms: () => Terms, error: HTMLElement): HTMLElement {
  const level = h("select", { name: "level" },
    LEVELS.map((n) => h("option", { value: n, text: `Level ${n}` })));
  const button = h("button", { type: "button", name: "computer", text: "Play with the computer" });
  button.addEventListener("click", () => {
    const { variant, tc, colour } = terms();
    error.textContent = "";
    ctx.conn.request("challenge_ai", { variant, tc, colour, level: Number(level.value) })
      .then((ack) => ctx.navigate(`/game/${ack.d.game}`))
      .catch((e) => { error.textContent = errorText(e); });
  });
  return h("div", { class: "buttons computer" }, [h("label", { class: "level" }, [h("span", { text: "Computer level" }), level]), button]);
}

/** A player's name as shown, the computer marked. */
export function shownName(p: { name: string; computer?: boolean }): string {
  return p.computer ? `${p.name} (computer)` : p.name;
}
