// Short synthesised sounds (Web Audio): no sound files to license or ship.

let ctx: AudioContext | null = null;

/** A sound: a move, a check, the end, low time, the first-move window running out. */
export function beep(kind: "move" | "check" | "end" | "low" | "countdown", enabled: boolean): void {
  if (!enabled) return;
  document.documentElement.dataset.lastSound = kind;  // what was last asked for (tests read it)
  if (typeof AudioContext === "undefined") return;
  try {
    ctx ??= new AudioContext();
    if (ctx.state === "suspended") return; // no user gesture yet: stay silent rather than queue
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.frequency.value = { move: 520, check: 880, end: 330, low: 1175, countdown: 988 }[kind];
    osc.type = kind === "end" ? "triangle" : kind === "low" || kind === "countdown" ? "square" : "sine";
    gain.gain.setValueAtTime(0.15, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + (kind === "end" ? 0.6 : 0.12));
    osc.connect(gain).connect(ctx.destination);
    osc.start();
    osc.stop(ctx.currentTime + 0.7);
  } catch {
    /* audio is a nicety */
  }
}

/** Browsers start audio only after a gesture: resume on the first click. */
export function unlockAudio(): void {
  window.addEventListener("pointerdown", () => { ctx ??= new AudioContext(); void ctx.resume(); }, { once: true });
}
