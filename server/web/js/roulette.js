// The roulette player's page: the layout (every combination one click away: numbers for a
// plein, the lines between them for chevaux, their corners for carrés, the outer edge for
// transversales and sixains), the racetrack with the announced bets, chips, rebet, double
// and undo; the phase, the betting countdown, the history, prisoners, the result and the
// player's win and balance. What the player may send comes from the view's `legal` list
// (the table's own phase table): the page never re-derives the rules.
import { api, requireLogin } from "./api.js";
import { Live, tableSocket } from "./live.js";
import { verifySpin } from "./fair.js";
import { $, answered, countdown, h, money, params, say, showError, toMinor, topBar } from "./ui.js";

const TABLE = params.get("table") || "";

// The single-zero wheel (roulette/layout.py WHEEL, RED): geometry and colours only.
const WHEEL = [0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10,
  5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26];
const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);
const colour = (n) => (n === 0 ? "green" : RED.has(n) ? "red" : "black");
const range = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

// The six simple chances in their place on the layout, with the numbers each covers.
const SIMPLE = [
  ["manque", "1-18", range(1, 18)],
  ["pair", "Pair", range(1, 18).map((x) => 2 * x)],
  ["rouge", "Rouge", [...RED]],
  ["noir", "Noir", range(1, 36).filter((x) => !RED.has(x))],
  ["impair", "Impair", range(1, 18).map((x) => 2 * x - 1)],
  ["passe", "19-36", range(19, 36)],
];
// Chip values in whole units of the table currency (minor units: x 100).
const CHIP_UNITS = [5, 10, 25, 100, 500];
const PHASES = {
  closed: "Table closed",
  open: "Faites vos jeux",
  launched: "The ball is running: late bets wait for the chef de table",
  no_more_bets: "Rien ne va plus",
  settled: "Spin settled",
  suspended: "Play suspended",
};
const CLOCK = {
  launch_ball: "Bets close", open_spin: "Next spin", no_more_bets: "Rien ne va plus", result: "Result",
};

const st = {
  me: null,
  player: false, // only a player bets from this page; staff and others watch
  view: null,
  seq: -1,
  currency: "",
  chip: 0,
  custom: false,
  chipsFor: "", // the minimum/currency the chip row was built for
  spots: new Map(), // spot name -> {el, numbers}
  race: new Map(), // number -> racetrack element
  result: null, // {spin, number}
  lastBets: null, // {spin, bets}: the bets the result decided, left on show until the next spin
  win: null, // {round, won, returned, staked, mine, prison, done}
  doubling: false, // a Double in progress (one wager after the other)
  revealed: null, // the spin_revealed or spin_refunded of the last RNG spin (checked in the page)
};

const main = $("#main");
let live = null; // the socket, once logged in

// ---------------------------------------------------------------- helpers

function setVars(el, vars) {
  for (const [k, v] of Object.entries(vars)) el.style.setProperty(`--${k}`, String(v));
  return el;
}

// A chip label: whole units, "1.5k" above a thousand.
function short(minor) {
  const units = minor / 100;
  if (st.currency === "PTS") return String(minor);
  if (units >= 1000) return `${+(units / 1000).toFixed(1)}k`;
  return Number.isInteger(units) ? String(units) : units.toFixed(2);
}

const fmt = (minor) => money(minor, st.currency);
const legal = (cmd) => st.player && !!st.view && (st.view.legal || []).includes(cmd);
const myBets = () => (st.view ? st.view.bets.filter((b) => b.player === st.me.id) : []);
const myOpenBets = () => myBets().filter((b) => !b.prison && b.spin === st.view.spin);

// Every click is its own command (its own cid): quick clicks are all sent, each answered.
async function play(command, okText) {
  const answer = await live.play(TABLE, command);
  const ok = answered(answer, okText);
  if (ok) {
    refreshSoon();
    refreshBalance();
  }
  return ok;
}

// ---------------------------------------------------------------- the layout

