// One game on screen, live or stored: the board, clocks, players, the move list with a replay
// cursor (/game/<id>#<ply>), the actions that apply to this viewer, offers, absence claims,
// the end banner, and the review tools (exports, copy FEN); the chat is chat.ts's, the big
// board's zoom zoom.ts's.

import { ActionBar } from "./actions";
import { AnalysisPanel, GLYPHS } from "./analysis";
import { Board } from "./board";
import { GameChat } from "./chat";
import { clockView, mainTimeText, tcOfStored, tcText } from "./clock";
import { FirstMoveCountdown } from "./countdown";
import { shownName } from "./computer";
import { titledName } from "./names";
import { errorText, resultText, type Ctx } from "./ctx";
import { TimePressure } from "./pressure";
import { sideWord } from "./words";
import { moveRows, type MoveCell } from "./movelist";
import { LOST, type AckedCommand, type Message } from "./net";
import { getApi } from "./http";
import { ReviewTools } from "./reviewtools";
import { berserkedSides, berserkMark, tournamentLine } from "./marks";
import { mayBerserk } from "./tourney";
import { PremovePanel } from "./premoves";
import { MoveSender } from "./sender";
import { beep } from "./sound";
import { h } from "./svg";
import { toggleZoom, zoomable } from "./zoom";
import type { AbsenceView, ChatLineView, ClocksView, EndPayload, GameDetailView, GameSnapshot, MessageOf, MovePayload, PlayerView, SideName, StoredMoveView, TakebackPayload, TimeControlView, TournamentTagView } from "./protocol.gen";
import type { Role, VariantInfo } from "./types";

/** The messages of a game's room (each carries its game's id). */
type RoomMessage = MessageOf<"game" | "move" | "takeback" | "end" | "offer" | "gone" | "back" | "chat" | "rematch" | "berserk">;
/** A join refused while the game changes servers (its server died; another takes it over within seconds). */
const REJOIN: ReadonlySet<string> = new Set(["node_unavailable", "cluster_unavailable", "busy"]);
const REJOIN_EVERY_MS = 1000;
const REJOIN_TRIES = 60;
const ROOM_KINDS: ReadonlySet<string> = new Set<RoomMessage["t"]>(["game", "move", "takeback", "end", "offer", "gone", "back", "chat", "rematch", "berserk"]);
function isRoomMessage(m: Message): m is RoomMessage { return ROOM_KINDS.has(m.t); }

interface Live {
  v: number;
  legal: string[];
  clocks: ClocksView;
  clockAt: number;
  offers: GameSnapshot["offers"];
  absent: { first: (AbsenceView & { at: number }) | null; second: (AbsenceView & { at: number }) | null };
  chat: ChatLineView[];
  /** Whether the side to move may claim a draw (the server's `draw_claim`; null: not said). */
  drawClaim: boolean | null;
}

