// The first-move window (docs/protocol.md, `first_move_ms`): until both sides have moved, the
// side to move must make its first move in time or the server aborts the game. The page counts
// down the server's own figure (never an assumed length) in the clock of the side to move, and
// the player to move hears a warning once, near the end. No figure (`null`): no deadline (both
// have moved, or that side is exempt, as the computer is): nothing is shown. Pure but for the
// warning, which the caller supplies (the game page: a beep).

/** Seconds left when the player to move hears the warning. */
export const WARN_S = 8;

/** What the countdown says: to the player to move, or about the side to move to anyone else. */
export function firstMoveText(seconds: number, mine: boolean): string {
  const unit = seconds === 1 ? "second" : "seconds";
  return mine ? `${seconds} ${unit} to make your first move` : `${seconds} ${unit} to make the first move`;
}

export interface FirstMoveNote { text: string; seconds: number; urgent: boolean }

export class FirstMoveCountdown {
  /** The window's end on this page's clock (`Date.now()`), or null: no window. */
  private deadline: number | null = null;
  private warned = false;

  constructor(private readonly warn: () => void) {}

  /** The server's `first_move_ms` arrived with a snapshot, a move or a takeback. */
  set(ms: number | null | undefined, now = Date.now()): void {
    this.deadline = ms === null || ms === undefined ? null : now + ms;
    this.warned = false;
  }

  /** Whole seconds left (rounded up), or null without a window. */
  secondsLeft(now = Date.now()): number | null {
    return this.deadline === null ? null : Math.max(0, Math.ceil((this.deadline - now) / 1000));
  }

  /** The note for the clock of the side to move (`mine`: the viewer is that side), or null;
   * the player to move is warned once, when WARN_S seconds are left. */
  note(mine: boolean, now = Date.now()): FirstMoveNote | null {
    const seconds = this.secondsLeft(now);
    if (seconds === null) return null;
    const urgent = seconds <= WARN_S;
    if (mine && urgent && !this.warned) {
      this.warned = true;
      this.warn();
    }
    return { text: firstMoveText(seconds, mine), seconds, urgent };
  }
}