function spotEl(tag, cls, name, numbers, label, vars = {}) {
  const el = h(tag, { class: `spot ${cls}`, dataset: { spot: name }, title: name, role: "button",
    "aria-label": name, tabindex: "0" }, label === null ? null : h("span", { class: "lbl" }, label));
  setVars(el, vars);
  el.addEventListener("click", (ev) => {
    ev.stopPropagation();
    bet(name);
  });
  el.addEventListener("keydown", (ev) => {
    if (ev.target !== el || (ev.key !== "Enter" && ev.key !== " ")) return;
    ev.preventDefault();
    bet(name);
  });
  st.spots.set(name, { el, numbers: new Set(numbers) });
  return el;
}

function edge(cell, cls, name, numbers) {
  cell.append(spotEl("span", `edge ${cls}`, name, numbers, null));
}

function numberCell(n) {
  const col = Math.ceil(n / 3);
  const inRow = (n - 1) % 3; // 0: 1-4-7 ... (near the player), 2: 3-6-9 ...
  const el = spotEl("div", `num ${colour(n)}`, `plein ${n}`, [n], String(n), {
    wc: col + 1, wr: 3 - inRow, pc: 3 + inRow, pr: 1 + col,
  });
  el.dataset.number = n;
  if (n % 3 !== 0) edge(el, "e-next", `cheval ${n}/${n + 1}`, [n, n + 1]);
  if (n <= 33) edge(el, "e-col", `cheval ${n}/${n + 3}`, [n, n + 3]);
  if (n % 3 !== 0 && n <= 33) edge(el, "e-carre", `carré ${n}-${n + 1}-${n + 3}-${n + 4}`, [n, n + 1, n + 3, n + 4]);
  if (n % 3 === 1) edge(el, "e-street", `transversale ${n}-${n + 1}-${n + 2}`, [n, n + 1, n + 2]);
  if (n % 3 === 1 && n <= 31) edge(el, "e-six", `sixain ${n}-${n + 5}`, range(n, n + 5));
  if (n <= 3) edge(el, "e-zero", `cheval 0/${n}`, [0, n]);
  if (n === 1) {
    edge(el, "e-trio", "transversale 0-1-2", [0, 1, 2]);
    edge(el, "e-four", "quatre premiers", [0, 1, 2, 3]);
  }
  if (n === 2) edge(el, "e-trio", "transversale 0-2-3", [0, 2, 3]);
  return el;
}

function board() {
  const cells = [spotEl("div", "num green zero", "plein 0", [0], "0", { wc: 1, wr: "1 / span 3", pc: "3 / span 3", pr: 1 })];
  cells[0].dataset.number = 0;
  for (let n = 1; n <= 36; n++) cells.push(numberCell(n));
  for (const c of [1, 2, 3]) {
    cells.push(spotEl("div", "out colonne", `colonne ${c}`, range(0, 11).map((k) => c + 3 * k), "2 to 1",
      { wc: 14, wr: 4 - c, pc: 2 + c, pr: 14 }));
  }
  const dozens = ["1st 12", "2nd 12", "3rd 12"];
  for (const d of [1, 2, 3]) {
    cells.push(spotEl("div", "out douzaine", `douzaine ${d}`, range(12 * d - 11, 12 * d), dozens[d - 1],
      { wc: `${4 * d - 2} / span 4`, wr: 4, pc: 2, pr: `${4 * d - 2} / span 4` }));
  }
  SIMPLE.forEach(([name, label, nums], i) => {
    const el = spotEl("div", `out simple s-${name}`, name, nums, name === "rouge" || name === "noir" ? "" : label,
      { wc: `${2 + 2 * i} / span 2`, wr: 5, pc: 1, pr: `${2 + 2 * i} / span 2` });
    if (name === "rouge" || name === "noir") el.prepend(h("span", { class: `diamond ${name}`, "aria-hidden": "true" }));
    cells.push(el);
  });
  return h("div", { class: "rl-board", id: "board" }, ...cells);
}