export class GameView {
  readonly el: HTMLElement;
  private variant: VariantInfo | null = null;
  private board: Board | null = null;
  private role: Role = "spectator";
  private players: { first: PlayerView | { name: string }; second: PlayerView | { name: string } } = { first: { name: "?" }, second: { name: "?" } };
  private tc: TimeControlView | null = null;
  private rated = false;
  /** The tournament this game belongs to (its snapshot's tag), and who berserked in it. */
  private tournament: TournamentTagView | undefined = undefined;
  private berserked = { first: false, second: false };
  private status = "started";
  private result: string | null = null;
  private termination: string | null = null;
  /** Why a game was aborted (the end event's or the snapshot's `detail`; not in records). */
  private endDetail: string | null = null;
  private moves: string[] = [];
  private displays: string[] = [];
  private checks: boolean[] = [];
  private fens = new Map<number, string>();
  private stored: StoredMoveView[] = [];
  private storedGame: GameDetailView | null = null;
  private live: Live | null = null;
  private cursor: number | null = null;
  /** The player asked to stay on the move they look at when the opponent moves. */
  private stay = false;
  private readonly historyBox = h("div", { class: "history-note", role: "status", hidden: true });
  /** The player's moves on their way: proposed, pending, confirmed or refused. */
  private readonly sender: MoveSender;
  private timer = 0;
  private readonly boardBox = h("div", { class: "board-box" });
  private readonly clockTop = h("div", { class: "clock top" });
  private readonly clockBottom = h("div", { class: "clock bottom" });
  private readonly moveList = h("ol", { class: "moves" });
  private readonly actionBar = new ActionBar({
    command: (t, extra) => void this.command(t, extra),
    pass: () => void this.play("@@@@"),
    zoom: () => toggleZoom(this.boardBox),
    flip: () => { this.flipped = !this.flipped; this.board?.setOrientation(((this.role === "second" ? 1 : 0) ^ (this.flipped ? 1 : 0)) as 0 | 1); },
  });
  private flipped = false;
  private readonly pressure = new TimePressure();
  private readonly firstMove = new FirstMoveCountdown(() => beep("countdown", this.ctx.settings.sound));
  private readonly banner = h("div", { class: "banner", hidden: true, role: "status" });
  private readonly info = h("div", { class: "game-info" });
  private readonly errorBox = h("p", { class: "error", role: "alert" });
  private rejoinTimer = 0;

  private readonly chat: GameChat;
  private readonly review = new ReviewTools(() => this.id, () => this.variant?.family ?? "shogi", (ply) => this.copyText(ply));
  private readonly analysis: AnalysisPanel;
  private readonly premoves: PremovePanel;

  constructor(private readonly ctx: Ctx, readonly id: string) {
    this.sender = new MoveSender({
      conn: this.ctx.conn, gameId: this.id,
      confirmMoves: () => this.ctx.settings.confirmMoves,
      redraw: () => void this.draw(),
      refused: (text, state) => {
        this.errorBox.textContent = text;
        if (state && this.live) { this.live.legal = state.legal; this.fens.set(state.ply, state.fen); }
      },
      clearError: () => { this.errorBox.textContent = ""; },
    });
    this.chat = new GameChat((text) => this.ctx.conn.request("chat", { game: this.id, text }), (err) => this.fail(err));
    this.premoves = new PremovePanel(ctx, id);
    this.analysis = new AnalysisPanel(ctx, id, () => this.status === "finished", (ply) => this.goto(ply), () => void this.draw(), () => this.variant?.name, () => this.sideOfPly1() === "second");
    this.el = h("section", { class: "game", "data-game": id }, [
      h("div", { class: "board-col" }, [this.clockTop, this.boardBox, this.sender.confirmBox, this.clockBottom, this.sender.note]),
      // The history note sits with the move controls, not over the board: looking back moves
      // no clock and no board (on a phone both come first under the board, style.css).
      h("div", { class: "side-col" }, [this.info, this.banner, this.actionBar.offers, this.actionBar.buttons, this.errorBox,
        this.historyBox,
        h("div", { class: "nav-buttons" }, (["first", "prev", "next", "last"] as const).map((k) => {
          const b = h("button", { type: "button", "data-nav": k, text: { first: "«", prev: "‹", next: "›", last: "»" }[k], title: k });
          b.addEventListener("click", () => this.step(k));
          return b;
        })),
        this.moveList, this.premoves.el, this.review.el, this.analysis.el, this.chat.el]),
    ]);
    window.addEventListener("hashchange", this.onHash);
    document.addEventListener("keydown", this.onKey);
    this.timer = window.setInterval(() => this.drawClocks(), 100);
  }

  /** The player changed the settings: redraw the pieces. */
  applySettings(): void {
    this.board?.setLabels(this.ctx.settings.labels);
    if (this.board) this.board.tooltips = this.ctx.settings.tooltips;
  }

  destroy(): void {
    window.clearInterval(this.timer);
    window.clearTimeout(this.rejoinTimer);
    this.pressure.stop();
    this.analysis.destroy();
    window.removeEventListener("hashchange", this.onHash);
    document.removeEventListener("keydown", this.onKey);
    if (this.live && this.ctx.conn.open) this.ctx.conn.request("leave", { game: this.id }).catch(() => {});
  }

