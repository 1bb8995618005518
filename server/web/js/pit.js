// The pit (/app/pit.html), for pit bosses, directors and inspectors: every table at a glance
// (its game, profile, mode, state from its view, players, serving process, staff, limits),
// the director's limits and staff forms, a round's recall event by event, the ledger check
// and the audit log's latest entries. Each panel shows what the server lets this role see.
import { api, requireLogin } from "./api.js";
import { $, h, money, params, say, showError, toMinor, topBar } from "./ui.js";

const main = $("#main");
const ROULETTE_KINDS = ["plein", "cheval", "transversale", "carre", "quatre_premiers", "sixain", "douzaine",
  "colonne", "simple"];
let me = null;
let tables = []; // [{t: summary, view, limits}]

const enc = encodeURIComponent;
const cell = (...c) => h("td", {}, ...c);

function state(t, view) {
  if (!view) return t.running ? "" : "not running";
  if (t.game === "roulette") return `${view.phase}, spin ${view.spin}`;
  return `${view.phase}, round ${view.round}`;
}

function players(t, view) {
  if (!view) return "";
  if (t.game === "roulette") return `${new Set((view.bets || []).map((b) => b.player)).size} betting`;
  return `${(view.seats || []).filter((s) => s).length} / 7 boxes`;
}

function limitsText(t, l) {
  if (!l) return "";
  const lim = l.limits;
  const base = `${money(lim.minimum, lim.currency)} – ${money(lim.maximum, lim.currency)}`;
  return `${base} (v${l.version}, from round ${l.from_round}, ${l.changed_by})`;
}

async function loadTables() {
  const list = await api("GET", "/tables");
  tables = await Promise.all(list.map(async (t) => {
    const [detail, limits] = await Promise.all([
      api("GET", `/tables/${enc(t.id)}`).catch(() => null),
      api("GET", `/tables/${enc(t.id)}/limits`).catch(() => []),
    ]);
    return { t: detail ? detail.table : t, view: detail ? detail.view : null, limits: limits[limits.length - 1] };
  }));
}

