// What every page shares: building elements, money, cards, messages, the top bar.
import { logout } from "./api.js";

// h("div", {class: "x", onclick: f}, child, ...): text children are text nodes (never HTML:
// nothing a player named can run as markup).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

// Minor units to "CHF 12.50" (every currency here has two decimals; points have none).
export function money(minor, currency = "") {
  if (minor === null || minor === undefined) return "";
  if (currency === "PTS") return `${minor} pts`;
  const sign = minor < 0 ? "-" : "";
  const abs = Math.abs(minor);
  const units = Math.floor(abs / 100).toLocaleString("en-US").replace(/,/g, "'");
  const cents = String(abs % 100).padStart(2, "0");
  return `${currency ? currency + " " : ""}${sign}${units}.${cents}`;
}

// "12.50" -> 1250 (what a person types into an amount field).
export function toMinor(text) {
  const m = String(text).trim().match(/^(\d+)(?:[.,](\d{1,2}))?$/);
  if (!m) return null;
  return parseInt(m[1], 10) * 100 + (m[2] ? parseInt(m[2].padEnd(2, "0"), 10) : 0);
}

// Cards travel as ints 0..51 (games/cards.py): rank = n % 13, suit = n / 13; -1 is face down.
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const SUITS = ["♠", "♥", "♦", "♣"];
export function cardName(n) {
  return n < 0 ? "face down" : RANKS[n % 13] + SUITS[Math.floor(n / 13)];
}
export function cardEl(n) {
  if (n < 0) return h("span", { class: "card back", title: "face down" });
  const suit = Math.floor(n / 13);
  const red = suit === 1 || suit === 2;
  return h("span", { class: `card ${red ? "red" : "black"}`, title: cardName(n), dataset: { card: n } },
    h("span", { class: "rank" }, RANKS[n % 13]), h("span", { class: "suit" }, SUITS[suit]));
}

// A message in the page's message bar: kind "error" (a refusal: its code and message),
// "ok" or "info". Kept on screen until the next one, and read out by screen readers.
export function say(text, kind = "info") {
  let bar = $("#messages");
  if (!bar) {
    bar = h("div", { id: "messages", role: "status", "aria-live": "polite" });
    const top = $("header.top");
    if (top) top.after(bar);
    else document.body.prepend(bar);
  }
  bar.replaceChildren(h("div", { class: `msg ${kind}` }, text));
}

// An answer frame from Live.play(): a refusal is shown with its code; true if accepted.
export function answered(answer, what = "") {
  if (answer.type === "accepted") {
    if (what) say(what, "ok");
    return true;
  }
  say(`Refused (${answer.code}): ${answer.message}`, "error");
  return false;
}

export function showError(e) {
  say(e.code ? `Refused (${e.code}): ${e.message}` : String(e.message || e), "error");
}

// The top bar: where a person can go from here (by role), who he is, and log out.
export function topBar(me, title) {
  const links = [h("a", { href: "/app/" }, "Lobby")];
  if (["croupier", "chef", "director", "inspector", "admin"].includes(me.role)) {
    links.push(h("a", { href: "/app/pit.html" }, "Pit"));
  }
  links.push(h("a", { href: "/app/tournaments.html" }, "Tournaments"));
  const out = h("button", {
    // (a session already gone answers 401: the person still lands on the login)
    class: "link", onclick: async () => { try { await logout(); } catch { /* gone already */ } location.href = "/app/"; },
  }, "Log out");
  const bar = h("header", { class: "top" },
    h("strong", { class: "brand" }, "Casino"), h("span", { class: "title" }, title),
    h("nav", {}, ...links), h("span", { class: "who" }, `${me.id} (${me.role})`), out);
  document.body.prepend(bar);
  return bar;
}

export const params = new URLSearchParams(location.search);

// Seconds left until `inMs` from when the view arrived: for a countdown element.
export function countdown(el, due, label) {
  clearInterval(el._timer);
  if (!due) {
    el.textContent = "";
    return;
  }
  const end = performance.now() + due.in_ms;
  const tick = () => {
    const left = Math.max(0, Math.ceil((end - performance.now()) / 1000));
    el.textContent = `${label(due.command)} in ${left}s`;
    if (left <= 0) clearInterval(el._timer);
  };
  tick();
  el._timer = setInterval(tick, 250);
}

// One load at a time, none lost: calls made while `load` runs are answered by one more run
// after it (the view after every batch of events, without a request per event). Errors are
// shown, never thrown.
export function coalesced(load) {
  let running = null;
  let again = false;
  return function run() {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await load();
        } catch (e) {
          showError(e);
        }
      } while (again);
      running = null;
    })();
    return running;
  };
}