  /** Open the game: join the live room when logged in, else (or when it is gone) the stored record. */
  async open(tries = 0): Promise<void> {
    window.clearTimeout(this.rejoinTimer);
    if (this.storedGame && this.status === "finished" && !this.live) return;
    if (this.ctx.me && this.ctx.conn.open) {
      try {
        await this.ctx.conn.request("join", this.live ? { game: this.id, v: this.live.v } : { game: this.id });
        if (tries > 0) this.errorBox.textContent = "";
        void this.sender.send();
        return;
      } catch (e) {
        const code = (e as { code?: string }).code ?? "";
        if (LOST.has(code) && this.live) return;  // the reconnection's hello joins again
        if (REJOIN.has(code) && tries < REJOIN_TRIES) {
          // The game's server died and another one takes it over within seconds: join again.
          this.fail(e);
          this.rejoinTimer = window.setTimeout(() => { void this.open(tries + 1); }, REJOIN_EVERY_MS);
          return;
        }
        if (code !== "no_such_game") { this.fail(e); }
      }
    }
    await this.loadStored();
  }

  private async loadStored(): Promise<void> {
    const answer = await getApi(`/api/games/${encodeURIComponent(this.id)}`);
    if (!answer?.ok) {
      const body = await answer?.json().catch(() => null);
      this.el.replaceChildren(h("p", { class: "error", text: body?.error?.message ?? (answer ? `No game ${this.id}.` : "The game could not be loaded: reload the page to try again.") }));
      return;
    }
    const g = (await answer.json()) as GameDetailView;
    this.storedGame = g;
    this.stored = g.moves ?? [];
    this.setup(g.variant, "spectator", { first: g.first, second: g.second }, tcOfStored(g), g.rated);
    const cup = g.tournament;
    this.tournament = cup ? { id: cup.id, round: cup.round, berserk: false } : undefined;  // berserk: no longer offered
    this.berserked = berserkedSides(cup?.berserk ?? []);
    this.status = g.status === "started" || g.status === "created" ? "started" : "finished";
    this.result = g.result;
    this.termination = g.termination;
    this.moves = this.stored.map((m) => m.uci);
    this.displays = this.stored.map((m) => m.display);
    this.fens.set(0, g.start_fen);
    const plies = g.plies ?? this.stored.length;  // a game still running counts no plies yet
    if (g.final_fen !== null) this.fens.set(plies, g.final_fen);
    this.cursor = this.hashPly() ?? plies;
    await this.draw();
  }

  private setup(variantName: string, role: Role, players: GameView["players"], tc: TimeControlView | null, rated: boolean): void {
    const variant = this.ctx.variants.get(variantName) ?? null;
    this.variant = variant;
    this.role = role;
    this.players = players;
    this.tc = tc;
    this.rated = rated;
    if (variant) this.premoves.configure(variant, role === "second" ? 1 : 0);
    if (variant && !this.board) {
      this.board = new Board(variant, role === "second" ? 1 : 0, this.ctx.settings.labels, (uci) => void this.play(uci));
      this.board.tooltips = this.ctx.settings.tooltips;
      this.boardBox.replaceChildren(this.board.el);
    }
  }

