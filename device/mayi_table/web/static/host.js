// The host tablet: PIN login, game setup, round control, flag review, corrections, record download.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let editing = null; // the history seq being edited: its row is not redrawn under the host's fingers
let flagKey = "";
let live = false;

function say(text, kind) {
  const m = $("message");
  m.textContent = text;
  m.className = kind || "info";
}

async function api(method, url, body) {
  const res = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (res.status === 401) { showLogin("Your session has ended; enter the PIN again."); throw new Error("locked"); }
  if (!res.ok) {
    const detail = data && data.detail ? (typeof data.detail === "string" ? data.detail : data.detail.map((d) => `${d.loc.join(".")}: ${d.msg}`).join("; ")) : res.statusText;
    say(detail, "error");
    throw new Error(detail);
  }
  return data;
}

function showLogin(note) {
  $("controls").hidden = true;
  $("login").hidden = false;
  $("loginmsg").textContent = note || "";
  $("pin").focus();
}

function showControls() {
  $("login").hidden = true;
  $("controls").hidden = false;
  if (!live) {
    live = true;
    connectLive((s) => { state = s; render(); }, (up) => { if (!up) say("reconnecting to the table...", "error"); else say("", "info"); });
    setInterval(refreshCamera, 2000);
    refreshCamera();
  }
}

$("login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const res = await fetch("/api/host/login", { method: "POST", credentials: "same-origin", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ pin: $("pin").value }) });
  const data = await res.json().catch(() => ({}));
  $("pin").value = "";
  if (res.ok) showControls();
  else $("loginmsg").textContent = data.detail || res.statusText;
});

$("logout").addEventListener("click", async () => { await fetch("/api/host/logout", { method: "POST", credentials: "same-origin" }); showLogin("Locked."); });

function parseCards(text) { return text.split(/[\s,]+/).filter(Boolean); }

function parseJson(text) {
  try { return JSON.parse(text); } catch (e) { say("that is not a JSON object: " + e.message, "error"); throw e; }
}

function renderFlags() {
  const box = $("flagbox");
  const key = state.flags.map((f) => f.seq).join(",");
  if (key === flagKey) return;
  flagKey = key;
  box.replaceChildren();
  for (const f of state.flags) {
    const text = el("textarea", {}, []);
    text.value = f.event ? JSON.stringify(f.event) : "";
    box.append(el("div", { class: "flag", "data-seq": f.seq }, [
      f.has_image ? el("img", { src: `/api/flags/${f.seq}/image`, alt: "camera crop" }) : null,
      el("div", { class: "flag-title", text: `Flag ${f.seq}: ${f.reason}` }),
      el("p", { text: "The camera read: " + describe(f.event) }),
      text,
      el("p", {}, [
        el("button", { type: "button", class: "confirm", onclick: () => act(api("POST", `/api/host/flags/${f.seq}/confirm`, {}), "confirmed") }, ["Confirm as read"]),
        " ",
        el("button", { type: "button", class: "secondary confirm-edit", onclick: () => act(api("POST", `/api/host/flags/${f.seq}/confirm`, { event: parseJson(text.value) }), "corrected and confirmed") }, ["Confirm my edit"]),
        " ",
        el("button", { type: "button", class: "danger dismiss", onclick: () => act(api("POST", `/api/host/flags/${f.seq}/dismiss`, { reason: "dismissed by the host" }), "dismissed") }, ["Dismiss"]),
      ]),
    ]));
  }
}

async function act(promise, done) {
  try { await promise; say(done, "info"); } catch (e) { /* say() showed the server's reason */ }
}

function renderRound() {
  const game = state.game;
  $("title").textContent = roundTitle(game);
  const info = $("roundinfo");
  info.replaceChildren();
  const dealing = game && !game.complete && game.next_round !== null;
  $("dealform").hidden = !dealing;
  const r = game && game.round;
  const ending = !!(r && r.over && r.observed && r.shown_hands === null);
  $("endform").hidden = !ending;
  if (state.journal_error) info.append(el("p", { class: "error", text: state.journal_error }));
  if (!game) { info.append(el("p", { text: "No game yet: set one up below." })); return; }
  if (dealing) {
    $("dealtitle").textContent = `Start round ${game.next_round}: ${game.next_contract || ""}`;
    const sel = $("dealer");
    const want = game.next_dealer || game.seats[0];
    const seatsKey = game.seats.join("|") + "|" + want;
    if (sel.dataset.key !== seatsKey) {
      sel.replaceChildren(...game.seats.map((s) => el("option", { value: s, selected: s === want, text: s })));
      sel.dataset.key = seatsKey;
    }
  }
  if (ending) {
    const box = $("endhands");
    if (box.dataset.key !== String(r.number)) {
      box.dataset.key = String(r.number);
      box.replaceChildren(...r.players.map((s) => el("label", {}, [`${s} (${r.hand_counts[s]} cards) `, el("input", { "data-seat": s, size: 30, placeholder: r.went_out === s ? "went out" : "e.g. KS 7H JK" })])));
    }
  }
  if (r) {
    info.append(el("p", { text: r.over ? (r.went_out ? `${r.went_out} went out.` : "The round ended without a winner.") : `${r.turn} ${r.phase === "draw" ? "to draw" : "to play"} \u00b7 dealer ${r.dealer}` }));
    const top = r.discard_top ? cardsEl([r.discard_top]) : "empty";
    info.append(el("p", {}, ["Discard: ", top, ` \u00b7 stock ${r.stock_count}`]));
    r.melds.forEach((m, i) => info.append(el("div", {}, [`${i + 1}. ${m.owner}: `, cardsEl(m.cards)])));
  }
  if (game.complete) info.append(el("p", { text: `Game over. Winner${game.winners.length > 1 ? "s" : ""}: ${game.winners.join(", ")}` }));
  $("sheet").replaceChildren(scoreSheet(game));
  $("chart").replaceChildren(scoreChart(game, 600, 220));
}

