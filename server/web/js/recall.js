// Game recall (/app/recall.html): a player's last rounds (GET /players/{user}/recall), each
// opening step by step: his bets, the cards dealt or the number, his decisions and the
// dealer's, the settlements, and his balance before and after the round. Oversight may look
// at a player's rounds with ?user=NAME. Filters: ?table=ID and ?n=N (1 to 100).
import { api, requireLogin } from "./api.js";
import { $, cardEl, h, money, params, showError, topBar } from "./ui.js";

const main = $("#main");
const enc = encodeURIComponent;

function describe(step, cur) {
  const e = step.event || {};
  const who = e.box === 0 ? "dealer" : e.box ? `box ${e.box}${e.hand ? ` hand ${e.hand + 1}` : ""}` : "";
  switch (step.kind) {
    case "wager_placed": return [`bet ${money(e.amount, cur)}`, e.spot ? ` on ${e.spot}` : ""];
    case "wager_settled": return [`settled: stake ${money(e.stake, cur)}, returned ${money(e.returned, cur)}, `
      + `won ${money(e.won, cur)}`, e.reason ? ` (${e.reason})` : ""];
    case "wager_voided": return [`voided ${money(e.amount, cur)}`, e.reason ? ` (${e.reason})` : ""];
    case "wager_refunded": return [`refunded ${money(e.amount, cur)}`];
    case "card_dealt": return [`${who} gets `, cardEl(e.card)];
    case "hole_card_dealt": return ["dealer's hole card ", cardEl(-1)];
    case "hole_card_shown": return ["dealer shows ", cardEl(e.card)];
    case "acted": return [`${who}: ${e.action}`, e.by ? ` (by ${e.by})` : ""];
    case "hand_done": return [`${who}: ${e.total}${e.bust ? ", bust" : ""}`];
    case "dealer_done": return [`dealer: ${e.total}${e.blackjack ? ", blackjack" : ""}${e.bust ? ", bust" : ""}`];
    case "spin_result": return ["number ", h("strong", { class: "number" }, String(e.number)),
      e.colour ? ` (${e.colour})` : ""];
    default: return [JSON.stringify(e)];
  }
}

function roundEl(r, i) {
  const cur = r.currency;
  const steps = r.steps.map((s) => h("li", { class: `step ${s.kind}`, dataset: { kind: s.kind, seq: s.seq } },
    h("span", { class: "muted" }, `#${s.seq} ${s.kind.replace(/_/g, " ")}: `), ...describe(s, cur)));
  const moves = r.movements.map((m) => h("tr", {}, h("td", {}, m.code || m.op), h("td", {}, m.ref),
    h("td", { class: "num" }, money(m.change, cur)), h("td", { class: "num" }, money(m.balance, cur))));
  return h("details", { class: "round panel", dataset: { table: r.table, round: r.round }, open: i === 0 },
    h("summary", {}, `${r.table} (${r.game}) ${r.round}, ${new Date(r.at).toLocaleString()}: `,
      "before ", h("strong", { class: "before" }, money(r.balance_before, cur)),
      ", after ", h("strong", { class: "after" }, money(r.balance_after, cur))),
    h("ol", { class: "steps" }, ...steps),
    moves.length ? h("table", { class: "grid movements" },
      h("thead", {}, h("tr", {}, h("th", {}, "What"), h("th", {}, "Reference"), h("th", { class: "num" }, "Change"),
        h("th", { class: "num" }, "Balance"))), h("tbody", {}, ...moves)) : "");
}

async function load(user) {
  const q = new URLSearchParams({ limit: params.get("n") || "10" });
  if (params.get("table")) q.set("table", params.get("table"));
  const rounds = await api("GET", `/players/${enc(user)}/recall?${q}`);
  const form = h("form", { class: "filters", method: "get" },
    params.get("user") ? h("input", { type: "hidden", name: "user", value: user }) : "",
    h("label", {}, "Table ", h("input", { name: "table", value: params.get("table") || "", size: 20 })),
    " ", h("label", {}, "Rounds ", h("input", { name: "n", type: "number", min: 1, max: 100, value: params.get("n") || 10 })),
    " ", h("button", { type: "submit" }, "Show"));
  main.replaceChildren(h("section", { class: "panel" }, h("h2", {}, `Last rounds of ${user}`), form),
    ...(rounds.length ? rounds.map(roundEl) : [h("p", { class: "muted", id: "none" }, "No rounds.")]));
}

async function start() {
  const me = await requireLogin();
  topBar(me, "My rounds");
  await load(params.get("user") || me.id);
}

start().catch(showError);
