// The croupier's console (/app/console.html?table=<id>): the table's state, big buttons for
// the commands the view says are legal now (view.legal: the engine's phase table and role
// rules, never re-derived here), a number pad (roulette) or a card picker (blackjack), a
// form for every command of the game built from the AsyncAPI document's x-game-commands,
// and the table's event log. Every refusal is shown with its code in #messages.
import { api, requireLogin } from "./api.js";
import { Live } from "./live.js";
import { $, answered, cardEl, cardName, coalesced, countdown, h, money, params, say, showError, toMinor, topBar } from "./ui.js";

const main = $("#main");
const tableId = params.get("table") || "";
const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);
const colour = (n) => (n === 0 ? "green" : RED.has(n) ? "red" : "black");
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = [["♠", "spades"], ["♥", "hearts"], ["♦", "diamonds"], ["♣", "clubs"]];
const LOG_SIZE = 50;

let me = null;
let table = null; // the table's summary (GET /tables/{id}).table
let view = null; // the latest view (with .legal)
let live = null;
const logEntries = [];

// ---- sending ------------------------------------------------------------------------------

async function send(command, okText) {
  const answer = await live.play(tableId, command);
  const ok = answered(answer, okText || `${command.type}: accepted`);
  refresh();
  return ok;
}

const legal = (type) => !!(view && (view.legal || []).includes(type));

// ---- the view, fresh after every batch of events ---------------------------------------

const refresh = coalesced(async () => {
  const d = await api("GET", `/tables/${encodeURIComponent(tableId)}`);
  table = d.table;
  setView(d.view);
});

function setView(v) {
  view = v;
  renderState();
  renderQuick();
}

// ---- the state panel ----------------------------------------------------------------------

function renderState() {
  const v = view || {};
  $("#phase").textContent = v.phase || "";
  $("#round").textContent = table.game === "roulette" ? `spin ${v.spin ?? ""}` : `round ${v.round ?? ""}`;
  countdown($("#next-auto"), v.next_automatic, (c) => `${c} (automatic)`);
  $("#legal-now").textContent = (v.legal || []).join(", ") || "nothing (not your table, or nothing to do now)";
  const body = $("#summary");
  body.replaceChildren(...(table.game === "roulette" ? rouletteSummary(v) : blackjackSummary(v)));
}

function rouletteSummary(v) {
  const cur = (v.settings || {}).currency || table.currency;
  const bets = v.bets || [];
  const total = bets.reduce((s, b) => s + b.amount, 0);
  const last = (v.last_numbers || []).slice(-18).reverse();
  const parts = [
    h("p", {}, "Last numbers: ",
      h("span", { class: "history", id: "last-numbers" },
        ...last.map((n) => h("span", { class: colour(n) }, String(n))))),
    h("p", {}, `${bets.length} bets, ${money(total, cur)} on the layout`,
      v.prisoners && v.prisoners.length ? `, ${v.prisoners.length} en prison` : "",
      v.derniere ? ` · la dernière: spin ${v.derniere_spin}` : ""),
  ];
  if (bets.length) {
    parts.push(h("table", { class: "grid", id: "bets" },
      h("thead", {}, h("tr", {}, h("th", {}, "Player"), h("th", {}, "Spot"), h("th", { class: "num" }, "Amount"))),
      h("tbody", {}, ...bets.slice(0, 60).map((b) => h("tr", {},
        h("td", {}, b.player), h("td", {}, b.spot, v.prisoners.includes(b.wager) ? " (prison)" : ""),
        h("td", { class: "num" }, money(b.amount, cur)))))));
  }
  const late = v.late || [];
  const lateBox = h("div", { id: "late" }, h("h3", {}, `Late bets (${late.length})`));
  for (const l of late) {
    const stakes = (l.stakes || []).map((s) => `${s.spot} ${money(s.amount, cur)}`).join(", ");
    lateBox.append(h("div", { class: "late-item", dataset: { late: l.late } },
      h("strong", {}, l.player), h("span", {}, stakes),
      h("button", { class: "primary", id: `accept-${l.late}`, disabled: !legal("accept_late"),
        onclick: () => send({ type: "accept_late", late: l.late }, "late bet accepted") }, "Accept"),
      h("button", { class: "danger", id: `refuse-${l.late}`, disabled: !legal("refuse_late"),
        onclick: () => send({ type: "refuse_late", late: l.late }, "late bet refused") }, "Refuse")));
  }
  if (!late.length) lateBox.append(h("p", { class: "muted" }, "None pending."));
  parts.push(lateBox);
  return parts;
}

