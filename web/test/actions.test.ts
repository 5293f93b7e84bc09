import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ActionBar, type ActionState } from "../src/actions";
import type { AckedCommand } from "../src/net";

/** Just enough of an element for the action bar: attributes, text, children and clicks. */
class FakeElement {
  readonly attrs = new Map<string, string>();
  children: FakeElement[] = [];
  textContent = "";
  private readonly clicks: (() => void)[] = [];

  constructor(readonly tag: string) {}
  setAttribute(k: string, v: string): void { this.attrs.set(k, v); }
  append(c: FakeElement): void { this.children.push(c); }
  replaceChildren(...cs: FakeElement[]): void { this.children = cs; }
  addEventListener(type: string, f: () => void): void { if (type === "click") this.clicks.push(f); }
  click(): void { for (const f of this.clicks) f(); }
}

const STATE: ActionState = {
  me: "first", status: "started", live: true, bothMoved: true, myTurn: true, rated: true,
  drawOffers: false, drawClaim: null, drawClaims: false, myMoves: 1, tournament: false, berserk: false, offers: { draw: null, takeback: null, rematch: null },
  opponentAway: null, pass: false, zoomable: false, nameOf: (side) => side,
};

/** A bar rendered for `state` and the commands its taps sent. */
function bar(state: ActionState = STATE): { actions: () => string[]; button: (a: string) => FakeElement | undefined; sent: AckedCommand[] } {
  const sent: AckedCommand[] = [];
  const b = new ActionBar({ command: (t) => sent.push(t), pass: () => {}, flip: () => {}, zoom: () => false });
  b.render(state);
  const shown = () => (b.buttons as unknown as FakeElement).children;
  return {
    actions: () => shown().map((e) => e.attrs.get("data-action") ?? ""),
    button: (a) => shown().find((e) => e.attrs.get("data-action") === a),
    sent,
  };
}

describe("resign and abort ask first", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("document", { createElement: (tag: string) => new FakeElement(tag) });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it("sends resign on the second tap within the window, nothing on the first", () => {
    const { actions, button, sent } = bar();
    expect(actions()).toEqual(["resign", "flip"]);
    button("resign")!.click();
    expect(actions()).toEqual(["resign-cancel", "resign-confirm", "flip"]);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(7900);
    button("resign-confirm")!.click();
    expect(sent).toEqual(["resign"]);
    expect(actions()).toEqual(["resign", "flip"]);
  });

  it("gives the confirm up after 8 s: the tap after it only asks again", () => {
    const { actions, button, sent } = bar();
    button("resign")!.click();
    vi.advanceTimersByTime(7999);
    expect(actions()).toContain("resign-confirm");
    vi.advanceTimersByTime(1);
    expect(actions()).toEqual(["resign", "flip"]);
    button("resign")!.click();   // the same spot, tapped again: a new question, not a resignation
    expect(sent).toEqual([]);
    expect(actions()).toEqual(["resign-cancel", "resign-confirm", "flip"]);
  });

  it("starts the window again when asked again after a cancel", () => {
    const { actions, button, sent } = bar();
    button("resign")!.click();
    vi.advanceTimersByTime(5000);
    button("resign-cancel")!.click();
    expect(actions()).toEqual(["resign", "flip"]);
    button("resign")!.click();
    vi.advanceTimersByTime(5000);   // 10 s after the first tap, 5 s after the second
    button("resign-confirm")!.click();
    expect(sent).toEqual(["resign"]);
  });

  it("asks the same before an abort", () => {
    const { actions, button, sent } = bar({ ...STATE, bothMoved: false });
    button("abort")!.click();
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(8000);
    expect(actions()).toEqual(["abort", "flip"]);
    button("abort")!.click();
    button("abort-confirm")!.click();
    expect(sent).toEqual(["abort"]);
  });
});

describe("a tournament game", () => {
  const cup = { ...STATE, rated: false, tournament: true };
  beforeEach(() => {
    vi.stubGlobal("window", globalThis);
    vi.stubGlobal("document", { createElement: (tag: string) => new FakeElement(tag) });
  });
  afterEach(() => vi.unstubAllGlobals());
  it("offers Resign from the start, never Abort, no takeback and no rematch", () => {
    expect(bar({ ...cup, bothMoved: false, myMoves: 0 }).actions()).toEqual(["resign", "flip"]);
    expect(bar(cup).actions()).toEqual(["resign", "flip"]);
    expect(bar({ ...cup, status: "finished" }).actions()).toEqual(["flip"]);
    expect(bar({ ...STATE, rated: false, bothMoved: false, myMoves: 0 }).actions()).toEqual(["abort", "flip"]);
  });
  it("offers Berserk when the game view says the player may, and sends it", () => {
    const b = bar({ ...cup, bothMoved: false, myMoves: 0, berserk: true });
    expect(b.actions()).toEqual(["resign", "berserk", "flip"]);
    b.button("berserk")!.click();
    expect(b.sent).toEqual(["berserk"]);
  });
});