async function renderHistory() {
  if (editing !== null) return;
  let items;
  try { items = await api("GET", "/api/host/history"); } catch (e) { return; }
  if (editing !== null) return;
  const list = $("history");
  list.replaceChildren(...items.slice(-60).reverse().map((it) => {
    const li = el("li", { "data-seq": it.seq }, [el("span", { class: "seq", text: `#${it.seq}` }), describe(it.event)]);
    li.append(el("button", { type: "button", class: "secondary edit", onclick: () => editEvent(li, it) }, ["Edit"]));
    return li;
  }));
}

function editEvent(li, it) {
  editing = it.seq;
  const text = el("textarea", {});
  text.value = JSON.stringify(it.event);
  const save = el("button", { type: "button", class: "save", onclick: async () => {
    try {
      await api("PUT", `/api/host/events/${it.seq}`, { event: parseJson(text.value) });
      say(`event #${it.seq} corrected`, "info");
      editing = null;
      renderHistory();
    } catch (e) { /* the reason is shown; the editor stays open */ }
  } }, ["Save"]);
  const cancel = el("button", { type: "button", class: "secondary", onclick: () => { editing = null; renderHistory(); } }, ["Cancel"]);
  li.replaceChildren(el("span", { class: "seq", text: `#${it.seq}` }), text, save, cancel);
}

function render() {
  if (!state) return;
  renderFlags();
  renderRound();
  renderHistory();
}

$("dealform").addEventListener("submit", (e) => {
  e.preventDefault();
  act(api("POST", "/api/host/deal", { upcard: $("upcard").value.trim(), dealer: $("dealer").value || null }).then(() => { $("upcard").value = ""; }), "round started");
});

$("endform").addEventListener("submit", (e) => {
  e.preventDefault();
  const hands = {};
  for (const input of $("endhands").querySelectorAll("input")) hands[input.dataset.seat] = parseCards(input.value);
  act(api("POST", "/api/host/round-end", { hands }), "round scored");
});

$("undo").addEventListener("click", () => {
  if (confirm("Remove the last recorded event?")) act(api("POST", "/api/host/undo"), "last event undone");
});

$("addform").addEventListener("submit", (e) => {
  e.preventDefault();
  act(api("POST", "/api/host/events", { event: parseJson($("addevent").value) }).then(() => { $("addevent").value = ""; }), "event recorded");
});

$("gameform").addEventListener("submit", (e) => {
  e.preventDefault();
  const variants = [...$("variants").querySelectorAll("input:checked")].map((i) => i.value);
  const body = {
    profile: $("profile").value,
    variants,
    seats: $("seatnames").value.split("\n").map((s) => s.trim()).filter(Boolean),
    first_dealer: $("firstdealer").value.trim() || null,
    abandon: $("abandon").checked,
  };
  act(api("POST", "/api/host/game", body).then(() => { $("abandon").checked = false; }), "new game started");
});

function refreshCamera() {
  if ($("controls").hidden) return;
  const img = $("camera");
  const probe = new Image();
  probe.onload = () => { img.src = probe.src; img.hidden = false; $("cameranote").textContent = ""; };
  probe.onerror = () => { img.hidden = true; $("cameranote").textContent = "No camera frame yet."; };
  probe.src = "/api/host/camera.jpg?t=" + Date.now();
}

async function init() {
  const prof = await fetch("/api/profiles").then((r) => r.json());
  $("variants").replaceChildren(...prof.variants.map((v) => el("label", {}, [el("input", { type: "checkbox", value: v }), " " + v])));
  $("seatnames").value = "Seat 1\nSeat 2\nSeat 3\nSeat 4";
  const res = await fetch("/api/host/session", { credentials: "same-origin" });
  if (res.ok) showControls();
  else showLogin();
}
init();