  onMessage(m: Message): void {
    if (m.t === "premoves") { if (m.d.game === this.id) this.premoves.update(m.d); return; }
    if (!isRoomMessage(m) || m.d.game !== this.id) return;
    if (m.v !== undefined && this.live && m.t !== "game" && m.v <= this.live.v) return; // already applied
    if (m.v !== undefined && this.live) this.live.v = m.v;
    switch (m.t) {
      case "game": this.snapshot(m.d, m.v ?? 0); break;
      case "move": this.moved(m.d); break;
      case "takeback": this.takenBack(m.d); break;
      case "end": this.ended(m.d); break;
      case "offer": { const d = m.d; if (this.live) this.live.offers[d.kind] = d.action === "offer" ? d.side : null; if (d.action === "decline") this.note(`${this.nameOf(d.side)} declines the ${d.kind}.`); break; }
      // A `gone` that makes the absence claimable carries no countdown: it is over.
      case "gone": if (this.live) this.live.absent[m.d.side] = { claimable: m.d.claimable, claim_in_ms: m.d.claim_in_ms ?? 0, at: Date.now() }; break;
      case "back": if (this.live) this.live.absent[m.d.side] = null; break;
      case "rematch": this.ctx.navigate(`/game/${m.d.new_game}`); return;
      case "chat": this.live?.chat.push(m.d); this.drawChat(); return;
      case "berserk":
        this.berserked[m.d.side] = true;
        if (this.live) { this.live.clocks = m.d.clocks; this.live.clockAt = Date.now(); }
        this.note(`${this.nameOf(m.d.side)} berserks: half the time on the clock.`);
        break;
    }
    void this.draw();
  }

  private snapshot(s: GameSnapshot, v: number): void {
    this.setup(s.variant, s.role, s.players, s.tc, s.rated);
    this.premoves.reset();
    this.status = s.status;
    this.result = s.result;
    this.termination = s.termination;
    this.endDetail = s.detail ?? null;
    this.tournament = s.tournament;
    this.berserked = berserkedSides(s.berserk);
    this.moves = s.moves.slice();
    this.displays = s.displays.slice();
    this.fens.clear();
    this.fens.set(0, s.start_fen);
    this.fens.set(s.ply, s.fen);
    const absent = (a: AbsenceView | null) => (a ? { ...a, at: Date.now() } : null);
    this.live = { v, legal: s.legal, clocks: s.clocks, clockAt: Date.now(), offers: { ...s.offers },
      absent: { first: absent(s.absent.first), second: absent(s.absent.second) }, chat: s.chat.slice(), drawClaim: s.draw_claim ?? null };
    this.sender.reconcile(s.moves, s.status !== "started");
    this.firstMove.set(s.status === "started" ? s.first_move_ms : null);
    const n = this.hashPly();
    this.cursor = n !== null && n < s.ply ? n : null;
    if (s.status === "finished" && !this.storedGame) void this.loadRecord();
    this.drawChat();
    // A snapshot does not say whether the side to move is in check; the stored record does.
    if (s.ply > 0 && this.checks[s.ply] === undefined) void this.loadCheck(s.ply);
  }

  private async loadCheck(ply: number): Promise<void> {
    if ((await this.storedPosition(ply))?.check) void this.draw();
  }

  private moved(d: MovePayload): void {
    this.moves.length = d.ply - 1;
    this.displays.length = d.ply - 1;
    this.moves.push(d.uci);
    this.displays.push(d.display);
    this.checks[d.ply] = d.check;
    this.fens.set(d.ply, d.fen);
    if (this.live) { this.live.legal = d.legal; this.live.clocks = d.clocks; this.live.clockAt = Date.now(); this.live.offers.draw = null; this.live.offers.takeback = null; this.live.drawClaim = d.draw_claim ?? null; }
    this.errorBox.textContent = "";
    this.firstMove.set(d.first_move_ms);
    this.sender.reconcile(this.moves, false);
    // A player looking back is brought to the live position by the opponent's move (unless
    // they asked to stay); a viewer one move behind follows the game.
    const theirs = this.mySide !== null && d.side !== this.mySide && !this.stay;
    if (this.cursor !== null && (this.cursor === d.ply - 1 || theirs)) this.toLive();
    beep(d.check ? "check" : "move", this.ctx.settings.sound);
  }

  private takenBack(d: TakebackPayload): void {
    this.moves.length = d.ply;
    this.displays.length = d.ply;
    for (const k of [...this.fens.keys()]) if (k > d.ply) this.fens.delete(k);
    this.fens.set(d.ply, d.fen);
    if (this.live) { this.live.legal = d.legal; this.live.clocks = d.clocks; this.live.clockAt = Date.now(); this.live.offers.takeback = null; this.live.drawClaim = d.draw_claim ?? null; }
    this.firstMove.set(d.first_move_ms);
    this.cursor = null;
  }

