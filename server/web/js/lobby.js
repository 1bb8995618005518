// The lobby: log in (or open a player account), the tables with their game, limits, players
// and state, and for a player his wallet and statement.
import { api, login, whoami } from "./api.js";
import { $, h, money, params, say, showError, topBar } from "./ui.js";

const main = $("#main");

function loginForm() {
  const user = h("input", { name: "user", autocomplete: "username", required: true, "aria-label": "User name" });
  const password = h("input", { name: "password", type: "password", autocomplete: "current-password",
    required: true, "aria-label": "Password" });
  const form = h("form", { class: "login panel" },
    h("h1", {}, "Casino"),
    h("label", {}, "User name", user), h("label", {}, "Password", password),
    h("button", { class: "primary", type: "submit", id: "login" }, "Log in"),
    h("button", { type: "button", id: "register", onclick: () => register(user.value, password.value) },
      "Open a player account"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await login(user.value.trim(), password.value);
      const next = params.get("next");
      location.href = next && next.startsWith("/app/") ? next : "/app/";
    } catch (e) {
      showError(e);
    }
  });
  main.replaceChildren(form);
}

async function register(user, password) {
  try {
    await api("POST", "/auth/register", { user: user.trim(), password, currency: "CHF" });
    await login(user.trim(), password);
    location.reload();
  } catch (e) {
    showError(e);
  }
}

function limits(t) {
  const s = t.settings || {};
  if (s.min_bet !== undefined) return `${money(s.min_bet, t.currency)} – ${money(s.max_bet, t.currency)}`;
  return "";
}

// What a table's view says of its players and its state (one GET per table).
function describe(t, detail) {
  const v = detail.view || {};
  if (t.game === "blackjack") {
    const players = (v.seats || []).filter((s) => s).length;
    return { players: `${players} / 7 boxes`, state: v.phase || "", limits: `${money(v.min_bet, t.currency)} – ${money(v.max_bet, t.currency)}` };
  }
  const players = new Set((v.bets || []).map((b) => b.player)).size;
  const s = v.settings || {};
  const lim = s.minimum !== undefined ? `${money(s.minimum, t.currency)} – ${money((s.maxima || {}).simple, t.currency)}` : limits(t);
  return { players: `${players} betting`, state: v.phase ? `${v.phase}, spin ${v.spin}` : "", limits: lim };
}

async function tablesPanel(me) {
  const tables = await api("GET", "/tables");
  const staff = ["croupier", "chef", "director", "admin"].includes(me.role);
  const rows = await Promise.all(tables.map(async (t) => {
    let d = { players: "", state: t.running ? "" : "not running", limits: limits(t) };
    try { d = describe(t, await api("GET", `/tables/${encodeURIComponent(t.id)}`)); } catch (e) { /* shown as is */ }
    const q = `?table=${encodeURIComponent(t.id)}`;
    const go = [];
    if (me.role === "player") go.push(h("a", { href: `/app/${t.game}.html${q}`, class: "play" }, "Play"));
    else go.push(h("a", { href: `/app/${t.game}.html${q}` }, "Watch"));
    if (staff) go.push(" · ", h("a", { href: `/app/console.html${q}`, class: "console" }, "Console"));
    return h("tr", { dataset: { table: t.id } },
      h("td", {}, h("strong", {}, t.name || t.id), h("div", { class: "muted" }, `${t.profile}, ${t.mode}`)),
      h("td", {}, t.game), h("td", {}, d.limits), h("td", {}, d.players), h("td", {}, d.state), h("td", {}, ...go));
  }));
  return h("section", { class: "panel" }, h("h2", {}, "Tables"),
    h("table", { class: "grid", id: "tables" },
      h("thead", {}, h("tr", {}, ...["Table", "Game", "Limits", "Players", "State", ""].map((x) => h("th", {}, x)))),
      h("tbody", {}, ...rows)));
}

async function walletPanel(me) {
  const currency = params.get("currency") || me.currency;
  const statement = await api("GET", `/accounts/${encodeURIComponent(me.id)}/statement?currency=${encodeURIComponent(currency)}`)
    .catch(() => api("GET", `/accounts/${encodeURIComponent(me.id)}/statement`));
  const b = me.balance || {};
  const lines = statement.slice(-25).reverse().map((s) => h("tr", {},
    h("td", {}, new Date(s.at).toLocaleString()), h("td", {}, s.code || s.op), h("td", {}, s.ref),
    h("td", { class: "num" }, money(s.change, currency)), h("td", { class: "num" }, money(s.balance, currency))));
  return h("section", { class: "panel", id: "wallet" }, h("h2", {}, "Wallet"),
    h("p", {}, "Available ", h("strong", { id: "balance" }, money(b.available, b.currency)),
      b.pending ? h("span", { class: "muted" }, ` (${money(b.pending, b.currency)} in play)`) : ""),
    h("p", {}, h("a", { href: "/app/recall.html", id: "recall" }, "Recall my rounds")),
    h("h3", {}, "Statement"),
    h("table", { class: "grid", id: "statement" },
      h("thead", {}, h("tr", {}, h("th", {}, "When"), h("th", {}, "What"), h("th", {}, "Reference"),
        h("th", { class: "num" }, "Change"), h("th", { class: "num" }, "Balance"))),
      h("tbody", {}, ...lines)));
}

async function lobby(me) {
  topBar(me, "Lobby");
  const parts = [await tablesPanel(me)];
  if (me.role === "player") parts.unshift(await walletPanel(me));
  main.replaceChildren(...parts);
}

(async () => {
  try {
    const me = await whoami();
    if (me) await lobby(me);
    else loginForm();
  } catch (e) {
    say(String(e), "error");
  }
})();