// The racetrack: the wheel laid flat, clockwise from the top left; 0 at the right end.
function racetrack() {
  const items = [];
  const top = WHEEL.slice(19); // 5 ... 26
  const bottom = WHEEL.slice(1, 19).reverse(); // 10 ... 32 (left to right)
  const add = (n, rc, rr, cls = "") => {
    const el = h("button", { type: "button", class: `rt ${colour(n)} ${cls}`, dataset: { race: n },
      title: `${n} and its neighbours` }, String(n));
    setVars(el, { rc, rr });
    el.addEventListener("click", () => neighboursBet(n));
    st.race.set(n, el);
    items.push(el);
  };
  top.forEach((n, i) => add(n, i + 1, 1));
  bottom.forEach((n, i) => add(n, i + 1, 3));
  add(0, 19, "1 / span 3", "end");
  st.race.get(top[0]).classList.add("first-top");
  st.race.get(bottom[0]).classList.add("first-bottom");
  const section = (id, label, rc, title) => {
    const el = h("button", { type: "button", class: "rt-sec", id, dataset: { cmd: "place_announced" }, title },
      label);
    setVars(el, { rc, rr: 2 });
    items.push(el);
    return el;
  };
  section("announce-tiers", "Tiers", "1 / span 6", "tiers du cylindre: 6 chevaux").addEventListener("click",
    () => announce("tiers du cylindre"));
  section("announce-orphelins", "Orphelins", "7 / span 4", "orphelins: 1 plein, 4 chevaux").addEventListener("click",
    () => announce("orphelins"));
  section("announce-voisins", "Voisins du zéro", "11 / span 8", "voisins du zéro: 9 pieces").addEventListener("click",
    () => announce("voisins du zéro"));
  return h("div", { class: "rl-track", id: "racetrack", "aria-label": "Racetrack" }, ...items);
}

function announcedControls() {
  const digit = h("select", { id: "finale-digit", "aria-label": "Finale en plein: last digit" },
    ...range(0, 9).map((d) => h("option", { value: d }, String(d))));
  const pairs = [...range(0, 8).map((a) => `${a}/${a + 1}`), ...range(0, 6).map((a) => `${a}/${a + 3}`)];
  const cheval = h("select", { id: "finale-cheval", "aria-label": "Finale à cheval: two last digits" },
    ...pairs.map((p) => h("option", { value: p }, p)));
  const count = h("select", { id: "neighbours", "aria-label": "Neighbours each side" },
    ...[1, 2, 3, 4].map((k) => h("option", { value: k, selected: k === 2 }, String(k))));
  return h("div", { class: "row announced" },
    h("label", { class: "inline" }, "Finale ", digit),
    h("button", { type: "button", id: "announce-finale", dataset: { cmd: "place_announced" },
      onclick: () => announce(`finale en plein ${digit.value}`) }, "Finale en plein"),
    h("label", { class: "inline" }, "à cheval ", cheval),
    h("button", { type: "button", id: "announce-finale-cheval", dataset: { cmd: "place_announced" },
      onclick: () => announce(`finale à cheval ${cheval.value}`) }, "Finale à cheval"),
    h("label", { class: "inline" }, "Neighbours each side ", count),
    h("span", { class: "muted hint" }, "click a number on the racetrack"));
}

// ---------------------------------------------------------------- chips and actions

function chipValues(minimum) {
  const base = CHIP_UNITS.map((u) => (st.currency === "PTS" ? u : u * 100));
  let vals = base.filter((v) => v >= minimum);
  if (!vals.length) vals = [1, 2, 5, 10, 50].map((k) => k * minimum);
  if (vals[0] !== minimum) vals.unshift(minimum);
  return vals.slice(0, 6);
}

function buildChips() {
  const s = st.view.settings;
  const key = `${s.currency}:${s.minimum}`;
  if (st.chipsFor === key) return;
  st.chipsFor = key;
  const vals = chipValues(s.minimum);
  if (!vals.includes(st.chip) && !st.custom) st.chip = vals[0];
  const row = $("#chips");
  const custom = h("input", { id: "chip-custom", inputmode: "decimal", placeholder: "other", "aria-label":
    `Other amount (${s.currency})`, size: 6 });
  custom.addEventListener("input", () => {
    const v = toMinor(custom.value);
    st.custom = custom.value.trim() !== "";
    if (st.custom) st.chip = v || 0;
    else st.chip = vals[0];
    markChip();
  });
  row.replaceChildren(...vals.map((v) => h("button", {
    type: "button", class: `chip c${vals.indexOf(v)}`, id: `chip-${v}`, dataset: { amount: v },
    title: fmt(v), "aria-pressed": "false",
    onclick: () => { st.chip = v; st.custom = false; custom.value = ""; markChip(); },
  }, short(v))), custom);
  markChip();
}