function blackjackSummary(v) {
  const cur = table.currency;
  const turn = v.turn || [];
  const dealer = h("div", { class: "dealer-row", id: "dealer" }, h("strong", {}, "Dealer"),
    ...(v.dealer || []).map(cardEl));
  const boxes = h("div", { class: "cboxes", id: "boxes" });
  const dealt = new Map((v.boxes || []).map((b) => [b.number, b]));
  (v.seats || []).forEach((holder, i) => {
    const n = i + 1;
    const b = dealt.get(n);
    const bets = (v.bets || []).filter((w) => w.hand === n);
    if (!holder && !b && !bets.length) return;
    const el = h("div", { class: `cbox${turn[0] === n ? " turn" : ""}`, id: `box-${n}`, dataset: { box: n } },
      h("div", {}, h("strong", {}, `Box ${n}`), " ", h("span", { class: "muted" }, holder || (b ? b.holder : ""))));
    if (b) {
      b.hands.forEach((hand, k) => el.append(h("div", {
        class: `hand${turn[0] === n && turn[1] === k ? " active" : ""}`, dataset: { hand: k },
      }, ...hand.cards.map(cardEl), h("div", { class: "muted" },
        `${hand.total}${hand.soft ? " soft" : ""}${hand.blackjack ? " BJ" : ""}${hand.doubled ? " doubled" : ""}`
        + `${hand.done ? " ·done" : ""}`))));
      const staked = b.wagers.reduce((s, w) => s + w.amount, 0);
      if (staked) el.append(h("div", { class: "muted" }, `stakes ${money(staked, cur)}`));
    } else if (bets.length) {
      el.append(h("div", { class: "muted" }, bets.map((w) => `${w.player} ${money(w.amount, cur)}`).join(", ")));
    }
    boxes.append(el);
  });
  const facts = [`${v.cards_left ?? "?"} cards left`, `limits ${money(v.min_bet, cur)} – ${money(v.max_bet, cur)}`];
  if (turn.length) facts.push(`turn: box ${turn[0]} hand ${turn[1]}`);
  if (v.offers && v.offers.length) facts.push(`offers waiting: ${v.offers.join(", ")}`);
  if (v.cut_entitled) facts.push(`cut: ${v.cut_entitled}`);
  if (v.last_round) facts.push("last round of the shoe");
  if (v.exposed >= 0) facts.push(`exposed ${cardName(v.exposed)}`);
  return [h("p", { id: "facts" }, facts.join(" · ")), dealer, boxes];
}

// ---- quick buttons --------------------------------------------------------------------------

function quickButton(type, label, command, { cls = "", okText } = {}) {
  return h("button", { id: `cmd-${type}`, class: `big ${cls}`, dataset: { command: type },
    onclick: async () => {
      let cmd;
      try { cmd = command(); } catch (e) { showError(e); return; }
      if (cmd) await send(cmd, okText);
    } }, label);
}