  private ended(d: EndPayload): void {
    this.status = "finished";
    this.endDetail = d.detail ?? null;
    this.firstMove.set(null);
    this.result = d.result;
    this.termination = d.termination;
    this.sender.reconcile(this.moves, true);
    if (this.live) { this.live.legal = []; this.live.clocks = d.clocks; this.live.clockAt = Date.now(); this.live.offers.draw = null; this.live.offers.takeback = null; }
    beep("end", this.ctx.settings.sound);
    void this.loadRecord();
  }

  /** The stored record of a finished game: rating changes, and each move's clock for replay. */
  private async loadRecord(): Promise<void> {
    const answer = await getApi(`/api/games/${encodeURIComponent(this.id)}`);
    if (!answer?.ok) return;
    this.storedGame = (await answer.json()) as GameDetailView;
    this.stored = this.storedGame.moves ?? [];
    void this.draw();
  }

  private get ply(): number { return this.moves.length; }
  private get shownPly(): number { return this.cursor === null ? this.ply : Math.min(this.cursor, this.ply); }
  private get mySide(): SideName | null { return this.role === "first" || this.role === "second" ? this.role : null; }
  private nameOf(side: SideName): string { return this.players[side].name; }

  private hashPly(): number | null {
    const n = Number(location.hash.slice(1));
    return location.hash.length > 1 && Number.isInteger(n) && n >= 0 ? n : null;
  }

  private onHash = () => { const n = this.hashPly(); this.cursor = n === null || n >= this.ply ? null : n; void this.draw(); };

  private onKey = (e: KeyboardEvent) => {
    if ((e.target as HTMLElement).tagName === "INPUT") return;
    const key = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last", ArrowUp: "first", ArrowDown: "last" }[e.key] as "first" | "prev" | "next" | "last" | undefined;
    if (key) { e.preventDefault(); this.step(key); }
  };

  private step(k: "first" | "prev" | "next" | "last"): void {
    const now = this.shownPly;
    const target = { first: 0, prev: Math.max(0, now - 1), next: Math.min(this.ply, now + 1), last: this.ply }[k];
    this.goto(target);
  }

  private goto(ply: number): void {
    if (ply >= this.ply && this.status === "started") { this.toLive(); void this.draw(); return; }
    this.cursor = ply;
    history.replaceState(null, "", `#${ply}`);
    void this.draw();
  }

  /** Back to the live position (the game's own address, no ply). */
  private toLive(): void {
    this.cursor = null;
    this.stay = false;
    if (location.hash) history.replaceState(null, "", location.pathname);
  }

  /** Looking back in a running game: say so, offer the way back and the choice to stay. */
  private drawHistory(shown: number): void {
    const browsing = this.live !== null && this.status === "started" && shown < this.ply;
    this.historyBox.hidden = !browsing;
    if (!browsing) { this.historyBox.replaceChildren(); return; }
    const back = h("button", { type: "button", class: "primary", "data-action": "back-to-game", text: "Back to the game »" });
    back.addEventListener("click", () => { this.toLive(); void this.draw(); });
    const stay = h("input", { type: "checkbox", name: "stay", checked: this.stay });
    stay.addEventListener("change", () => { this.stay = stay.checked; });
    const where = h("span", { class: "where", text: `Move ${shown} of ${this.ply}: the game goes on.` });
    const label = this.mySide ? h("label", { class: "stay" }, [stay, " Stay here when a move is played"]) : null;
    this.historyBox.replaceChildren(where, back, label ?? "");
  }

  private async fenAt(ply: number): Promise<string | null> {
    return this.fens.get(ply) ?? (await this.storedPosition(ply))?.fen ?? null;
  }