function markChip() {
  for (const b of document.querySelectorAll("#chips button.chip")) {
    b.setAttribute("aria-pressed", String(!st.custom && Number(b.dataset.amount) === st.chip));
  }
  $("#chip-custom").classList.toggle("active", st.custom);
  $("#chip-now").textContent = st.chip ? `Chip ${fmt(st.chip)}` : "Chip: enter an amount";
}

function needChip() {
  if (st.chip > 0) return true;
  say("Choose a chip, or enter an amount such as 5.00.", "error");
  return false;
}

function bet(spot) {
  if (!st.player) return say("You are watching this table: only players bet here.", "info");
  if (!legal("place_bet")) return say(`No bets now: ${PHASES[st.view.phase] || st.view.phase}.`, "info");
  if (!needChip()) return;
  play({ type: "place_bet", spot, amount: st.chip }, `${fmt(st.chip)} on ${spot}`);
}

function announce(name) {
  if (!st.player || !legal("place_announced")) return say("No announced bets now.", "info");
  if (!needChip()) return;
  play({ type: "place_announced", announce: name, unit: st.chip }, `${name}, ${fmt(st.chip)} a piece`);
}

function neighboursBet(n) {
  announce(`${n} et ${$("#neighbours").value} voisins`);
}

async function doubleUp() {
  const bets = myOpenBets();
  if (st.doubling || !bets.length || !legal("place_bet")) return;
  st.doubling = true;
  try {
    for (const b of bets) {
      const ok = await play({ type: "place_bet", spot: b.spot, amount: b.amount });
      if (!ok) return;
    }
    say(`Doubled: ${bets.length} bet(s), ${fmt(bets.reduce((a, b) => a + b.amount, 0))} more`, "ok");
  } finally {
    st.doubling = false;
  }
}

function undo() {
  const bets = myOpenBets();
  if (!bets.length) return;
  const last = bets[bets.length - 1];
  play({ type: "withdraw_bet", wager: last.wager }, `Taken back: ${last.spot}`);
}

function controls() {
  return h("section", { class: "panel controls", id: "controls" },
    h("div", { class: "row" },
      h("div", { class: "chips row", id: "chips" }),
      h("span", { class: "muted", id: "chip-now" })),
    h("div", { class: "row actions" },
      h("button", { type: "button", id: "rebet", dataset: { cmd: "same_again" },
        onclick: () => play({ type: "same_again" }, "Same again: last spin's bets restated") }, "Rebet"),
      h("button", { type: "button", id: "double", dataset: { cmd: "place_bet", mine: "1" }, onclick: doubleUp },
        "Double"),
      h("button", { type: "button", id: "undo", dataset: { cmd: "withdraw_bet", mine: "1" }, onclick: undo },
        "Undo"),
      h("label", { class: "inline", title: "On a zero, take half of a simple chance back (partage) instead of prison" },
        h("input", { type: "checkbox", id: "partage", dataset: { cmd: "set_partage_preference" },
          onchange: (ev) => play({ type: "set_partage_preference", partage: ev.target.checked },
            ev.target.checked ? "Partage on a zero" : "Prison on a zero") }),
        " partage on zero")),
    announcedControls());
}

// ---------------------------------------------------------------- rendering

function page() {
  const status = h("section", { class: "panel rl-status" },
    h("div", { class: "st-phase" }, h("span", { id: "phase", class: "badge" }, ""),
      h("span", { id: "countdown", class: "countdown" }, ""), h("span", { id: "spin", class: "muted" }, ""),
      h("span", { id: "conn", class: "status" }, "")),
    h("div", { class: "st-result" }, h("div", { id: "result", class: "rl-result empty", "aria-live": "polite" }, "–"),
      h("div", { class: "st-money" },
        h("div", {}, "Balance ", h("strong", { id: "balance" }, "")),
        h("div", {}, "On the layout ", h("strong", { id: "staked" }, "")),
        h("div", { id: "win", class: "win" }, ""))),
    h("div", { id: "late", class: "late-list" }),
    // Provably fair (an RNG spin): the commitment before the bets, the reveal checked here after.
    h("div", { id: "fair", class: "fair muted" }));
  const side = h("aside", { class: "rl-side" },
    h("section", { class: "panel" }, h("h2", {}, "Last numbers"), h("div", { class: "history", id: "history" })),
    h("section", { class: "panel" }, h("h2", {}, "En prison"), h("div", { id: "prison" }, h("p", { class: "muted" },
      "No bets en prison."))),
    h("section", { class: "panel" }, h("h2", {}, "Limits"), h("div", { id: "limits", class: "muted" })));
  const felt = h("section", { class: "felt rl-felt", id: "felt" }, h("div", { class: "board-wrap" }, board()),
    racetrack());
  main.classList.add("rl");
  main.replaceChildren(h("div", { class: "rl-main" }, status, felt, st.player ? controls() : h("p", {
    class: "panel muted", id: "watching" }, "You are watching: only players bet from this page.")), side);
}