function rouletteQuick() {
  const reason = h("input", { id: "void-reason", value: "rien va", "aria-label": "Why the spin is void", size: 12 });
  const source = h("select", { id: "result-source", "aria-label": "Who read the number" },
    h("option", { value: "croupier" }, "croupier"), h("option", { value: "wheel_reader" }, "wheel reader"));
  const pad = h("div", { class: "numpad", id: "numpad" },
    ...[0, ...Array.from({ length: 12 }, (_, c) => [3 * c + 3, 3 * c + 2, 3 * c + 1]).flat()].map((n) => h("button", {
      id: `number-${n}`, class: colour(n), dataset: { number: n }, title: `The ball fell on ${n}`,
      onclick: () => send({ type: "result", number: n, source: source.value }, `${n} entered`),
    }, String(n))));
  // A floor player's chips (cash chips at a live table, named by a label: floor:blue).
  const fp = h("input", { id: "floor-player", value: "floor:blue", size: 10, "aria-label": "Floor player" });
  const spot = h("input", { id: "floor-spot", placeholder: "plein 17", size: 10, "aria-label": "Spot" });
  const amount = h("input", { id: "floor-amount", placeholder: "5.00", size: 6, "aria-label": "Amount" });
  const floorBet = () => {
    const a = toMinor(amount.value);
    if (a === null) throw new Error("The amount is a number like 5.00.");
    return { type: "place_bet", player: fp.value.trim(), spot: spot.value.trim(), amount: a };
  };
  return [
    h("div", { class: "quick" },
      quickButton("open_spin", "Open spin (faites vos jeux)", () => ({ type: "open_spin" }), { okText: "spin open" }),
      quickButton("launch_ball", "Launch the ball", () => ({ type: "launch_ball" }), { okText: "ball launched" }),
      quickButton("no_more_bets", "Rien ne va plus", () => ({ type: "no_more_bets" }), { okText: "no more bets" }),
      quickButton("last_spin", "La dernière", () => ({ type: "last_spin" })),
      h("span", { class: "row" }, quickButton("void_spin", "Void spin (rien va)",
        () => ({ type: "void_spin", reason: reason.value || "rien va" }), { cls: "danger", okText: "spin void" }),
      reason)),
    h("h3", {}, "The number ", h("span", { class: "hint" }, "(what the ball fell on)")),
    h("div", { class: "row" }, pad, h("label", { class: "hint" }, "read by ", source)),
    h("h3", {}, "A floor player's bet"),
    h("div", { class: "picker" }, fp, spot, amount,
      quickButton("place_bet", "Place", floorBet, { okText: "bet placed" })),
  ];
}

function cardPicker() {
  const rank = h("select", { id: "card-rank", "aria-label": "Rank" },
    ...RANKS.map((r, i) => h("option", { value: i }, r)));
  const suit = h("select", { id: "card-suit", "aria-label": "Suit" },
    ...SUITS.map(([s, name], i) => h("option", { value: i }, `${s} ${name}`)));
  const box = h("select", { id: "card-box", "aria-label": "To" }, h("option", { value: 0 }, "dealer"),
    ...[1, 2, 3, 4, 5, 6, 7].map((n) => h("option", { value: n }, `box ${n}`)));
  const hand = h("select", { id: "card-hand", "aria-label": "Hand" },
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((n) => h("option", { value: n }, `hand ${n}`)));
  const preview = h("span", { class: "preview", id: "card-preview" });
  const card = () => parseInt(suit.value, 10) * 13 + parseInt(rank.value, 10);
  const show = () => preview.replaceChildren(cardEl(card()));
  rank.addEventListener("change", show);
  suit.addEventListener("change", show);
  show();
  // Quick rank keys: one click picks the rank.
  const ranks = h("div", { class: "row", id: "rank-keys" }, ...RANKS.map((r, i) => h("button", {
    type: "button", dataset: { rank: i }, onclick: () => { rank.value = String(i); show(); } }, r)));
  const deal = quickButton("card", "Deal this card", () => ({
    type: "card", card: card(), box: parseInt(box.value, 10), hand: parseInt(hand.value, 10),
  }), { cls: "primary", okText: "card entered" });
  const burn = quickButton("burn_card", "Burn this card", () => ({ type: "burn_card", card: card() }));
  const expose = quickButton("expose_card", "Exposed card", () => ({ type: "expose_card", card: card() }));
  return h("div", {},
    h("div", { class: "picker" },
      h("label", {}, "Rank", rank), h("label", {}, "Suit", suit), preview,
      h("label", {}, "To", box), h("label", {}, "Hand", hand), deal),
    ranks, h("div", { class: "quick" }, burn, expose));
}

