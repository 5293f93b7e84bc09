// Time pressure, for the player of a live game: the tab's title says "Your turn" with the
// player's clock (as lichess does), and a warning sound plays once when the player's running
// clock turns low (the clock's red), again for each byoyomi period that turns low.

import type { ClockView } from "./clock";
import { beep } from "./sound";

const TITLE = "Variant Hub";

export class TimePressure {
  private wasLow = false;
  private period = "";

  /** Called on every clock redraw; `mine` is the player's clock while it is their turn. */
  update(myTurn: boolean, mine: ClockView | null, running: boolean, sound: boolean): void {
    const title = myTurn ? `Your turn${mine ? ` · ${mine.main}` : ""} · ${TITLE}` : TITLE;
    if (document.title !== title) document.title = title;
    const low = running && mine !== null && mine.low;
    const period = mine?.inByoyomi ? mine.byoyomi : "";
    if (low && (!this.wasLow || period !== this.period)) beep("low", sound);
    this.wasLow = low;
    this.period = period;
  }

  /** The game is left: the title goes back to the site's. */
  stop(): void { document.title = TITLE; this.wasLow = false; }
}