function render(view) {
  st.view = view;
  st.currency = view.settings.currency;
  if (st.player) buildChips();
  $("#phase").textContent = PHASES[view.phase] || view.phase;
  $("#phase").dataset.phase = view.phase;
  $("#spin").textContent = view.spin ? `spin ${view.spin}` : "";
  countdown($("#countdown"), view.next_automatic, (cmd) => CLOCK[cmd] || cmd);
  if (view.commitment && !st.revealed) {
    $("#fair").textContent = `Spin ${view.spin} is committed: sha256 ${view.commitment.slice(0, 16)}…`;
    $("#fair").title = view.commitment;
  }
  $("#staked").textContent = fmt(view.viewer_staked || 0);
  $("#board").classList.toggle("bettable", legal("place_bet"));
  for (const el of document.querySelectorAll("[data-cmd]")) {
    let off = !legal(el.dataset.cmd);
    if (el.dataset.mine && !myOpenBets().length) off = true;
    el.disabled = off;
  }
  if (st.player) $("#partage").checked = !!view.viewer_partage;
  renderStakes(view);
  renderHistory(view.last_numbers || []);
  renderPrison(view);
  renderLimits(view.settings);
  if (!st.result && view.phase === "settled" && view.last_numbers.length) {
    st.result = { spin: view.spin, number: view.last_numbers[0] };
  }
  if (view.phase === "open" && st.result && st.result.spin !== view.spin) st.result = null;
  renderResult();
}

// The chips on the layout: the bets in the view; once a spin is settled, also the bets its
// result decided (as the croupier leaves the winning chips until he pays), shown faded.
function renderStakes(view) {
  for (const el of document.querySelectorAll(".rl-board .stake, .rl-board .others")) el.remove();
  for (const { el } of st.spots.values()) el.classList.remove("has-mine", "has-prison", "decided");
  const mine = new Map();
  const others = new Map();
  const prison = new Set();
  let bets = view.bets;
  const decided = new Set();
  if (view.phase === "settled" && st.lastBets && st.lastBets.spin === view.spin) {
    const still = new Set(bets.map((b) => b.wager));
    const gone = st.lastBets.bets.filter((b) => !still.has(b.wager));
    for (const b of gone) if (b.player === st.me.id) decided.add(b.spot);
    bets = [...bets, ...gone];
  }
  for (const b of bets) {
    const into = b.player === st.me.id ? mine : others;
    into.set(b.spot, (into.get(b.spot) || 0) + b.amount);
    if (b.prison && b.player === st.me.id) prison.add(b.spot);
  }
  for (const [spot, amount] of others) {
    const s = st.spots.get(spot);
    if (s) s.el.append(h("span", { class: "others", title: `other players: ${fmt(amount)}` }));
  }
  for (const [spot, amount] of mine) {
    const s = st.spots.get(spot);
    if (!s) continue;
    s.el.classList.add("has-mine");
    s.el.classList.toggle("has-prison", prison.has(spot));
    s.el.classList.toggle("decided", decided.has(spot));
    s.el.append(h("span", { class: `stake${prison.has(spot) ? " prison" : ""}`, dataset: { amount },
      title: `your bet: ${fmt(amount)}` }, short(amount)));
  }
}