function blackjackQuick() {
  const at = h("input", { id: "cut-at", type: "number", min: 0, placeholder: "cards", size: 5, "aria-label": "Cut at" });
  const reason = h("input", { id: "void-reason", value: "misdeal", size: 10, "aria-label": "Why the round is void" });
  return [
    h("div", { class: "quick" },
      quickButton("shuffle", "Shuffle", () => ({ type: "shuffle" }), { okText: "shoe shuffled" }),
      h("span", { class: "row" }, quickButton("cut", "Cut", () => {
        const c = { type: "cut" };
        if (at.value !== "") c.at = parseInt(at.value, 10);
        return c;
      }, { okText: "shoe cut" }), at),
      quickButton("pass_cut", "Pass the cut", () => ({ type: "pass_cut" })),
      quickButton("close_bets", "Close bets", () => ({ type: "close_bets" }), { okText: "bets closed" }),
      quickButton("close_offers", "Close offers", () => ({ type: "close_offers" }), { okText: "offers closed" }),
      quickButton("cut_card_out", "Cut card out", () => ({ type: "cut_card_out" })),
      quickButton("reshuffle", "Reshuffle", () => ({ type: "reshuffle" })),
      h("span", { class: "row" }, quickButton("void_round", "Misdeal (void)",
        () => ({ type: "void_round", reason: reason.value || "misdeal" }), { cls: "danger", okText: "round void" }),
      reason)),
    h("h3", {}, "Enter the next card"),
    cardPicker(),
  ];
}

function renderQuick() {
  for (const b of document.querySelectorAll("[data-command]")) {
    const ok = legal(b.dataset.command);
    b.disabled = !ok;
    b.classList.toggle("legal", ok);
  }
  for (const b of document.querySelectorAll("#numpad button")) b.disabled = !legal("result");
  // The card picker follows the turn: the hand awaiting a card or a decision.
  const turn = (view && view.turn) || [];
  const key = turn.join("/");
  if (table.game === "blackjack" && turn.length && key !== lastTurn) {
    $("#card-box").value = String(turn[0]);
    $("#card-hand").value = String(turn[1]);
  }
  lastTurn = key;
  const gsel = $("#generic-command");
  if (gsel) $("#generic-legal").textContent = legal(gsel.value) ? "legal now" : "not offered now (the table will judge it)";
  const quickTypes = new Set([...document.querySelectorAll("[data-command]")].map((b) => b.dataset.command));
  const others = ((view && view.legal) || []).filter((t) => !quickTypes.has(t) && t !== "result");
  $("#other-legal").replaceChildren(...others.map((t) => h("button", {
    class: "link", onclick: () => { $("#generic-command").value = t; buildFields(); $("#generic-command").focus(); },
  }, t)).flatMap((el, i) => (i ? [" · ", el] : [el])));
}
let lastTurn = "";

// ---- every command of the game, from the AsyncAPI document -------------------------------

let schemas = {};
let commands = []; // [{type, schema}]

function resolve(s) {
  let out = s || {};
  for (let i = 0; i < 10 && out.$ref; i++) out = schemas[out.$ref.split("/").pop()] || {};
  return out;
}

// The one non-null alternative of an anyOf (nullable: may be left empty).
function plain(s) {
  s = resolve(s);
  if (s.anyOf) {
    const opts = s.anyOf.map(resolve).filter((x) => x.type !== "null");
    if (opts.length === 1) return { ...opts[0], nullable: true };
  }
  return s;
}