function tablesPanel() {
  const rows = tables.map(({ t, view, limits }) => h("tr", { dataset: { table: t.id } },
    cell(h("strong", {}, t.name || t.id), h("div", { class: "muted" }, t.id)),
    cell(t.game), cell(t.profile), cell(t.mode), h("td", { class: "state" }, state(t, view)),
    cell(players(t, view)), cell(t.owner || h("span", { class: "muted" }, "nobody")),
    cell((t.staff || []).join(", ")), h("td", { class: "limits" }, limitsText(t, limits)),
    cell(h("a", { href: `/app/console.html?table=${enc(t.id)}` }, "Console"))));
  return h("section", { class: "panel" }, h("h2", {}, `Tables (${tables.length})`),
    h("table", { class: "grid", id: "pit-tables" },
      h("thead", {}, h("tr", {}, ...["Table", "Game", "Profile", "Mode", "State", "Players", "Served by", "Staff",
        "Limits", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, ...rows)));
}

function tableSelect(id, filter = () => true) {
  return h("select", { id, "aria-label": "Table" },
    ...tables.filter(filter).map(({ t }) => h("option", { value: t.id }, `${t.id} (${t.game})`)));
}

function limitsForm() {
  const may = (x) => me.role === "director" || (me.role === "chef" && x.t.game === "blackjack" && x.t.staff.includes(me.id));
  const select = tableSelect("limits-table", may);
  const minimum = h("input", { id: "limits-minimum", placeholder: "10.00", size: 8 });
  const maximum = h("input", { id: "limits-maximum", placeholder: "100.00", size: 8 });
  const reason = h("input", { id: "limits-reason", placeholder: "why", size: 14 });
  const maxima = h("div", { id: "limits-maxima", class: "maxima" });
  const maxLabel = h("label", {}, "Maximum", maximum);
  const fill = () => {
    const x = tables.find((y) => y.t.id === select.value);
    if (!x || !x.limits) return;
    const lim = x.limits.limits;
    minimum.value = money(lim.minimum).replace(/'/g, "");
    const roulette = x.t.game === "roulette";
    maxLabel.hidden = roulette;
    maximum.value = roulette ? "" : money(lim.maximum).replace(/'/g, "");
    maxima.replaceChildren(...(roulette ? ROULETTE_KINDS.map((k) => h("label", {}, k, h("input", {
      id: `limits-max-${k}`, dataset: { kind: k }, size: 10,
      value: lim.spot_maxima[k] !== undefined ? money(lim.spot_maxima[k]).replace(/'/g, "") : "" }))) : []));
  };
  select.addEventListener("change", fill);
  const form = h("form", { id: "limits-form" }, h("h3", {}, "Limits from the next round"),
    h("label", {}, "Table", select), h("label", {}, "Minimum", minimum), maxLabel, maxima,
    h("label", {}, "Reason", reason), h("button", { class: "primary", id: "limits-save", type: "submit" }, "Change limits"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const x = tables.find((y) => y.t.id === select.value);
    const body = { minimum: toMinor(minimum.value), reason: reason.value };
    if (body.minimum === null) return say("The minimum is an amount like 10.00.", "error");
    if (x.t.game === "roulette") {
      body.maxima = {};
      for (const input of maxima.querySelectorAll("input")) {
        if (input.value.trim() === "") continue;
        const v = toMinor(input.value);
        if (v === null) return say(`The ${input.dataset.kind} maximum is an amount like 500.00.`, "error");
        body.maxima[input.dataset.kind] = v;
      }
    } else {
      body.maximum = toMinor(maximum.value);
      if (body.maximum === null) return say("The maximum is an amount like 100.00.", "error");
    }
    try {
      const out = await api("PUT", `/tables/${enc(x.t.id)}/limits`, body);
      say(`Limits of ${x.t.id} changed (announced at seq ${out.seq}).`, "ok");
      await reloadTables();
    } catch (e) {
      showError(e);
    }
  });
  if (!select.options.length) return null;
  fill();
  return form;
}

function staffForm(accounts) {
  const select = tableSelect("staff-table");
  const staff = accounts.filter((a) => ["croupier", "chef"].includes(a.role));
  const user = h("input", { id: "staff-user", list: "staff-users", placeholder: "croupier's name", size: 14 });
  const form = h("form", { id: "staff-form" }, h("h3", {}, "Assign a croupier or chef"),
    h("label", {}, "Table", select), h("label", {}, "User", user),
    h("datalist", { id: "staff-users" }, ...staff.map((a) => h("option", { value: a.id }, a.role))),
    h("button", { class: "primary", id: "staff-assign", type: "submit" }, "Assign"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", `/tables/${enc(select.value)}/staff`, { user: user.value.trim() });
      say(`${user.value.trim()} assigned to ${select.value}.`, "ok");
      await reloadTables();
    } catch (e) {
      showError(e);
    }
  });
  return form;
}

function authorisationForm() {
  const select = tableSelect("auth-table");
  const chef = h("input", { id: "auth-chef", placeholder: "chef", size: 12 });
  const action = h("select", { id: "auth-action" }, h("option", { value: "suspend" }, "suspend"),
    h("option", { value: "close" }, "close"));
  const minutes = h("input", { id: "auth-minutes", type: "number", value: 60, min: 1, max: 1440 });
  const reason = h("input", { id: "auth-reason", placeholder: "why", size: 14 });
  const form = h("form", { id: "auth-form" }, h("h3", {}, "Authorise a chef (Art. 15)"),
    h("label", {}, "Table", select), h("label", {}, "Chef", chef), h("label", {}, "May", action),
    h("label", {}, "For minutes", minutes), h("label", {}, "Reason", reason),
    h("button", { id: "auth-go", type: "submit" }, "Authorise"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await api("POST", `/tables/${enc(select.value)}/authorisations`, { chef: chef.value.trim(),
        action: action.value, reason: reason.value, minutes: parseInt(minutes.value, 10) });
      say(`${chef.value.trim()} may ${action.value} ${select.value}.`, "ok");
    } catch (e) {
      showError(e);
    }
  });
  return form;
}

function recallPanel() {
  const select = tableSelect("recall-table");
  const round = h("input", { id: "recall-round", list: "recall-rounds", placeholder: "spin-1 / round-1", size: 14 });
  const rounds = h("datalist", { id: "recall-rounds" });
  const suggest = () => {
    const x = tables.find((y) => y.t.id === select.value);
    if (!x || !x.view) return;
    const n = x.t.game === "roulette" ? x.view.spin : x.view.round;
    const word = x.t.game === "roulette" ? "spin" : "round";
    rounds.replaceChildren(...Array.from({ length: Math.min(n || 0, 20) }, (_, i) =>
      h("option", { value: `${word}-${n - i}` })));
  };
  select.addEventListener("change", suggest);
  suggest();
  const out = h("div", { id: "recall" });
  const go = async (ev) => {
    ev.preventDefault();
    const table = select.value;
    const id = round.value.trim();
    if (!id) return;
    try {
      const steps = await api("GET", `/tables/${enc(table)}/rounds/${enc(id)}`);
      out.replaceChildren(h("p", {}, `${table}, ${id}: ${steps.length} events`),
        h("table", { class: "grid steps" },
          h("thead", {}, h("tr", {}, ...["Seq", "At", "By", "Event", "What"].map((x) => h("th", {}, x)))),
          h("tbody", {}, ...steps.map((s) => h("tr", { dataset: { kind: s.kind } },
            cell(String(s.seq)), cell(new Date(s.at).toLocaleTimeString()), cell(s.actor), cell(h("strong", {}, s.kind)),
            cell(h("pre", {}, brief(s.event))))))));
    } catch (e) {
      out.replaceChildren(h("p", { class: "err-big" }, e.code ? `${e.code}: ${e.message}` : String(e)));
      showError(e);
    }
  };
  const form = h("form", { class: "row" }, h("label", {}, "Table ", select), rounds,
    h("label", {}, "Round ", round), h("button", { class: "primary", id: "recall-go", type: "submit" }, "Recall"));
  form.addEventListener("submit", go);
  return h("section", { class: "panel" }, h("h2", {}, "Round recall"), form, out);
}

// An event, short: its scalar fields and the size of its lists.
function brief(e) {
  if (!e || typeof e !== "object") return String(e);
  return Object.entries(e).filter(([k]) => k !== "type").map(([k, v]) => {
    if (Array.isArray(v)) return v.length <= 8 && v.every((x) => typeof x !== "object") ? `${k}=[${v}]` : `${k}=[${v.length}]`;
    if (v && typeof v === "object") return `${k}={…}`;
    return `${k}=${v}`;
  }).join(" ");
}

async function ledgerPanel() {
  const box = h("div", { id: "ledger-check" });
  const run = async () => {
    box.replaceChildren(h("p", { class: "muted" }, "Checking…"));
    try {
      const r = await api("GET", "/ledger/check");
      const ok = !r.problems.length;
      box.replaceChildren(h("p", { class: ok ? "ok-big" : "err-big", dataset: { ok: String(ok) } },
        ok ? "Ledger check: ok" : `Ledger check: ${r.problems.length} problems`),
      h("p", { class: "muted" }, `${r.accounts} accounts, ${r.transfers} transfers, ${r.pending_holds} holds pending`
        + (r.rounds_checked ? ", open rounds checked" : "")),
      ok ? "" : h("ul", {}, ...r.problems.map((p) => h("li", {}, typeof p === "string" ? p : JSON.stringify(p)))));
    } catch (e) {
      box.replaceChildren(h("p", { class: "muted" }, e.code === "forbidden" ? "Not for your role." : String(e.message)));
    }
  };
  await run();
  return h("section", { class: "panel" }, h("h2", {}, "Ledger ", h("button", { id: "ledger-rerun", onclick: run }, "Check again")), box);
}

async function auditPanel() {
  let body;
  try {
    const entries = await api("GET", "/audit?limit=15");
    body = h("table", { class: "grid", id: "audit" },
      h("thead", {}, h("tr", {}, ...["When", "Who", "Action", "Target", "Detail"].map((x) => h("th", {}, x)))),
      h("tbody", {}, ...entries.map((a) => h("tr", {}, cell(new Date(a.at).toLocaleString()),
        cell(`${a.actor} (${a.role})`), cell(a.action), cell(a.target), cell(h("pre", {}, brief(a.detail)))))));
  } catch (e) {
    body = h("p", { class: "muted" }, e.code === "forbidden" ? "Not for your role." : String(e.message));
  }
  return h("section", { class: "panel" }, h("h2", {}, "Audit log (latest)"), body);
}

let tablesSection = null;
let auditSection = null;
// After a change: the tables (and their limits) and the audit log, read again.
async function reloadTables() {
  await loadTables();
  const fresh = tablesPanel();
  tablesSection.replaceWith(fresh);
  tablesSection = fresh;
  const audit = await auditPanel();
  auditSection.replaceWith(audit);
  auditSection = audit;
}

async function start() {
  me = await requireLogin();
  topBar(me, "Pit");
  if (!["croupier", "chef", "director", "inspector", "admin"].includes(me.role)) {
    // The pit's data is the oversight's: the server answers a player 403 (shown as such).
    try {
      await api("GET", "/ledger/check");
    } catch (e) {
      main.replaceChildren(h("p", { class: "err-big", id: "pit-refused" }, "The pit is for staff."));
      showError(e);
      return;
    }
  }
  await loadTables();
  tablesSection = tablesPanel();
  const forms = [];
  const limits = limitsForm();
  if (limits) forms.push(limits);
  if (["director", "admin"].includes(me.role)) {
    const accounts = await api("GET", "/accounts").catch(() => []);
    forms.push(staffForm(accounts));
  }
  if (me.role === "director") forms.push(authorisationForm());
  const parts = [tablesSection];
  if (forms.length) parts.push(h("section", { class: "panel" }, h("h2", {}, "Direction"), h("div", { class: "forms" }, ...forms)));
  auditSection = await auditPanel();
  parts.push(recallPanel(), await ledgerPanel(), auditSection);
  main.replaceChildren(...parts);
  if (params.get("table")) $("#recall-table").value = params.get("table");
}

start().catch((e) => {
  if (String(e.message) !== "not logged in") showError(e);
});