  /** The stored position after `ply` moves (GET /api/games/<id>?ply=N), remembered. */
  private async storedPosition(ply: number): Promise<GameDetailView["position"] | null> {
    const answer = await getApi(`/api/games/${encodeURIComponent(this.id)}?ply=${ply}`);
    if (!answer?.ok) return null;
    const p = ((await answer.json()) as GameDetailView).position;
    if (!p) return null;
    if (!this.fens.has(ply)) this.fens.set(ply, p.fen);
    if (p.sfen) this.sfens.set(ply, p.sfen);
    this.checks[ply] ??= p.check;
    return p;
  }
  private sfens = new Map<number, string>();

  private async play(uci: string): Promise<void> { await this.sender.play(uci, this.ply + 1); }

  /** The connection dropped: say so; a pending move waits for the reconnection. */
  connectionLost(): void { this.sender.drawNote(); }

  private fail(e: unknown): void { this.errorBox.textContent = errorText(e); }
  private note(text: string): void { this.errorBox.textContent = text; }

  private async command(t: AckedCommand, extra: object = {}): Promise<void> {
    this.errorBox.textContent = "";
    try {
      const ack = await this.ctx.conn.request(t, { game: this.id, ...extra });
      if (ack.d.new_game) this.ctx.navigate(`/game/${ack.d.new_game}`);
    } catch (e) { this.fail(e); }
  }

  private async draw(): Promise<void> {
    if (!this.variant || !this.board) return;
    const ply = this.shownPly;
    const fen = await this.fenAt(ply);
    if (fen === null || ply !== this.shownPly) return;
    const atLive = ply === this.ply && this.status === "started" && this.live !== null;
    const myTurn = atLive && this.mySide !== null && fen.split(" ")[1] === (this.mySide === "first" ? "w" : "b");
    const waiting = atLive && this.mySide !== null && !myTurn ? (this.mySide === "first" ? 0 : 1) : null;
    const drawn = this.sender.shown(this.ply, myTurn);
    const pending = ply === this.ply ? drawn : null;
    this.board.set({ fen, legal: myTurn && !pending ? this.live!.legal : [], last: ply > 0 ? this.moves[ply - 1] : null,
      check: this.checks[ply] ?? false, interactive: myTurn && !pending, premoveSide: waiting, pending });
    this.board.setArrow(this.analysis.evalAt(ply)?.best ?? null);
    this.analysis.show(ply);
    this.board.el.dataset.ply = String(ply);
    this.board.el.dataset.turn = fen.split(" ")[1] === "b" ? "second" : "first";
    this.board.el.dataset.myTurn = String(myTurn);
    this.drawInfo();
    this.drawMoves(ply);
    this.drawHistory(ply);
    this.drawClocks();
    this.drawBanner();
    this.drawActions();
    this.review.draw(ply, this.storedGame?.formats);
    this.chat.el.hidden = this.live === null;
    // A game that ended before its first move (aborted) has nothing to analyse.
    this.analysis.el.hidden = this.status === "finished" && this.ply === 0;
    const corr = this.tc?.kind === "correspondence" || this.tc?.kind === "unlimited";
    const playing = corr && this.mySide !== null && this.live !== null && this.status === "started";
    this.premoves.show(playing, playing && this.liveTurn !== this.mySide, this.ply);
  }

  private drawInfo(): void {
    const v = this.variant!;
    const bits = [v.title, this.tc ? tcText(this.tc) : "", this.rated ? "rated" : "casual", this.role === "spectator" ? "watching" : `you play ${sideWord(v, this.role)}`];
    const cup = this.tournament ? tournamentLine(this.tournament, (path) => this.ctx.navigate(path)) : "";
    this.info.replaceChildren(h("h2", {}, [...titledName(this.players.first), " – ", ...titledName(this.players.second)]), h("p", { class: "muted", text: bits.filter(Boolean).join(" · ") }), cup);
  }

