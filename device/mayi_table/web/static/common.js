// Shared by the scoreboard and the host page: card drawing, score sheet, chart, live updates.
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const SEAT_COLOURS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#bfef45"];

function esc(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "html") node.innerHTML = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children || []) if (c !== null && c !== undefined) node.append(c);
  return node;
}

// A card as written in the record ("10H", "JK", "JK:7H") drawn as a small face: rank + suit, red or black.
function cardEl(text, extraClass) {
  const [card, role] = String(text).split(":");
  const node = el("span", { class: "card" + (extraClass ? " " + extraClass : ""), title: text });
  if (card === "JK") {
    node.classList.add("joker");
    node.append(el("b", { text: "\u2605" }), el("i", { text: role ? role.replace(/[SHDC]$/, (s) => SUITS[s]) : "JK" }));
    return node;
  }
  const suit = card.slice(-1);
  const rank = card.slice(0, -1);
  node.classList.add(suit === "H" || suit === "D" ? "red" : "black");
  node.append(el("b", { text: rank }), el("i", { text: SUITS[suit] || suit }));
  return node;
}

function cardsEl(cards, cls) {
  return el("span", { class: cls || "cards" }, cards.map((c) => cardEl(c)));
}

function roundTitle(game) {
  if (!game) return "No game yet";
  if (game.complete) return "Game over";
  const r = game.round;
  if (!r) return `Round 1 - ${game.contracts[0] || ""}`.trim();
  const name = r.number === "tiebreak" ? "Tie-break round" : `Round ${r.number}`;
  return `${name} - ${r.contract}`;
}

function seatColour(game, seat) {
  return SEAT_COLOURS[game.seats.indexOf(seat) % SEAT_COLOURS.length];
}

// A short sentence for an event line, for flags and the history.
function describe(ev) {
  if (!ev) return "nothing readable";
  switch (ev.type) {
    case "game": return `new game: ${ev.profile}, ${ev.seats.join(", ")}`;
    case "deal": return `round ${ev.round} dealt by ${ev.dealer}, upcard ${ev.upcard}`;
    case "draw": return `${ev.seat} draws from the ${ev.from}` + (ev.card ? ` (${ev.card})` : "");
    case "buy": return `${ev.seat} buys the discard` + (ev.penalty ? ` (penalty ${ev.penalty})` : "");
    case "open": return `${ev.seat} lays down ${ev.melds.map((m) => m.join(" ")).join(" | ")}`;
    case "layoff": return `${ev.seat} lays ${ev.cards.join(" ")} on meld ${ev.meld + 1}`;
    case "discard": return `${ev.seat} discards ${ev.card}`;
    case "round_end": return "hands shown: " + Object.entries(ev.hands).map(([s, h]) => `${s} ${h.join(" ") || "out"}`).join("; ");
    default: return JSON.stringify(ev);
  }
}

function scoreSheet(game) {
  const table = el("table", { class: "sheet" });
  const head = el("tr", {}, [el("th", { text: "Rd" }), ...game.seats.map((s) => el("th", { text: s, style: `border-bottom-color:${seatColour(game, s)}` }))]);
  table.append(el("thead", {}, [head]));
  const body = el("tbody");
  for (const r of game.scores) {
    body.append(el("tr", {}, [
      el("td", { text: r.round === "tiebreak" ? "TB" : r.round }),
      ...game.seats.map((s) => el("td", { class: r.went_out === s ? "out" : "", text: s in r.scores ? r.scores[s] : "" })),
    ]));
  }
  table.append(body);
  const leaders = new Set(game.leaders);
  table.append(el("tfoot", {}, [el("tr", {}, [
    el("td", { text: "Total" }),
    ...game.seats.map((s) => el("td", { class: leaders.has(s) ? "leader" : "", text: game.totals[s] })),
  ])]));
  return table;
}

// Cumulative score per seat after each round, as an inline SVG line chart.
function scoreChart(game, width, height) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", "cumulative scores per round");
  const rounds = game.scores.length;
  const pad = { l: 48, r: 12, t: 12, b: 28 };
  const cum = {};
  let top = 10;
  for (const s of game.seats) {
    let t = 0;
    cum[s] = [0];
    for (const r of game.scores) { t += r.scores[s] || 0; cum[s].push(t); }
    top = Math.max(top, t);
  }
  const steps = Math.max(rounds, 1);
  const x = (i) => pad.l + (i * (width - pad.l - pad.r)) / steps;
  const y = (v) => height - pad.b - (v * (height - pad.t - pad.b)) / top;
  const add = (tag, attrs, text) => {
    const n = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, v);
    if (text !== undefined) n.textContent = text;
    svg.append(n);
    return n;
  };
  for (const frac of [0, 0.5, 1]) {
    const v = Math.round(top * frac);
    add("line", { x1: pad.l, x2: width - pad.r, y1: y(v), y2: y(v), class: "grid" });
    add("text", { x: pad.l - 6, y: y(v) + 5, "text-anchor": "end", class: "axis" }, v);
  }
  for (let i = 1; i <= rounds; i++) add("text", { x: x(i), y: height - 6, "text-anchor": "middle", class: "axis" }, game.scores[i - 1].round === "tiebreak" ? "TB" : i);
  for (const s of game.seats) {
    const pts = cum[s].map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    add("polyline", { points: pts, fill: "none", stroke: seatColour(game, s), "stroke-width": 4, "stroke-linejoin": "round" });
    const last = cum[s].length - 1;
    add("circle", { cx: x(last), cy: y(cum[s][last]), r: 5, fill: seatColour(game, s) });
  }
  return svg;
}

function deviceText(dev) {
  if (dev.camera_ok === null) return { cls: "unknown", text: "camera: not started" };
  if (!dev.camera_ok) {
    const since = dev.camera_outage_since ? new Date(dev.camera_outage_since).toLocaleTimeString() : "?";
    return { cls: "bad", text: `camera down since ${since}` + (dev.camera_last_error ? `: ${dev.camera_last_error}` : "") };
  }
  return { cls: "ok", text: `camera ok \u00b7 ${dev.frames_processed} frames` + (dev.recognizer_backend ? ` \u00b7 ${dev.recognizer_backend}` : "") };
}

// Live updates: a snapshot on connect, then one change per version. EventSource reconnects by itself;
// the server answers a reconnect with a fresh snapshot, and older versions are ignored.
function connectLive(onState, onConnection) {
  let version = -1;
  let source = null;
  const handle = (e) => {
    const msg = JSON.parse(e.data);
    if (e.type === "change" && msg.version <= version) return;
    version = msg.version;
    onState(msg.state, msg.change || null);
  };
  const open = () => {
    source = new EventSource("/api/live");
    source.addEventListener("snapshot", handle);
    source.addEventListener("change", handle);
    source.onopen = () => onConnection(true);
    source.onerror = () => {
      onConnection(false);
      if (source.readyState === EventSource.CLOSED) setTimeout(open, 2000); // the server ended it: start over
    };
  };
  open();
  return () => version;
}
