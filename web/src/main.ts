// The application shell: login, the page routes (/ lobby, /game/<id>, /review, /player/<name>,
// /tournaments, /tournament/<id>, /turns), the connection's life (resume with the session token,
// rejoin after a reconnect), settings, the account's e-mail settings, the "your turn" count in
// the header.

import "./style.css";
import type { Ctx } from "./ctx";
import { errorText } from "./ctx";
import { GameView } from "./game";
import { challengeText, Lobby } from "./lobby";
import { MyGames, TurnsPage } from "./mygames";
import { Notices } from "./notices";
import { Connection, type Message } from "./net";
import type { CommandKind, Commands } from "./protocol.gen";
import { Profile, ReviewList } from "./review";
import { TournamentPage } from "./tournament";
import { TournamentsPage } from "./tournaments";
import { loadSettings, saveSettings } from "./settings";
import { unlockAudio } from "./sound";
import { h } from "./svg";
import type { ChallengeView } from "./protocol.gen";
import type { VariantInfo } from "./types";

const TOKEN_KEY = "hub-token";
const $ = (id: string) => document.getElementById(id)!;

class Client implements Ctx {
  readonly conn = new Connection();
  me: Ctx["me"] = null;
  variants = new Map<string, VariantInfo>();
  settings = loadSettings();
  runningGame: string | null = null;
  challenges = new Map<number, ChallengeView>();
  private readonly notices = new Notices();
  private readonly myGames = new MyGames(this);
  private lobby: Lobby | null = null;
  private game: GameView | null = null;
  /** The page on screen that watches the server while open (the tournaments' pages). */
  private watched: TournamentsPage | TournamentPage | null = null;
  private turns: TurnsPage | null = null;
  private readonly view = $("view");
  private readonly auth = $("auth");
  private authError = $("auth-error");

  async start(): Promise<void> {
    const answer = await fetch("/api/variants");
    for (const v of (await answer.json()).variants as VariantInfo[]) this.variants.set(v.name, v);
    this.conn.onOpen = () => this.opened();
    this.conn.onClose = (code, reason) => {
      this.status(reason === "logged out" ? "Logged out" : "Reconnecting…", true);
      this.game?.connectionLost();
      if (code === 1000 && reason === "logged out") { localStorage.removeItem(TOKEN_KEY); this.me = null; this.myGames.loggedOut(); }
    };
    this.conn.listen((m) => this.onMessage(m));
    window.addEventListener("popstate", () => this.route());
    this.bindChrome();
    unlockAudio();
    this.conn.connect();
    this.route();
  }

  navigate(path: string): void {
    if (location.pathname + location.hash !== path) history.pushState(null, "", path);
    this.route();
  }

  private status(text: string, bad = false): void {
    const el = $("status");
    el.textContent = text;
    el.classList.toggle("bad", bad);
  }

  private opened(): void {
    this.status("Connected");
    const token = localStorage.getItem(TOKEN_KEY);
    if (token) this.login("resume", { token });
    else { this.showAuth(); void this.watched?.enter(); }  // a visitor reads tournaments too
  }

  private showAuth(): void {
    this.auth.hidden = false;
    $("user").textContent = "";
    $("logout").hidden = true;
    $("account").hidden = true;
  }

  private login(t: CommandKind, d?: Commands[CommandKind]): void {
    this.authError.textContent = "";
    this.conn.request(t, d).catch((e) => {
      if ((e as { code?: string }).code === "bad_session") localStorage.removeItem(TOKEN_KEY);
      this.authError.textContent = errorText(e);
      this.showAuth();
      if (this.game) void this.game.open();
    });
  }

