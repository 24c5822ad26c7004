// The TV scoreboard: only what is face-up on the table, redrawn from each snapshot.
"use strict";

function renderFlags(flags) {
  const box = document.getElementById("flags");
  box.replaceChildren();
  box.hidden = flags.length === 0;
  document.body.classList.toggle("flagged", flags.length > 0);
  for (const f of flags.slice(0, 2)) {
    const img = f.has_image ? el("img", { src: `/api/flags/${f.seq}/image`, alt: "what the camera saw" }) : null;
    box.append(el("div", { class: "flag", "data-seq": f.seq }, [
      img,
      el("div", {}, [
        el("div", { class: "flag-title", text: "Check this, host: " + f.reason }),
        el("div", { class: "flag-event", text: describe(f.event) }),
      ]),
    ]));
  }
  if (flags.length > 2) box.append(el("div", { class: "flag-more", text: `+${flags.length - 2} more` }));
}

function seatRow(game, seat) {
  const r = game.round;
  const row = el("div", { class: "seat", "data-seat": seat });
  const badges = el("span", { class: "badges" });
  if (r && r.dealer === seat) badges.append(el("span", { class: "badge dealer", title: "dealer", text: "D" }));
  if (r && r.turn === seat) {
    row.classList.add("turn");
    badges.append(el("span", { class: "badge turn", text: r.phase === "draw" ? "to draw" : "to play" }));
  }
  if (r && r.went_out === seat) badges.append(el("span", { class: "badge out", text: "went out" }));
  if (game.leaders.includes(seat)) badges.append(el("span", { class: "badge lead", text: "lead" }));
  const info = el("div", { class: "seatinfo" }, [
    el("div", { class: "name" }, [el("span", { class: "swatch", style: `background:${seatColour(game, seat)}` }), seat, badges]),
  ]);
  const facts = [];
  if (r && r.players.includes(seat)) {
    facts.push(`${r.hand_counts[seat]} in hand`);
    if (game.buys_allowed) facts.push(`buys ${r.buys[seat] || 0}${game.buy_limit === null ? "" : "/" + game.buy_limit}`);
  }
  facts.push(`total ${game.totals[seat]}`);
  info.append(el("div", { class: "facts", text: facts.join(" \u00b7 ") }));
  row.append(info);
  const melds = el("div", { class: "melds" });
  if (r) {
    r.melds.forEach((m, i) => {
      if (m.owner === seat) melds.append(el("span", { class: "meld", title: `meld ${i + 1}` }, [el("span", { class: "meldno", text: i + 1 }), ...m.cards.map((c) => cardEl(c))]));
    });
    if (r.shown_hands && seat in r.shown_hands) {
      const cards = r.shown_hands[seat];
      melds.append(el("span", { class: "meld spread" }, cards.length ? cards.map((c) => cardEl(c)) : [el("span", { class: "outnote", text: "out" })]));
    }
  }
  row.append(melds);
  return row;
}

// Shrink cards and their overlap so every seat's melds fit on one line without scrolling.
function fitCards() {
  const seats = document.getElementById("seats");
  const rows = seats.querySelectorAll(".seat");
  if (!rows.length) return;
  const rowH = seats.clientHeight / rows.length;
  const ch = Math.max(24, Math.min(rowH * 0.68, window.innerHeight * 0.11));
  seats.style.setProperty("--ch", ch + "px");
  for (const row of rows) {
    const melds = row.querySelector(".melds");
    melds.style.setProperty("--stride", "0.62");
    const cards = melds.querySelectorAll(".card").length;
    const groups = melds.querySelectorAll(".meld").length;
    if (!cards) continue;
    const cw = ch * 0.7;
    const avail = melds.clientWidth - groups * (ch * 0.55) - 4;
    // a card shows `stride` of its width; the last card of each meld shows whole
    const stride = Math.max(0.18, Math.min(0.62, (avail - groups * cw) / Math.max(1, (cards - groups) * cw)));
    melds.style.setProperty("--stride", stride.toFixed(3));
  }
}

function renderPile(game) {
  const box = document.getElementById("pile");
  box.replaceChildren();
  const r = game.round;
  if (!r) {
    box.append(el("div", { class: "pilebox" }, [el("div", { class: "label", text: game.next_dealer ? `${game.next_dealer} deals first` : "Waiting for the deal" })]));
    return;
  }
  box.append(el("div", { class: "pilebox" }, [
    el("div", { class: "label", text: "Discard" }),
    r.discard_top ? cardEl(r.discard_top, "big") : el("span", { class: "card big empty", text: "" }),
    el("div", { class: "count", text: `${r.discard_count} in pile` }),
  ]));
  box.append(el("div", { class: "pilebox" }, [
    el("div", { class: "label", text: "Stock" }),
    el("span", { class: "card big back" }),
    el("div", { class: "count", text: `${r.stock_count} left` }),
  ]));
}

function render(state) {
  const game = state.game;
  document.getElementById("title").textContent = roundTitle(game);
  const dev = deviceText(state.device);
  const devEl = document.getElementById("device");
  devEl.textContent = dev.text;
  devEl.className = dev.cls;
  renderFlags(state.flags);
  const seats = document.getElementById("seats");
  const turnline = document.getElementById("turnline");
  if (state.journal_error) {
    seats.replaceChildren(el("p", { class: "waiting", text: "The host must correct the record: " + state.journal_error }));
    return;
  }
  if (!game) {
    turnline.textContent = "";
    seats.replaceChildren(el("p", { class: "waiting", html: "Waiting for the host to set up a game on <b>/host</b>." }));
    for (const id of ["pile", "sheetbox", "chartbox"]) document.getElementById(id).replaceChildren();
    return;
  }
  const r = game.round;
  if (game.complete) turnline.textContent = `Winner${game.winners.length > 1 ? "s" : ""}: ${game.winners.join(", ")}`;
  else if (r && r.over) turnline.textContent = (r.went_out ? `${r.went_out} went out` : "no winner this round") + (game.next_round !== null ? ` \u00b7 next: round ${game.next_round}, ${game.next_contract}` : " \u00b7 waiting for the hands");
  else if (r) turnline.textContent = `${r.turn} ${r.phase === "draw" ? "to draw" : "to play"}`;
  else turnline.textContent = "waiting for the deal";
  seats.replaceChildren(...game.seats.map((s) => seatRow(game, s)));
  renderPile(game);
  const sheet = document.getElementById("sheetbox");
  sheet.replaceChildren(scoreSheet(game));
  const chart = document.getElementById("chartbox");
  chart.replaceChildren(scoreChart(game, 600, 260));
  fitCards();
}

let lastState = null;
connectLive((state) => { lastState = state; render(state); }, (up) => {
  document.getElementById("conn").className = "dot " + (up ? "ok" : "bad");
});
window.addEventListener("resize", () => { if (lastState) render(lastState); });