function fieldFor(name, raw, required) {
  const s = plain(raw);
  const id = `gf-${name}`;
  const hint = [];
  if (s.default !== undefined) hint.push(`default ${JSON.stringify(s.default)}`);
  if (s.minimum !== undefined && s.maximum !== undefined && s.maximum < 1e9) hint.push(`${s.minimum}..${s.maximum}`);
  let input;
  let read;
  if (s.enum) {
    input = h("select", { id }, required ? null : h("option", { value: "" }, "(default)"),
      ...s.enum.map((v) => h("option", { value: v }, String(v))));
    if (name === "source" && s.enum.includes("croupier")) input.value = "croupier";
    read = () => (input.value === "" ? undefined : input.value);
  } else if (s.type === "boolean") {
    input = h("select", { id }, h("option", { value: "" }, required ? "(choose)" : "(default)"),
      h("option", { value: "true" }, "yes"), h("option", { value: "false" }, "no"));
    read = () => (input.value === "" ? undefined : input.value === "true");
  } else if (s.type === "integer" || s.type === "number") {
    input = h("input", { id, type: "number", step: s.type === "integer" ? 1 : "any" });
    read = () => {
      if (input.value.trim() === "") return undefined;
      const n = Number(input.value);
      if (!Number.isFinite(n)) throw new Error(`${name}: not a number`);
      return n;
    };
  } else if (s.type === "string") {
    input = h("input", { id, type: "text" });
    read = () => (input.value === "" ? undefined : input.value);
  } else if (s.type === "array" && ["integer", "string", "number"].includes(plain(s.items).type)) {
    const ints = plain(s.items).type !== "string";
    input = h("input", { id, type: "text", placeholder: "comma-separated" });
    hint.push("a list, comma-separated");
    read = () => {
      if (input.value.trim() === "") return undefined;
      return input.value.split(",").map((x) => x.trim()).filter((x) => x !== "").map((x) => {
        if (!ints) return x;
        const n = Number(x);
        if (!Number.isInteger(n)) throw new Error(`${name}: ${x} is not a whole number`);
        return n;
      });
    };
  } else {
    input = h("textarea", { id, placeholder: "JSON" });
    hint.push("JSON");
    read = () => {
      if (input.value.trim() === "") return undefined;
      try { return JSON.parse(input.value); } catch (e) { throw new Error(`${name}: not JSON (${e.message})`); }
    };
  }
  input.setAttribute("aria-label", name);
  input.dataset.field = name;
  return { name, required, read,
    els: [h("label", { for: id }, name, required ? " *" : ""),
      h("span", {}, input, hint.length ? h("span", { class: "hint" }, " ", hint.join(", ")) : "")] };
}

let fields = [];
function buildFields() {
  const type = $("#generic-command").value;
  const c = commands.find((x) => x.type === type);
  const box = $("#generic-fields");
  fields = [];
  if (!c) {
    box.replaceChildren();
    return;
  }
  const req = new Set(c.schema.required || []);
  for (const [name, s] of Object.entries(c.schema.properties || {})) {
    if (name === "type") continue;
    fields.push(fieldFor(name, s, req.has(name)));
  }
  box.replaceChildren(...fields.flatMap((f) => f.els));
  $("#generic-doc").textContent = (c.schema.description || "").replace(/\s+/g, " ").trim();
  $("#generic-legal").textContent = legal(type) ? "legal now" : "not offered now (the table will judge it)";
}

async function genericSend() {
  const type = $("#generic-command").value;
  if (!type) return;
  const command = { type };
  try {
    for (const f of fields) {
      const v = f.read();
      if (v !== undefined) command[f.name] = v;
      else if (f.required) throw new Error(`${f.name} is required`);
    }
  } catch (e) {
    say(String(e.message || e), "error");
    return;
  }
  $("#generic-json").textContent = JSON.stringify(command);
  await send(command);
}

async function genericPanel() {
  const doc = await api("GET", "/asyncapi.json");
  schemas = doc.components.schemas;
  const union = resolve(doc["x-game-commands"][table.game]);
  commands = (union.anyOf || union.oneOf || [union]).map(resolve).map((s) => ({
    type: ((s.properties || {}).type || {}).enum[0], schema: s,
  })).filter((c) => c.type);
  const select = h("select", { id: "generic-command", "aria-label": "Command" },
    ...commands.map((c) => h("option", { value: c.type }, c.type)));
  select.addEventListener("change", buildFields);
  return h("section", { class: "panel", id: "generic" },
    h("h2", {}, "Any command"),
    h("div", { class: "row" }, select, h("span", { class: "hint", id: "generic-legal" })),
    h("p", { class: "hint", id: "generic-doc" }),
    h("div", { class: "generic-fields", id: "generic-fields" }),
    h("div", { class: "row" }, h("button", { class: "primary", id: "generic-send", onclick: genericSend }, "Send"),
      h("code", { class: "hint", id: "generic-json" })));
}

