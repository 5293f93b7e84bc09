// Time pressure, for the player of a live game: the tab's title says "Your turn" with the
// player's clock (as lichess does), and a warning sound plays once when the player's running
// clock turns low (the clock's red), again for each byoyomi period that turns low.

import type { ClockView } from "./clock";
import { beep } from "./sound";

const TITLE = "Variant Hub";

export class TimePressure {
  /** What the last warning was for: "main" (Fischer or byoyomi main time), a byoyomi period's
   * text ("period 3×10s"), or "" (nothing low since). */
  private warned = "";

  /** Called on every clock redraw; `mine` is the player's clock while it is their turn. */
  update(myTurn: boolean, mine: ClockView | null, running: boolean, sound: boolean): void {
    const title = myTurn ? `Your turn${mine ? ` · ${mine.main}` : ""} · ${TITLE}` : TITLE;
    if (document.title !== title) document.title = title;
    if (!running || mine === null) {
      // Main time that was low still is on the next move (a Fischer increment may lift it, seen
      // then): one warning, not one a move. A byoyomi period is the move's own: the next is new.
      if (this.warned !== "main") this.warned = "";
      return;
    }
    if (!mine.low) { this.warned = ""; return; }
    // Periods count down in the text, so a period used up mid-move warns again.
    const what = mine.inByoyomi ? mine.byoyomi : "main";
    if (what !== this.warned) beep("low", sound);
    this.warned = what;
  }

  /** The game is left: the title goes back to the site's. */
  stop(): void { document.title = TITLE; this.warned = ""; }
}