  private bindChrome(): void {
    const form = $("auth-form") as HTMLFormElement;
    const creds = () => {
      const f = new FormData(form);
      return { name: String(f.get("name") ?? "").trim(), password: String(f.get("password") ?? "") };
    };
    form.addEventListener("submit", (e) => { e.preventDefault(); this.login("login", creds()); });
    $("register").addEventListener("click", () => { if (form.reportValidity()) this.login("register", creds()); });
    $("guest").addEventListener("click", () => this.login("guest"));
    $("logout").addEventListener("click", () => { localStorage.removeItem(TOKEN_KEY); this.conn.request("logout").catch(() => {}); });
    $("logout-everywhere").addEventListener("click", () => {
      localStorage.removeItem(TOKEN_KEY);
      this.conn.request("logout_everywhere").catch(() => {});
    });
    const passwordForm = $("password-form") as HTMLFormElement;
    passwordForm.addEventListener("submit", (e) => {
      e.preventDefault();
      const f = new FormData(passwordForm);
      const note = $("password-note");
      this.conn.request("change_password", { old: String(f.get("old") ?? ""), new: String(f.get("new") ?? "") }).then(
        () => { passwordForm.reset(); note.textContent = "Password changed; your other devices are logged out."; },
        (err) => { note.textContent = errorText(err); });
    });
    this.bindMailForm();
    for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a[data-route]")) {
      a.addEventListener("click", (e) => { e.preventDefault(); this.navigate(a.getAttribute("href")!); });
    }
    const labels = $("set-labels") as HTMLSelectElement;
    const boxes = { sound: $("set-sound"), confirmMoves: $("set-confirm"), tooltips: $("set-tooltips") } as Record<"sound" | "confirmMoves" | "tooltips", HTMLInputElement>;
    labels.value = this.settings.labels;
    for (const [k, box] of Object.entries(boxes)) box.checked = this.settings[k as keyof typeof boxes];
    const save = () => {
      this.settings = { labels: labels.value === "western" ? "western" : "kanji", sound: boxes.sound.checked,
        confirmMoves: boxes.confirmMoves.checked, tooltips: boxes.tooltips.checked };
      saveSettings(this.settings);
      this.game?.applySettings();
    };
    labels.addEventListener("change", save);
    for (const box of Object.values(boxes)) box.addEventListener("change", save);
  }

  /** The account's e-mail settings (`mail_settings`): read when the Account panel opens. */
  private bindMailForm(): void {
    const form = $("mail-form") as HTMLFormElement;
    const email = form.elements.namedItem("email") as HTMLInputElement;
    const optIn = form.elements.namedItem("opt_in") as HTMLInputElement;
    const note = $("mail-note");
    let stored: string | null = null;
    const show = (d: { email: string | null; opt_in: boolean; enabled: boolean }, saved: boolean) => {
      stored = d.email;
      email.value = d.email ?? "";
      optIn.checked = d.opt_in;
      const off = d.enabled ? "" : "This server sends no mail at the moment.";
      note.textContent = saved ? `Saved. ${off}`.trim() : off;
    };
    $("account").addEventListener("toggle", () => {
      if (!($("account") as HTMLDetailsElement).open) return;
      this.conn.request("mail_settings").then((a) => show(a.d, false), (e) => { note.textContent = errorText(e); });
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const address = email.value.trim();
      const d = address ? { email: address, opt_in: optIn.checked } : stored ? { forget: true } : { opt_in: false };
      this.conn.request("mail_settings", d).then((a) => show(a.d, true), (err) => { note.textContent = errorText(err); });
    });
  }

  private onMessage(m: Message): void {
    switch (m.t) {
      case "welcome":
        this.me = m.d.player;
        localStorage.setItem(TOKEN_KEY, m.d.token);
        this.auth.hidden = true;
        $("user").textContent = `${m.d.player.name}${m.d.player.guest ? " (guest)" : ""}`;
        $("logout").hidden = false;
        $("account").hidden = m.d.player.guest;
        return;
      case "hello":
        void this.myGames.refresh();
        this.runningGame = m.d.game;
        this.challenges = new Map(m.d.challenges.map((c) => [c.id, c]));
        if (this.game) void this.game.open();
        else if (this.runningGame && this.isLobby()) this.navigate(`/game/${this.runningGame}`);
        else if (this.lobby) void this.lobby.enter();  // a new connection: subscribe again
        else if (this.watched) void this.watched.enter();
        else this.route();
        return;
      case "game_start":
        this.runningGame = m.d.game;
        if (this.game?.id !== m.d.game) this.navigate(`/game/${m.d.game}`);
        return;
      case "game":
        // A tournament game created on another server of a cluster arrives as its snapshot
        // only (no game_start): a started one of ours, not the one shown, is a start too.
        if (m.d.tournament && m.d.role !== "spectator" && m.d.status === "started" && this.runningGame !== m.d.game && this.game?.id !== m.d.game) {
          this.runningGame = m.d.game;
          this.navigate(`/game/${m.d.game}`);
          return;
        }
        break;
      case "degraded":
        this.status(m.d.on ? "The server is degraded: some actions may fail" : "Connected", m.d.on);
        return;
      case "error":  // an answer to no request of this page (e.g. game_not_created)
        this.status(m.d.message, true);
        window.setTimeout(() => { if ($("status").textContent === m.d.message) this.status(this.conn.open ? "Connected" : "Disconnected"); }, 10000);
        return;
    }
    let gone: ChallengeView | undefined;
    if (m.t === "challenge") {
      this.challenges.set(m.d.id, m.d);
      if (!this.lobby && m.d.to.id === this.me?.id) this.challengeNotice(m.d);
    } else if (m.t === "challenge_accepted" || m.t === "challenge_declined" || m.t === "challenge_withdrawn" || m.t === "challenge_cancelled") {
      gone = this.challenges.get(m.d.id);
      this.challenges.delete(m.d.id);
      this.notices.remove(`challenge-${m.d.id}`);
      const incoming = gone?.to.id === this.me?.id;
      if (gone && incoming && m.t === "challenge_withdrawn") this.notices.show(`gone-${m.d.id}`, [`${gone.from.name} withdrew the challenge (${this.variants.get(gone.variant)?.title ?? gone.variant}).`], 10000);
      if (gone && m.t === "challenge_cancelled" && !this.game) this.notices.show(`gone-${m.d.id}`, [`The challenge ${incoming ? "from " + gone.from.name : "to " + gone.to.name} was cancelled (${m.d.reason === "offline" ? "a player went offline" : m.d.reason === "game started" ? "a player started another game" : m.d.reason}).`], 10000);
    }
    this.myGames.onMessage(m);
    this.lobby?.onMessage(m, gone);
    this.game?.onMessage(m);
    if (this.watched instanceof TournamentPage) this.watched.onMessage(m);
  }

  /** A challenge received away from the lobby: a notice with Accept and Decline. */
  private challengeNotice(c: ChallengeView): void {
    const key = `challenge-${c.id}`;
    const error = h("span", { class: "error" });
    const answer = (t: "accept" | "decline") => this.conn.request(t, { id: c.id }).then((ack) => {
      this.challenges.delete(c.id);
      this.notices.remove(key);
      if (ack.d.game) this.navigate(`/game/${ack.d.game}`);
    }, (e) => { error.textContent = errorText(e); });
    const accept = h("button", { type: "button", class: "primary accept", text: "Accept" });
    accept.addEventListener("click", () => void answer("accept"));
    const decline = h("button", { type: "button", class: "decline", text: "Decline" });
    decline.addEventListener("click", () => void answer("decline"));
    this.notices.show(key, [h("p", { text: challengeText(c, this) }), h("div", { class: "buttons" }, [accept, decline]), error], 0, "challenge");
  }

  private isLobby(): boolean { return location.pathname === "/" || location.pathname === "/lobby"; }

  private route(): void {
    const path = location.pathname;
    const gameId = /^\/game\/([^/]+)$/.exec(path)?.[1];
    const player = /^\/player\/([^/]+)$/.exec(path)?.[1];
    const tournament = /^\/tournament\/([^/]+)$/.exec(path)?.[1];
    if (this.game && this.game.id !== gameId) { this.game.destroy(); this.game = null; }
    if (this.watched) { this.watched.leave(); this.watched = null; }
    if (this.lobby && !this.isLobby()) { this.lobby.leave(); this.lobby = null; }
    for (const a of document.querySelectorAll("nav a[data-route]")) a.classList.toggle("active", a.getAttribute("href") === path);
    if (gameId) {
      if (!this.game) {
        this.game = new GameView(this, decodeURIComponent(gameId));
        this.view.replaceChildren(this.game.el);
      }
      // With a session token, wait for hello (the game is joined then); visitors get the record.
      if (this.me || !localStorage.getItem(TOKEN_KEY)) void this.game.open();
      return;
    }
    if (path === "/turns") {
      // hello routes again: the page shown is kept (a button the player is about to press stays put)
      if (this.turns && this.view.contains(this.turns.el)) return;
      this.turns = new TurnsPage(this);
      this.view.replaceChildren(this.turns.el);
      this.myGames.show(this.turns);
      return;
    }
    this.turns = null;
    this.myGames.show(null);
    if (path === "/tournaments" || tournament) {
      const page = tournament ? new TournamentPage(this, decodeURIComponent(tournament)) : new TournamentsPage(this);
      this.watched = page;
      this.view.replaceChildren(page.el);
      void page.enter();  // before the connection opens: hello enters it
      return;
    }
    if (path === "/review") { this.view.replaceChildren(new ReviewList(this, null).el); return; }
    if (player) { this.view.replaceChildren(new Profile(this, decodeURIComponent(player)).el); return; }
    if (!this.me) { this.view.replaceChildren(h("p", { class: "muted", text: "Log in, register or play as a guest to enter the lobby." })); return; }
    if (!this.lobby) {
      this.lobby = new Lobby(this);
      this.view.replaceChildren(this.lobby.el);
      void this.lobby.enter();
    }
  }
}

void new Client().start();
