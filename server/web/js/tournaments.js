// Tournaments and Sit&Go (/app/tournaments.html): the list, and one tournament (?id=): its
// registrations, phase and tables, live standings with the cut line, the viewer's own place
// and the prizes. The page follows the tournament's channel on the websocket (subscribe to
// its id, like a table) and reads GET /tournaments/{id} again after its events. Commands go
// to POST /tournaments/{id}/commands: a player registers and checks in; the director opens
// and closes registration, starts, pauses, resumes, expels and cancels (view.legal says
// which the viewer may send now).
import { api, requireLogin } from "./api.js";
import { Live } from "./live.js";
import { $, coalesced, h, money, params, say, showError, topBar } from "./ui.js";

const main = $("#main");
const tid = params.get("id") || "";
const enc = encodeURIComponent;
const cell = (...c) => h("td", {}, ...c);
let me = null;
let detail = null;
const log = [];

const when = (epoch) => (epoch ? new Date(epoch * 1000).toLocaleString() : "when full");

async function listPage() {
  const list = await api("GET", "/tournaments");
  main.replaceChildren(h("section", { class: "panel" }, h("h2", {}, "Tournaments and Sit&Go"),
    list.length ? h("table", { class: "grid", id: "tournaments" },
      h("thead", {}, h("tr", {}, ...["Tournament", "Format", "Starts", "Status", "Buy-in", "Fee", "Dealt", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, ...list.map((t) => h("tr", { dataset: { tournament: t.id } },
        cell(h("strong", {}, t.name), h("div", { class: "muted" }, t.id)),
        cell(t.format === "sit_and_go" ? "Sit&Go" : "tournament"), cell(when(t.starts_at)),
        h("td", { class: "status" }, t.status),
        h("td", { class: "num" }, money(t.buy_in, t.currency)), h("td", { class: "num" }, money(t.fee, t.currency)),
        cell(t.mode), cell(h("a", { href: `/app/tournaments.html?id=${enc(t.id)}` }, "Open"))))))
      : h("p", { class: "muted", id: "tournaments" }, "No tournament on the floor.")));
}

// ---- one tournament -----------------------------------------------------------------------

async function command(cmd, okText) {
  try {
    const cid = `page-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    await api("POST", `/tournaments/${enc(tid)}/commands`, { cid, command: cmd });
    say(okText || `${cmd.type}: accepted`, "ok");
  } catch (e) {
    showError(e);
  }
  await reload();
}

const LABELS = {
  register: "Register", check_in: "Check in", open_registration: "Open registration",
  close_registration: "Close registration", start: "Start", pause: "Pause", resume: "Resume", expel: "Expel",
  cancel: "Cancel the tournament",
};

function actions(v) {
  const legal = new Set(v.legal || []);
  const out = h("div", { class: "tour-actions", id: "tour-actions" });
  const button = (type, id, make, cls = "") => h("button", { id, class: cls, disabled: !legal.has(type),
    dataset: { command: type }, onclick: () => { const c = make(); if (c) command(c); } }, LABELS[type]);
  if (me.role === "player") {
    out.append(button("register", "register", () => ({ type: "register" }), "primary"),
      button("check_in", "check-in", () => ({ type: "check_in" })));
  }
  if (me.role === "director") {
    for (const t of ["open_registration", "close_registration", "start", "pause", "resume"]) {
      out.append(button(t, `t-${t}`, () => ({ type: t })));
    }
    const who = h("input", { id: "expel-player", placeholder: "player", size: 10, "aria-label": "Player to expel" });
    out.append(who, button("expel", "t-expel", () => (who.value.trim() ? { type: "expel", player: who.value.trim() }
      : (say("Name the player to expel.", "error"), null)), "danger"));
    const why = h("input", { id: "cancel-reason", placeholder: "reason", size: 10, "aria-label": "Why cancel" });
    out.append(why, button("cancel", "t-cancel", () => ({ type: "cancel", reason: why.value }), "danger"));
  }
  if (["croupier", "cashier"].includes(me.role) && legal.has("check_in")) {
    const who = h("input", { id: "checkin-player", placeholder: "player", size: 10, "aria-label": "Player" });
    out.append(who, button("check_in", "check-in", () => ({ type: "check_in", player: who.value.trim() })));
  }
  if (!out.childNodes.length) out.append(h("span", { class: "muted" }, "Nothing for you to do here."));
  return out;
}

function standings(v) {
  const rows = [];
  const cut = v.cut_line;
  let cutDrawn = false;
  v.standings.forEach((s, i) => {
    const next = v.standings[i + 1];
    const mine = me && s.player === me.id;
    rows.push(h("tr", { class: mine ? "me" : "", dataset: { player: s.player, place: s.place } },
      h("td", { class: "num" }, String(s.place)), cell(h("strong", {}, s.player)),
      h("td", { class: "num" }, String(s.points)), cell(s.out || ""), cell(s.table || ""),
      h("td", { class: "num" }, v.prizes[s.player] !== undefined ? money(v.prizes[s.player], v.spec.currency) : "")));
    // The cut line: after the last place that goes on (cut_line: its points; 0 = everyone goes on).
    if (cut > 0 && !cutDrawn && s.points >= cut && !s.out && (!next || next.points < cut || next.out)) {
      rows.push(h("tr", { class: "cut-line", id: "cut-line" },
        h("td", { colspan: 6, class: "muted" }, `cut line: ${cut} points`)));
      cutDrawn = true;
    }
  });
  return h("table", { class: "grid", id: "standings" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, "Place"), h("th", {}, "Player"),
      h("th", { class: "num" }, "Points"), h("th", {}, "Out"), h("th", {}, "Table"), h("th", { class: "num" }, "Prize"))),
    h("tbody", {}, ...rows));
}

function render() {
  const t = detail.tournament;
  const v = detail.view;
  const spec = v.spec;
  const status = `${v.status}${v.paused ? " (paused)" : ""}`;
  const entrants = h("table", { class: "grid", id: "entrants" },
    h("thead", {}, h("tr", {}, h("th", { class: "num" }, "Ticket"), h("th", {}, "Player"), h("th", {}, "Checked in"))),
    h("tbody", {}, ...v.entrants.map((e) => h("tr", { dataset: { player: e.player } },
      h("td", { class: "num" }, String(e.ticket)), cell(e.player),
      cell(e.not_admitted ? "not admitted" : e.checked_in ? "yes" : "no")))));
  const phase = v.phase ? h("div", { id: "phase" },
    h("p", {}, `Phase ${v.phase.number}: ${v.phase.kind}, ${v.phase.shoes} shoes`),
    ...v.phase.tables.map((tb) => h("div", { class: "panel", dataset: { table: tb.table } },
      h("strong", {}, h("a", { href: `/app/blackjack.html?table=${enc(tb.table)}` }, tb.table)),
      h("span", { class: "muted" }, ` hand ${tb.hand}${tb.done ? ", done" : ""}`),
      h("div", { class: "muted" }, tb.seats.map((s) => `${s.box}: ${s.player} ${s.points}${s.out ? ` (${s.out})` : ""}`)
        .join(" · "))))) : h("p", { class: "muted", id: "phase" }, "No phase in play.");
  const mine = v.me ? h("p", { id: "me" }, "Your place: ", h("strong", {}, String(v.me.place)),
    ` with ${v.me.points} points${v.me.out ? ` (${v.me.out})` : ""}`)
    : h("p", { id: "me", class: "muted" }, me.role === "player" ? "You are not ranked in it." : "");
  const prizes = Object.entries(v.prizes || {});
  main.replaceChildren(
    h("p", {}, h("a", { href: "/app/tournaments.html" }, "← all tournaments")),
    h("section", { class: "panel" },
      h("div", { class: "tour-head" }, h("h1", {}, spec.name),
        h("span", { class: "badge" }, spec.format === "sit_and_go" ? "Sit&Go" : "tournament"),
        h("strong", { id: "status" }, status), h("span", { class: "status", id: "conn" }, "")),
      h("p", { class: "muted" }, `Buy-in ${money(t.buy_in, t.currency)} + fee ${money(t.fee, t.currency)} · `
        + `starts ${when(spec.starts_at)} · ${spec.min_entrants}–${spec.max_entrants} players · `
        + `bets ${spec.min_bet}–${spec.max_bet} pts, stack ${spec.stack} · ${spec.shoes} shoes · prizes ${spec.prizes.join("/")}% · `
        + `dealt ${spec.mode}`),
      h("p", {}, "Prize pool ", h("strong", { id: "pool" }, money(v.pool, spec.currency))),
      mine, actions(v)),
    h("div", { class: "console-grid" },
      h("div", {},
        h("section", { class: "panel" }, h("h2", {}, "Standings"),
          v.standings.length ? standings(v) : h("p", { class: "muted", id: "standings" }, "Not started yet."),
          prizes.length ? h("div", { id: "prizes" }, h("h3", {}, "Prizes"),
            h("ul", {}, ...prizes.map(([p, a]) => h("li", {}, `${p}: ${money(a, spec.currency)}`)))) : ""),
        h("section", { class: "panel" }, h("h2", {}, "Tables"), phase)),
      h("div", {},
        h("section", { class: "panel" }, h("h2", {}, `Registrations (${v.entrants.length})`), entrants),
        h("section", { class: "panel" }, h("h2", {}, "Events ", h("span", { class: "hint" }, "(newest first)")),
          h("ol", { class: "log", id: "t-events" }, ...log)))));
}

// (what a person was typing survives the redraw)
const reload = coalesced(async () => {
  detail = await api("GET", `/tournaments/${enc(tid)}`);
  const focus = document.activeElement && document.activeElement.id;
  const typed = [...document.querySelectorAll("#tour-actions input")].map((i) => [i.id, i.value]);
  render();
  for (const [id, value] of typed) if ($(`#${id}`)) $(`#${id}`).value = value;
  if (focus && $(`#${focus}`)) $(`#${focus}`).focus();
});

function logEvents(events) {
  for (const ev of events) {
    const e = ev.event || {};
    const bits = Object.entries(e).filter(([k, v]) => k !== "type" && typeof v !== "object").map(([k, v]) => `${k}=${v}`);
    log.unshift(h("li", { dataset: { kind: e.type } }, h("span", { class: "seq" }, `#${ev.seq}`),
      h("span", { class: "kind" }, e.type), bits.join(" ")));
  }
  log.splice(50);
}

async function tournamentPage() {
  await reload();
  if (!detail) return;
  const live = new Live();
  live.onStatus = (s) => { if ($("#conn")) $("#conn").textContent = s; };
  live.subscribe(tid, () => reload(), (events) => {
    logEvents(events);
    reload();
  });
}

(async () => {
  try {
    me = await requireLogin();
    topBar(me, "Tournaments");
    if (tid) await tournamentPage();
    else await listPage();
  } catch (e) {
    if (String(e.message) !== "not logged in") showError(e);
  }
})();