  private drawMoves(shown: number): void {
    const family = this.variant?.family ?? "shogi";
    const cell = (c: MoveCell | null, tag: "li" | "span") => {
      if (!c) return h("span", { class: "mv-empty", text: "…" });
      // A Lion's pass is written as a move to its own square (rules spec §5.9): say so on hover.
      const title = this.moves[c.ply - 1] === "@@@@" ? "Lion pass: out and back to its own square" : undefined;
      const advice = this.analysis.adviceAt(c.ply);
      const mark = advice ? h("span", { class: `glyph ${advice.judgement}`, title: advice.judgement, text: GLYPHS[advice.judgement] }) : null;
      const el = h(tag, { class: `mv${c.ply === shown ? " current" : ""}${advice ? " " + advice.judgement : ""}`, "data-ply": c.ply, title }, [c.text, mark]);
      el.addEventListener("click", () => this.goto(c.ply));
      return el;
    };
    const items = moveRows(this.displays, family, this.sideOfPly1() === "second").map((row) =>
      family === "shogi" ? Object.assign(cell(row.cells[0], "li"), { value: row.number })
        : h("li", { value: row.number }, [h("span", { class: "num", text: `${row.number}.` }), ...row.cells.map((c) => cell(c, "span"))]));
    this.moveList.classList.toggle("pairs", family === "chess");
    this.moveList.replaceChildren(...items);
    // The current move in view: the list scrolls, never the page (a phone keeps its board).
    const current = this.moveList.querySelector<HTMLElement>(".current");
    if (current) {
      const list = this.moveList;
      const top = current.offsetTop - list.offsetTop;
      if (top < list.scrollTop) list.scrollTop = top;
      else if (top + current.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = top + current.offsetHeight - list.clientHeight;
    }
  }

  private drawClocks(): void {
    if (!this.variant) return;
    this.drawPressure();
    const bottom: SideName = this.role === "second" ? "second" : "first";
    const top: SideName = bottom === "first" ? "second" : "first";
    for (const [el, side] of [[this.clockTop, top], [this.clockBottom, bottom]] as [HTMLElement, SideName][]) {
      const p = this.players[side] as PlayerView;
      const name = h("a", { class: "name", href: `/player/${encodeURIComponent(p.name)}` }, titledName(p, `${shownName(p)}${p.rating && !p.computer ? ` (${p.rating}${p.provisional ? "?" : ""})` : ""}`));
      name.addEventListener("click", (e) => { e.preventDefault(); this.ctx.navigate(`/player/${encodeURIComponent(p.name)}`); });
      const absent = this.live?.absent[side];
      const away = absent ? h("span", { class: "away", text: absent.claimable ? " left the game" : ` left: claim in ${Math.max(0, Math.ceil((absent.claim_in_ms - (Date.now() - absent.at)) / 1000))}s` }) : null;
      let time: HTMLElement | null = null;
      const clocks = this.live?.clocks;
      // A running game's clocks are always the live ones, whatever move is looked at.
      if (clocks && this.tc && (this.cursor === null || this.status === "started")) {
        const running = clocks.running === side && this.status === "started";
        const view = clockView(clocks[side], this.tc, running, running ? Date.now() - this.live!.clockAt : 0);
        time = h("span", { class: `time${running ? " running" : ""}${view.low ? " low" : ""}`, "data-side": side }, [view.main, view.byoyomi ? h("small", { text: ` ${view.byoyomi}` }) : ""]);
      } else if (this.stored.length || this.cursor !== null) {
        const ms = this.clockAtPly(side);
        if (ms !== null) time = h("span", { class: "time", "data-side": side, text: mainTimeText(ms) });
      }
      const counting = this.status === "started" && this.live !== null && side === this.liveTurn ? this.firstMove.note(side === this.mySide) : null;
      const countdown = counting ? h("span", { class: `first-move${counting.urgent ? " urgent" : ""}`, role: "timer", "data-seconds": counting.seconds, text: counting.text }) : null;
      const bolt = this.berserked[side] ? berserkMark() : null;
      el.replaceChildren(h("span", { class: "who" }, [name, bolt ?? ""]), away ?? "", countdown ?? "", time ?? "");
    }
  }

  /** The side to move in the game (not in the position looked at). */
  private get liveTurn(): SideName { return (this.fens.get(this.ply) ?? "").split(" ")[1] === "b" ? "second" : "first"; }

  /** The tab's title on the player's turn and the low-time sound (pressure.ts). */
  private drawPressure(): void {
    const me = this.mySide;
    const live = this.live;
    const myTurn = me !== null && live !== null && this.status === "started" && this.liveTurn === me;
    const running = myTurn && live!.clocks.running === me;
    const view = myTurn && this.tc ? clockView(live!.clocks[me!], this.tc, running, running ? Date.now() - live!.clockAt : 0) : null;
    this.pressure.update(myTurn, view, running, this.ctx.settings.sound);
  }

  /** A side's main time after the shown ply, from the stored record. */
  private clockAtPly(side: SideName): number | null {
    const upto = this.shownPly;
    for (let i = upto; i >= 1; i--) {
      const m = this.stored[i - 1];
      if (m && (i % 2 === 1) === (side === this.sideOfPly1())) return m.clock_ms;
    }
    // Before the side's first move: the time it started with.
    const tc = this.tc;
    if (!tc) return null;
    if (tc.kind === "fischer") return tc.base_s * 1000;
    if (tc.kind === "byoyomi") return tc.main_s * 1000;
    if (tc.kind === "correspondence") return tc.days * 86_400_000;
    return 0;
  }

  private sideOfPly1(): SideName { return (this.fens.get(0) ?? "").split(" ")[1] === "b" ? "second" : "first"; }

  private drawBanner(): void {
    if (this.status !== "finished") { this.banner.hidden = true; return; }
    this.banner.hidden = false;
    const names: [string, string] = [this.nameOf("first"), this.nameOf("second")];
    const parts: (HTMLElement | string)[] = [h("strong", { text: resultText(this.result, this.termination, names, this.endDetail, this.ply) })];
    if (this.result) parts.push(h("span", { class: "score", text: ` ${this.result}` }));
    const g = this.storedGame;
    if (g && g.rated) {
      for (const side of ["first", "second"] as const) {
        const p = g[side];
        if (p.rating_before !== null && p.rating_after !== null) {
          const delta = p.rating_after - p.rating_before;
          parts.push(h("div", { class: "rating-change", text: `${p.name}: ${p.rating_after} (${delta >= 0 ? "+" : ""}${delta})` }));
        }
      }
    }
    this.banner.replaceChildren(...parts);
  }

  private drawActions(): void {
    const me = this.mySide;
    const live = this.live;
    const bothMoved = this.ply >= 2;
    const myMoves = me ? this.moves.filter((_, i) => (i % 2 === 0) === (this.sideOfPly1() === me)).length : 0;
    this.actionBar.render({
      me, status: this.status, live: live !== null, bothMoved,
      // The game's turn, not the shown position's: Claim draw stays while looking back.
      myTurn: me !== null && live !== null && this.status === "started" && this.liveTurn === me, rated: this.rated,
      drawOffers: this.variant!.draw_offers, drawClaims: this.variant!.draw_claims, drawClaim: live?.drawClaim ?? null,
      myMoves,
      tournament: this.tournament !== undefined,
      berserk: me !== null && live !== null && mayBerserk(this.tournament, this.status, myMoves, this.berserked[me]),
      offers: live?.offers ?? { draw: null, takeback: null, rematch: null },
      opponentAway: me && live ? live.absent[me === "first" ? "second" : "first"] : null,
      pass: live?.legal.includes("@@@@") ?? false,
      zoomable: zoomable(this.boardBox, this.variant?.files ?? 0),
      nameOf: (side) => this.nameOf(side),
    });
  }

  /** The text Copy FEN / SFEN copies for the position after `ply` moves. */
  private async copyText(ply: number): Promise<string> {
    let text = this.fens.get(ply) ?? "";
    if (this.variant?.family === "shogi") {
      if (!this.sfens.has(ply)) await this.storedPosition(ply);
      text = this.sfens.get(ply) ?? text;
    }
    return text;
  }

  private drawChat(): void { this.chat.draw(this.live?.chat ?? [], this.role === "spectator"); }
}

