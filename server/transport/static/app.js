// Variant Hub web client: plain JavaScript, no build step. Talks the JSON protocol of
// docs/protocol.md over one websocket; the board is drawn from the FEN the server sends and
// only moves from the server's "legal" list can be played.
"use strict";

const $ = (id) => document.getElementById(id);
const SQUARE = /[a-o](?:1[0-5]|[1-9])/g;

const state = {
  ws: null,
  token: localStorage.getItem("hub-token"),
  me: null,
  variants: [],
  ack: 0,
  seeks: new Map(),
  game: null,          // the game on screen
  versions: {},        // game id -> last room event version seen (for reconnection)
  selected: null,      // a square name, or "drop:X"
  retry: 500,
};

// ---------------------------------------------------------------- connection

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws`);
  state.ws = ws;
  setStatus("connecting…");
  ws.onopen = () => {
    state.retry = 500;
    setStatus("connected");
    if (state.token) send("resume", { token: state.token });
    else showAuth(true);
  };
  ws.onmessage = (event) => onMessage(JSON.parse(event.data));
  ws.onclose = (event) => {
    setStatus(`disconnected (${event.code}${event.reason ? ": " + event.reason : ""}); reconnecting…`);
    if (event.code === 1000 && event.reason === "logged out") { state.token = null; }
    setTimeout(connect, state.retry);
    state.retry = Math.min(state.retry * 2, 10000);
  };
}

function send(t, d) {
  if (!state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  const frame = { t, a: ++state.ack };
  if (d !== undefined) frame.d = d;
  state.ws.send(JSON.stringify(frame));
}

function setStatus(text) { $("status").textContent = text; }
function log(text) { $("log").textContent = text + "\n" + $("log").textContent.slice(0, 2000); }

// ---------------------------------------------------------------- messages

const handlers = {
  welcome(d) {
    state.me = d.player;
    state.token = d.token;
    localStorage.setItem("hub-token", d.token);
    state.variants = d.variants || [];
    $("seek-variant").innerHTML = state.variants
      .map((v) => `<option value="${v.name}">${escapeHtml(v.title)}</option>`).join("");
    $("me").textContent = `${d.player.name}${d.player.guest ? " (guest)" : ""}`;
    $("logout").hidden = false;
    showAuth(false);
  },
  games(d) {
    $("live-games").innerHTML = d.games.map((g) =>
      `<li>${g.variant}: ${escapeHtml(g.first.name)} vs ${escapeHtml(g.second.name)} ` +
      `(${g.plies ?? 0} moves) <button data-watch="${g.id}">Observe</button></li>`).join("") ||
      "<li>none</li>";
  },
  hello(d) {
    send("sought", { watch: true });
    send("games", { status: "started", limit: 20 });
    if (d.game) join(d.game);
    else if (state.game) join(state.game.id);
  },
  sought(d) {
    state.seeks = new Map(d.seeks.map((s) => [s.id, s]));
    drawSeeks();
  },
  seek_added(d) { state.seeks.set(d.id, d); drawSeeks(); },
  seek_removed(d) { state.seeks.delete(d.id); drawSeeks(); },
  error(d) {
    if (d.code === "bad_session") { state.token = null; localStorage.removeItem("hub-token"); showAuth(true); }
    log(`${d.code}: ${d.message}`);
  },
  game_start() { /* the hub joins us to the room: its snapshot follows */ },
  game(d, v) {
    state.game = {
      id: d.game, variant: d.variant, role: d.role, players: d.players, fen: d.fen,
      legal: d.legal, turn: d.turn, ply: d.ply, clocks: d.clocks, clockAt: Date.now(),
      displays: d.displays.slice(), moves: d.moves.slice(), status: d.status,
      result: d.result, termination: d.termination, chat: d.chat.slice(), last: null,
    };
    state.versions[d.game] = v;
    state.selected = null;
    drawGame();
  },
  move(d) {
    const g = gameOf(d); if (!g) return;
    Object.assign(g, { fen: d.fen, legal: d.legal, turn: d.turn, ply: d.ply, clocks: d.clocks,
      clockAt: Date.now(), last: d.uci });
    g.moves.push(d.uci); g.displays.push(d.display);
    state.selected = null;
    drawGame();
  },
  takeback(d) {
    const g = gameOf(d); if (!g) return;
    Object.assign(g, { fen: d.fen, legal: d.legal, turn: d.turn, ply: d.ply, clocks: d.clocks,
      clockAt: Date.now(), last: null });
    g.moves.length = d.ply; g.displays.length = d.ply;
    drawGame();
  },
  end(d) {
    const g = gameOf(d); if (!g) return;
    Object.assign(g, { status: "finished", result: d.result, termination: d.termination,
      clocks: d.clocks, clockAt: Date.now(), legal: [] });
    drawGame();
  },
  offer(d) { note(d, `${d.side} ${d.action}s ${d.kind === "draw" ? "a draw" : "a " + d.kind}`); },
  gone(d) { note(d, d.claimable ? `${d.side} is gone: you may claim the game` : `${d.side} disconnected`); },
  back(d) { note(d, `${d.side} is back`); },
  rematch(d) { note(d, `rematch: game ${d.new_game}`); },
  chat(d) {
    const g = gameOf(d); if (!g) return;
    g.chat.push(d); drawChat();
  },
  challenge(d) { log(`challenge ${d.id} from ${d.from.name} (${d.variant})`); },
};

function onMessage(m) {
  if (m.v !== undefined && m.d && m.d.game) {
    const seen = state.versions[m.d.game];
    if (m.t !== "game" && seen !== undefined && m.v <= seen) return;  // already applied
    if (m.t !== "game") state.versions[m.d.game] = m.v;
  }
  const handler = handlers[m.t];
  if (handler) handler(m.d, m.v);
}

function gameOf(d) { return state.game && state.game.id === d.game ? state.game : null; }

function note(d, text) {
  const g = gameOf(d); if (!g) return;
  $("game-status").textContent = text;
}

function join(gameId, fresh) {
  const d = { game: gameId };
  if (!fresh && state.versions[gameId] !== undefined && state.game && state.game.id === gameId) {
    d.v = state.versions[gameId];  // only the missed events, not a snapshot
  }
  send("join", d);
}

// ---------------------------------------------------------------- auth and lobby

function showAuth(visible) {
  $("auth").hidden = !visible;
  $("lobby").hidden = visible;
}

$("auth-form").addEventListener("submit", (e) => {
  e.preventDefault();
  send("login", { name: $("auth-name").value, password: $("auth-password").value });
});
$("register").addEventListener("click", () =>
  send("register", { name: $("auth-name").value, password: $("auth-password").value }));
$("guest").addEventListener("click", () => send("guest"));
$("logout").addEventListener("click", () => {
  send("logout");
  localStorage.removeItem("hub-token");
  state.token = null;
  $("logout").hidden = true;
  $("me").textContent = "";
});

function describeClock(tc) {
  return tc.kind === "fischer" ? `${tc.base_s / 60}+${tc.inc_s}`
    : `${tc.main_s / 60} min + ${tc.periods}×${tc.period_s}s`;
}

function drawSeeks() {
  const rows = [];
  for (const s of state.seeks.values()) {
    const mine = state.me && s.player.id === state.me.id;
    rows.push(`<tr><td>${escapeHtml(s.player.name)}</td><td>${s.player.rating ?? "–"}</td>` +
      `<td>${s.variant}</td><td>${describeClock(s.tc)}</td><td>${s.rated ? "rated" : "casual"}</td>` +
      `<td>${mine ? "" : `<button data-seek="${s.id}">Play</button>`}</td></tr>`);
  }
  $("seek-rows").innerHTML = rows.join("") || `<tr><td colspan="6">no open seeks</td></tr>`;
}

$("seek-rows").addEventListener("click", (e) => {
  const id = e.target.dataset && e.target.dataset.seek;
  if (id) send("play", { id: Number(id) });
});

$("seek-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const kind = $("seek-clock").value;
  const base = Number($("seek-base").value), inc = Number($("seek-inc").value);
  const tc = kind === "fischer" ? { kind, base_s: base, inc_s: inc }
    : { kind, main_s: base, period_s: Math.max(1, inc), periods: Number($("seek-periods").value) };
  send("seek", { variant: $("seek-variant").value, tc, rated: $("seek-rated").checked,
    colour: $("seek-colour").value });
});
$("unseek").addEventListener("click", () => send("unseek"));
$("refresh-games").addEventListener("click", () => send("games", { status: "started", limit: 20 }));
$("live-games").addEventListener("click", (e) => {
  const id = e.target.dataset && e.target.dataset.watch;
  if (id) join(id, true);
});
$("observe-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const id = $("observe-id").value.trim();
  if (id) join(id, true);
});

// ---------------------------------------------------------------- the board

function parseFen(fen) {
  let placement = fen.split(" ")[0];
  let hands = "";
  const bracket = placement.indexOf("[");
  if (bracket >= 0) {
    hands = placement.slice(bracket + 1, placement.indexOf("]", bracket));
    placement = placement.slice(0, bracket);
  }
  const rows = placement.split("/").map((rank) => {
    const cells = [];
    const token = /(\d+)|(\+?[A-Za-z]['!]?)/g;
    let m;
    while ((m = token.exec(rank)) !== null) {
      if (m[1]) for (let i = 0; i < Number(m[1]); i++) cells.push(null);
      else cells.push(m[2]);
    }
    return cells;
  });
  return { rows, hands: hands === "-" ? "" : hands };
}

function isFirst(piece) {
  const letter = piece.replace(/[^A-Za-z]/g, "");
  return letter === letter.toUpperCase();
}

function squareName(file, rankNumber) {
  return String.fromCharCode(97 + file) + rankNumber;
}

function moveParts(uci) {
  const drop = uci.match(/^([^@]+)@/);
  const squares = uci.replace(/^[^@]*@/, "").match(SQUARE) || [];
  return {
    from: drop ? "drop:" + drop[1] : squares[0] || null,
    to: squares.length ? squares[squares.length - 1] : null,
  };
}

function drawGame() {
  const g = state.game;
  $("game").hidden = !g;
  if (!g) return;
  const { rows, hands } = parseFen(g.fen);
  const files = rows[0].length, ranks = rows.length;
  const flipped = g.role === "second";
  const mine = (g.role === "first" || g.role === "second") && g.role === g.turn && g.status === "started";
  const legal = mine ? g.legal : [];
  const targets = new Set(), sources = new Set();
  for (const uci of legal) {
    const { from, to } = moveParts(uci);
    if (from) sources.add(from);
    if (state.selected && from === state.selected && to) targets.add(to);
  }
  const last = g.last ? moveParts(g.last) : null;
  const html = [];
  for (let r = 0; r < ranks; r++) {
    const row = flipped ? ranks - 1 - r : r;
    const rankNumber = ranks - row;
    html.push(`<tr><th>${rankNumber}</th>`);
    for (let f = 0; f < files; f++) {
      const file = flipped ? files - 1 - f : f;
      const piece = rows[row][file];
      const name = squareName(file, rankNumber);
      const classes = [];
      if (piece && !isFirst(piece)) classes.push("second");
      if (name === state.selected) classes.push("from");
      if (targets.has(name)) classes.push("to");
      if (last && (name === last.to || name === last.from)) classes.push("last");
      html.push(`<td data-square="${name}" class="${classes.join(" ")}">${piece ? escapeHtml(piece) : ""}</td>`);
    }
    html.push("</tr>");
  }
  const footer = [];
  for (let f = 0; f < files; f++) footer.push(`<th>${String.fromCharCode(97 + (flipped ? files - 1 - f : f))}</th>`);
  html.push(`<tr><th></th>${footer.join("")}</tr>`);
  $("board").innerHTML = html.join("");
  $("board").className = files > 9 ? "small" : "";

  // Hands: upper case = first player's pieces in hand.
  const firstHand = [], secondHand = [];
  for (const m of hands.matchAll(/(\d*)([A-Za-z])/g)) {
    const count = m[1] ? Number(m[1]) : 1;
    for (let i = 0; i < count; i++) (m[2] === m[2].toUpperCase() ? firstHand : secondHand).push(m[2]);
  }
  const handHtml = (pieces) => pieces.map((p) => {
    const key = "drop:" + p.toUpperCase();
    return sources.has(key) ? `<button data-drop="${key}">${p}</button>` : `<span>${p} </span>`;
  }).join("");
  $(flipped ? "hand-top" : "hand-bottom").innerHTML = handHtml(firstHand);
  $(flipped ? "hand-bottom" : "hand-top").innerHTML = handHtml(secondHand);

  const players = g.players;
  $("game-title").textContent = `${g.variant}: ${players.first.name} vs ${players.second.name} (${g.id})`;
  $("game-status").textContent = g.status === "finished"
    ? `${g.result ?? "aborted"} — ${g.termination}`
    : `${g.turn} to move${mine ? " (you)" : ""}`;
  $("moves").innerHTML = g.displays.map((d) => `<li>${escapeHtml(d)}</li>`).join("");
  drawChoices(legal);
  drawClocks();
  drawChat();
}

function drawChoices(legal) {
  const g = state.game;
  let options = [];
  if (state.pendingTo) {
    options = legal.filter((u) => {
      const p = moveParts(u);
      return p.from === state.selected && p.to === state.pendingTo;
    });
  }
  const other = legal.filter((u) => !moveParts(u).to);  // passes and other square-less moves
  const all = `<details><summary>all ${legal.length} legal moves</summary>` +
    legal.map((u) => `<button data-move="${u}">${u}</button>`).join("") + "</details>";
  $("choices").innerHTML = (options.length > 1 ? "choose: " + options.map((u) => `<button data-move="${u}">${u}</button>`).join("") : "") +
    other.map((u) => `<button data-move="${u}">${u}</button>`).join("") + (legal.length && g ? all : "");
}

function playMove(uci) {
  const g = state.game;
  send("move", { game: g.id, ply: g.ply + 1, move: uci });
  state.selected = null;
  state.pendingTo = null;
}

$("board").addEventListener("click", (e) => {
  const cell = e.target.closest("td");
  const g = state.game;
  if (!cell || !g) return;
  const square = cell.dataset.square;
  if (state.selected) {
    const matches = g.legal.filter((u) => {
      const p = moveParts(u);
      return p.from === state.selected && p.to === square;
    });
    if (matches.length === 1) { playMove(matches[0]); return; }
    if (matches.length > 1) { state.pendingTo = square; drawGame(); return; }
  }
  state.pendingTo = null;
  state.selected = g.legal.some((u) => moveParts(u).from === square) ? square : null;
  drawGame();
});

$("board-wrap").addEventListener("click", (e) => {
  const key = e.target.dataset && e.target.dataset.drop;
  if (key) { state.selected = key; state.pendingTo = null; drawGame(); }
});
$("choices").addEventListener("click", (e) => {
  const uci = e.target.dataset && e.target.dataset.move;
  if (uci) playMove(uci);
});
$("actions").addEventListener("click", (e) => {
  const action = e.target.dataset && e.target.dataset.action;
  const g = state.game;
  if (!action || !g) return;
  send(action, { game: g.id });
  if (action === "leave") { state.game = null; drawGame(); }
});
$("chat-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const g = state.game;
  const text = $("chat-text").value.trim();
  if (g && text) send("chat", { game: g.id, text });
  $("chat-text").value = "";
});

// ---------------------------------------------------------------- clocks and chat

function formatClock(c, running, elapsed) {
  if (!c) return "";
  let ms = c.ms, periods = c.periods, period = c.period_ms;
  if (running) {
    if (ms > 0) { ms = Math.max(0, ms - elapsed); }
    else if (period !== undefined) { period = Math.max(0, period - elapsed); }
  }
  const s = Math.ceil(ms / 1000);
  let text = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
  if (periods !== undefined) text += ` + ${periods}×${Math.ceil((period ?? 0) / 1000)}s`;
  return text;
}

function drawClocks() {
  const g = state.game;
  if (!g || !g.clocks) return;
  const elapsed = g.status === "started" ? Date.now() - g.clockAt : 0;
  const flipped = g.role === "second";
  for (const [side, id] of [["first", flipped ? "clock-top" : "clock-bottom"],
                            ["second", flipped ? "clock-bottom" : "clock-top"]]) {
    const running = g.clocks.running === side;
    $(id).textContent = `${g.players[side].name}  ${formatClock(g.clocks[side], running, elapsed)}`;
    $(id).className = "clock" + (running ? " running" : "");
  }
}

function drawChat() {
  const g = state.game;
  if (!g) return;
  $("chat-log").innerHTML = g.chat.map((c) => `<div><b>${escapeHtml(c.user)}</b>: ${escapeHtml(c.text)}</div>`).join("");
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

setInterval(drawClocks, 250);
connect();