// ---- the event log ------------------------------------------------------------------------

function summarise(e) {
  const out = [];
  for (const [k, v] of Object.entries(e)) {
    if (k === "type") continue;
    if (v === null || v === "" || (Array.isArray(v) && !v.length)) continue;
    if (k === "card" && typeof v === "number") out.push(`card=${cardName(v)}`);
    else if (typeof v !== "object") out.push(`${k}=${v}`);
    else if (Array.isArray(v) && v.length <= 8 && v.every((x) => typeof x !== "object")) out.push(`${k}=[${v.join(",")}]`);
    else if (Array.isArray(v)) out.push(`${k}=[${v.length}]`);
  }
  return out.join(" ");
}

function logEvents(events) {
  for (const ev of events) {
    const e = ev.event || {};
    logEntries.unshift(h("li", { dataset: { seq: ev.seq, kind: e.type } },
      h("span", { class: "seq" }, `#${ev.seq}`), h("span", { class: "kind" }, e.type),
      h("span", {}, summarise(e)), ev.round ? h("span", { class: "muted" }, ` (${ev.round})`) : ""));
  }
  logEntries.splice(LOG_SIZE);
  $("#events").replaceChildren(...logEntries);
}

// ---- the page -----------------------------------------------------------------------------

async function start() {
  me = await requireLogin();
  topBar(me, "Console");
  if (!tableId) {
    main.replaceChildren(h("p", {}, "No table: open the console from the lobby (", h("a", { href: "/app/" }, "tables"),
      ")."));
    return;
  }
  const d = await api("GET", `/tables/${encodeURIComponent(tableId)}`);
  table = d.table;
  view = d.view;
  const quick = table.game === "roulette" ? rouletteQuick() : blackjackQuick();
  const staffNote = ["croupier", "chef"].includes(me.role) && !table.staff.includes(me.id)
    ? h("p", { class: "msg error" }, `You are not assigned to ${table.id}: you may watch, not run it.`) : "";
  main.replaceChildren(
    h("section", { class: "panel" },
      h("div", { class: "state-line" },
        h("h1", {}, table.name || table.id),
        h("span", { class: "badge" }, `${table.game}, ${table.profile}, ${table.mode}, ${table.currency}`),
        h("span", { class: "phase", id: "phase" }), h("span", { id: "round" }),
        h("span", { class: "status", id: "next-auto" }), h("span", { class: "status", id: "conn" }, "connecting…")),
      table.mode === "rng" ? h("p", { class: "hint" },
        "An RNG table: the wheel and the shoe are the server's; a croupier's result or card is refused.") : "",
      staffNote,
      h("p", { class: "hint" }, "Legal now: ", h("span", { id: "legal-now" }))),
    h("div", { class: "console-grid" },
      h("div", {},
        h("section", { class: "panel", id: "controls" }, h("h2", {}, "Commands"), ...quick,
          h("p", { class: "hint" }, "Also legal now: ", h("span", { id: "other-legal" }))),
        await genericPanel()),
      h("div", {},
        h("section", { class: "panel" }, h("h2", {}, "The table"), h("div", { id: "summary" })),
        h("section", { class: "panel" }, h("h2", {}, "Events ", h("span", { class: "hint" }, "(newest first)")),
          h("ol", { class: "log", id: "events" })))));
  buildFields();
  setView(view);
  live = new Live();
  live.onStatus = (s) => { $("#conn").textContent = s; };
  live.onError = (m) => say(`Error (${m.code}): ${m.message}`, "error");
  live.onRefusal = (m) => answered(m);
  live.subscribe(tableId, (snap) => {
    $("#conn").textContent = `live at #${snap.seq}`;
    setView(snap.view);
  }, (events) => {
    logEvents(events);
    $("#conn").textContent = `live at #${events[events.length - 1].seq}`;
    refresh();
  });
}

start().catch((e) => {
  if (String(e.message) !== "not logged in") showError(e);
});