function renderHistory(numbers) {
  $("#history").replaceChildren(...numbers.slice(0, 18).map((n, i) => h("span", {
    class: `${colour(n)}${i === 0 ? " latest" : ""}`, dataset: { n } }, String(n))));
  if (!numbers.length) $("#history").append(h("p", { class: "muted" }, "No spin yet."));
}

function renderPrison(view) {
  const late = (view.late || []).filter((l) => l.player === st.me.id);
  $("#late").replaceChildren(...late.map((l) => h("div", { class: "late", dataset: { late: l.late } },
    "Late bet waiting for the chef de table: ",
    l.stakes.map((x) => `${x.spot} ${fmt(x.amount)}${x.announced ? " a piece" : ""}`).join(", "))));
  const jailed = view.bets.filter((b) => b.prison);
  const box = $("#prison");
  if (!jailed.length) return box.replaceChildren(h("p", { class: "muted" }, "No bets en prison."));
  const others = ["rouge", "noir", "pair", "impair", "manque", "passe"];
  box.replaceChildren(...jailed.map((b) => {
    const mine = b.player === st.me.id;
    const row = h("div", { class: `prisoner${mine ? " mine" : ""}`, dataset: { wager: b.wager } },
      h("span", {}, `${b.spot} ${fmt(b.amount)}`), mine ? h("strong", { class: "badge" }, "yours") :
        h("span", { class: "muted" }, b.player));
    if (mine && st.player) {
      const to = h("select", { "aria-label": "Move to" }, ...others.filter((o) => o !== b.spot)
        .map((o) => h("option", { value: o }, o)));
      row.append(
        h("button", { type: "button", class: "small", disabled: !legal("choose_partage"),
          onclick: () => play({ type: "choose_partage", wager: b.wager }, "Half taken back") }, "Partage"),
        to,
        h("button", { type: "button", class: "small", disabled: !legal("move_prisoner"),
          onclick: () => play({ type: "move_prisoner", wager: b.wager, to: to.value }, `Moved to ${to.value}`) },
        "Move"));
    }
    return row;
  }));
}

function renderLimits(s) {
  const kinds = [["plein", "Plein"], ["cheval", "Cheval"], ["transversale", "Transversale"], ["carre", "Carré"],
    ["sixain", "Sixain"], ["douzaine", "Douzaine / colonne"], ["simple", "Simple chances"]];
  $("#limits").replaceChildren(h("div", {}, `Minimum ${fmt(s.minimum)}`),
    ...kinds.map(([k, label]) => h("div", {}, `${label}: max ${fmt((s.raised || {})[k] || s.maxima[k])}`)));
}

function renderResult() {
  const el = $("#result");
  for (const { el: s } of st.spots.values()) s.classList.remove("won", "hit");
  for (const r of st.race.values()) r.classList.remove("hit");
  if (!st.result) {
    el.className = "rl-result empty";
    el.textContent = "–";
    delete el.dataset.number;
    return;
  }
  const n = st.result.number;
  el.className = `rl-result ${colour(n)}`;
  el.textContent = String(n);
  el.dataset.number = n;
  for (const [name, s] of st.spots) if (s.numbers.has(n)) s.el.classList.add(name === `plein ${n}` ? "hit" : "won");
  const r = st.race.get(n);
  if (r) r.classList.add("hit");
}

function renderWin() {
  const el = $("#win");
  const w = st.win;
  el.classList.remove("big");
  if (!w || !w.done || !w.mine) {
    el.textContent = "";
    delete el.dataset.won;
    return;
  }
  el.dataset.won = w.won;
  el.dataset.returned = w.returned;
  if (w.won > 0) {
    el.classList.add("big");
    el.replaceChildren(h("span", {}, "You win "), h("strong", { id: "win-amount" }, fmt(w.won)),
      h("span", { class: "muted" }, ` (${fmt(w.won + w.returned)} paid with your stakes)`));
  } else if (w.returned > 0) {
    el.textContent = `${fmt(w.returned)} returned`;
  } else {
    el.textContent = w.prison ? "Your simple chances go en prison" : "No win this spin";
  }
}

async function refreshBalance() {
  if (!st.player) return;
  try {
    const me = await api("GET", "/me");
    const b = me.balance || {};
    $("#balance").textContent = fmt(b.available);
    $("#balance").dataset.available = b.available;
  } catch (e) {
    showError(e);
  }
}

let timer = null;
let asked = 0;
function refreshSoon() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
}

async function refresh() {
  const mine = ++asked;
  try {
    const data = await api("GET", `/tables/${encodeURIComponent(TABLE)}`);
    if (mine !== asked || data.seq < st.seq) return;
    st.seq = data.seq;
    render(data.view);
  } catch (e) {
    showError(e);
  }
}

// ---------------------------------------------------------------- events

async function showVerified(e, number) {
  const el = $("#fair");
  const { ok, why } = await verifySpin(e.commitment, e.seed, TABLE, e.spin, number);
  el.textContent = ok ? `Spin ${e.spin} verified ✓ ${why}; sha256(seed) is the commitment shown before the bets.`
    : `Spin ${e.spin} NOT verified: ${why}`;
  el.title = `seed ${e.seed}`;
  el.dataset.verified = ok ? "yes" : "no";
}

function onEvents(list) {
  let settled = false;
  for (const { round, event: e } of list) {
    const me = st.me.id;
    switch (e.type) {
      case "spin_opened":
        st.revealed = null;
        st.result = null;
        st.lastBets = null;
        st.win = null;
        renderResult();
        renderWin();
        break;
      case "spin_result":
        st.result = { spin: e.spin, number: e.number };
        st.lastBets = { spin: e.spin, bets: e.bets || [] };
        st.win = { round, won: 0, returned: 0, staked: 0, mine: false, prison: false, done: false };
        renderResult();
        renderWin();
        break;
      case "wager_settled":
        if (e.player === me && st.win && !st.win.done) {
          st.win.won += e.won;
          st.win.returned += e.returned;
          st.win.staked += e.stake;
          st.win.mine = true;
        }
        if (e.player === me && !st.win) settled = true; // a partage taken: the wallet moved
        break;
      case "wager_imprisoned":
        if (e.player === me && st.win) {
          st.win.mine = true;
          st.win.prison = true;
        }
        break;
      case "spin_settled":
        if (st.win) st.win.done = true;
        renderWin();
        settled = true;
        break;
      case "spin_revealed":
      case "spin_refunded":
        st.revealed = e;
        showVerified(e, e.type === "spin_revealed" ? e.number : null);
        break;
      case "spin_voided":
        st.result = null;
        renderResult();
        say(`Rien va: spin ${e.spin} is void (${e.reason}); every bet stays on the layout.`, "info");
        break;
      case "wager_voided":
        if (e.player === me) settled = true;
        break;
      case "late_bet_pending":
        if (e.player === me) say("Late bet: it waits for the chef de table.", "info");
        break;
      case "late_bet_accepted":
        if (e.player === me) { say("Your late bet was accepted.", "ok"); settled = true; }
        break;
      case "late_bet_refused":
        if (e.player === me) say(`Your late bet was refused: ${e.reason}`, "error");
        break;
      case "table_suspended":
        say(`Play suspended: ${e.reason}`, "info");
        break;
      case "table_closed":
        say(`The table is closed: ${e.reason}`, "info");
        break;
      default:
        break;
    }
  }
  if (settled) refreshBalance();
  refreshSoon();
}

(async () => {
  try {
    st.me = await requireLogin();
    st.player = st.me.role === "player";
    topBar(st.me, `Roulette · ${TABLE}`);
    if (!TABLE) return say("No table: open this page from the lobby.", "error");
    page();
    live = new Live();
    const data = await api("GET", `/tables/${encodeURIComponent(TABLE)}`);
    live.moveTo(tableSocket(data.table.ws_url));
    st.seq = data.seq;
    render(data.view);
    refreshBalance();
    live.onStatus = (s) => { $("#conn").textContent = s === "connected" ? "" : s; if (s === "connected") refreshSoon(); };
    live.onError = (m) => say(`Error (${m.code}): ${m.message}`, "error");
    live.onRefusal = (m) => answered(m);
    live.subscribe(TABLE, (snap) => {
      if (snap.seq >= st.seq) {
        st.seq = snap.seq;
        render(snap.view);
      }
    }, onEvents);
  } catch (e) {
    if (String(e.message) !== "not logged in") showError(e);
  }
})();
