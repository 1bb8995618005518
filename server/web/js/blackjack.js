// A blackjack table as a player sees it (/app/blackjack.html?table=<id>): the felt with the
// dealer and the 7 boxes, his seat, bets, side bets, offers and decisions. Others (staff)
// watch it read-only. What may be sent now is the view's `legal` list, never worked out here.
// Every events frame re-reads GET /tables/{id} (debounced) and the felt is drawn afresh from
// that view; the events themselves give the round's result for the viewer.
import { api, requireLogin } from "./api.js";
import { Live, tableSocket } from "./live.js";
import { $, answered, cardEl, countdown, h, money, params, say, showError, toMinor, topBar } from "./ui.js";

const TABLE = params.get("table") || "";
const BOXES = 7;
const SIDE_BETS = [["perfect_pairs", "Perfect Pairs"], ["21+3", "21+3"], ["push_22", "Push 22"],
  ["blazing_7s", "Blazing 7s"]];
const KIND_LABEL = {
  box: "bet", behind: "behind", double: "double", split: "split", insurance: "insurance",
  free_double: "free double", free_split: "free split", perfect_pairs: "Perfect Pairs", "21+3": "21+3",
  push_22: "Push 22", blazing_7s: "Blazing 7s", bet: "bet",
};
const PHASE_LABEL = {
  shuffle: "Shuffling", cut: "Cut", betting: "Place your bets", dealing: "Dealing", offers: "Insurance",
  play: "Playing", dealer: "Dealer's turn", reshuffle: "Reshuffle", closed: "Closed",
};
const AUTO_LABEL = {
  close_bets: "Bets close", stand: "Auto-stand", decline_offer: "Offers close", behind_double: "Behind: no double",
  behind_split: "Behind: first hand", pass_cut: "Cut passes", shuffle: "Shuffle", cut: "Cut",
};

let me = null;
let currency = "";
let tableInfo = null;
let view = null;
let seq = -1;
let live = null;
const ui = {};
// The viewer's settled wagers, by round label: {round, lines: [...], done}.
let outcome = null;
let sideKind = SIDE_BETS[0][0];
// The cards on the felt: the view's dealer and boxes, moved on by the card events as they
// come (so the dealer's last cards are seen even though the round ends in the same batch:
// the engine clears the felt then), and kept after the round until the next deal.
let shown = null; // {round, dealer, boxes, over, seq}
// Every wager seen in a view, by id: what a settlement line is about.
const wagerInfo = new Map();

// ---- small helpers -------------------------------------------------------------------------

const amountField = () => toMinor(ui.amount.value);
// A decision (hit, insure, follow behind...) answers the turn the view saw: once events have
// moved the table past that view, its buttons wait for the next view rather than offer a move
// that may no longer be legal (a split offered on the hand the croupier just dealt to).
const DECISIONS = new Set(["hit", "stand", "double", "split", "insure", "even_money", "decline_offer",
  "behind_double", "behind_split"]);
let lastEventSeq = -1;
const legal = (type) => !!view && (view.legal || []).includes(type)
  && !(DECISIONS.has(type) && seq < lastEventSeq);
const isPlayer = () => me && me.role === "player";

async function play(command, okText) {
  const answer = await live.play(TABLE, command);
  answered(answer, okText);
  if (answer.type === "accepted") scheduleRefresh(0);
  return answer;
}

function needAmount() {
  const a = amountField();
  if (!a) say("Enter an amount, e.g. 10.00", "error");
  return a;
}

// The visible value of some cards (a display aid for the dealer's cards and for cards the events
// brought before the next view: the hands' totals otherwise come from the view).
function cardsValue(cards) {
  let total = 0;
  let aces = 0;
  for (const c of cards) {
    if (c < 0) continue;
    const r = (c % 13) + 1;
    total += r >= 10 ? 10 : r;
    if (r === 1) aces += 1;
  }
  const soft = aces > 0 && total + 10 <= 21;
  return { total: soft ? total + 10 : total, soft };
}

function totalText(total, soft, blackjack) {
  if (blackjack) return "Blackjack";
  if (total > 21) return `${total} bust`;
  return soft ? `soft ${total}` : String(total);
}

// Every wager on box n: the bets while betting is open, the box's own wagers once dealt.
function wagersOf(n) {
  const b = (view.boxes || []).find((x) => x.number === n);
  const out = b ? [...b.wagers] : [];
  if (!b || !b.wagers.length) {
    for (const w of view.bets || []) if (w.hand === n) out.push(w);
  }
  for (const w of view.side_bets || []) if (w.hand === n && !out.some((x) => x.id === w.id)) out.push(w);
  return out;
}

// What the felt shows on box n: this round's wagers, or the last round's (settled) until the
// next bet on that box.
function shownWagers(n) {
  const now = wagersOf(n);
  if (now.length || !shown || !shown.over) return now;
  const b = shown.boxes.find((x) => x.number === n);
  return b ? b.wagers.map((w) => ({ ...w, settled: true })) : [];
}

// The boxes the viewer holds or has a stake on.
function myBoxes() {
  const mine = new Set();
  (view.seats || []).forEach((s, i) => { if (me && s === me.id) mine.add(i + 1); });
  return mine;
}

// The box of his open bet this round (the chosen box first; else his own, else one he is behind).
function myBetBox() {
  const has = (n) => (view.bets || []).some((w) => w.hand === n && me && w.player === me.id);
  const first = targetBox();
  if (first && has(first)) return first;
  for (let n = 1; n <= BOXES; n++) if (has(n)) return n;
  return null;
}

// The box a bet or side bet from the controls goes to: his own box (the chosen one if several).
function targetBox() {
  const sel = ui.boxSelect.value;
  if (sel) return parseInt(sel, 10);
  const mine = [...myBoxes()];
  return mine.length ? mine[0] : null;
}

// ---- the felt ----------------------------------------------------------------------------------

function handEl(hand, i, boxNo, active) {
  const marks = [];
  if (hand.blackjack) marks.push(h("span", { class: "mark bj" }, "BJ"));
  if (hand.doubled) marks.push(h("span", { class: "mark dbl" }, "doubled"));
  if (hand.done && !hand.blackjack) marks.push(h("span", { class: "mark done" }, hand.total > 21 ? "bust" : "done"));
  return h("div", { class: `hand${active ? " active" : ""}${hand.total > 21 ? " bust" : ""}`,
    dataset: { hand: i, total: hand.total, soft: hand.soft ? "1" : "0" } },
  h("div", { class: "cards" }, ...hand.cards.map(cardEl)),
  hand.cards.length ? h("div", { class: "total" }, totalText(hand.total, hand.soft, hand.blackjack)) : null,
  marks.length ? h("div", { class: "marks" }, ...marks) : null);
}

function chip(w) {
  const mine = me && w.player === me.id;
  const who = mine ? "you" : w.player;
  const hand = ["double", "split", "box", "behind", "free_double", "free_split"].includes(w.kind) && w.hand > 0
    ? ` h${w.hand + 1}` : "";
  return h("li", { class: `wager k-${w.kind.replace(/[^a-z0-9]/g, "")}${mine ? " mine" : ""}${w.settled ? " settled" : ""}`,
    dataset: { wager: w.id, kind: w.kind, player: w.player, amount: w.amount } },
  h("span", { class: "chip-dot" }), `${KIND_LABEL[w.kind] || w.kind}${hand} ${money(w.amount)}`,
  h("span", { class: "who" }, ` ${who}`));
}

function boxEl(n) {
  const holder = (view.seats || [])[n - 1] || "";
  const b = shown ? shown.boxes.find((x) => x.number === n) : null;
  const mine = me && holder === me.id;
  const turn = view.turn && view.turn.length && view.turn[0] === n;
  const wagers = shownWagers(n);
  const cls = ["box", mine ? "mine" : "", turn ? "turn" : "", holder ? "taken" : "free"].filter(Boolean).join(" ");
  const buttons = [];
  if (isPlayer()) {
    if (!holder && legal("sit")) {
      buttons.push(h("button", { id: `sit-${n}`, class: "small", onclick: () => play({ type: "sit", box: n }, `Seated at box ${n}`) }, "Sit"));
    }
    // A bet on his own box, or behind another's (a place_bet on a box someone else holds).
    if (legal("place_bet") && holder && view.phase === "betting") {
      const behind = !mine;
      buttons.push(h("button", { id: `bet-${n}`, class: "small", onclick: () => {
        const a = needAmount();
        if (a) play({ type: "place_bet", box: n, amount: a }, behind ? `Bet behind box ${n}` : `Bet on box ${n}`);
      } }, behind ? "Bet behind" : "Bet"));
    }
    if (legal("withdraw_bet") && (view.bets || []).some((w) => w.hand === n && w.player === me.id)) {
      buttons.push(h("button", { id: `withdraw-${n}`, class: "small", onclick: () => play({ type: "withdraw_bet", box: n }, "Bet withdrawn") }, "Withdraw"));
    }
  }
  const hands = b ? b.hands.map((hd, i) => handEl(hd, i, n, turn && view.turn[1] === i)) : [];
  if (hands.length && shown.over) hands.unshift(h("div", { class: "last-label" }, "last round"));
  return h("section", { class: shown && shown.over && b ? `${cls} last-round` : cls, dataset: { box: n, holder }, "aria-label": `Box ${n}` },
    h("header", { class: "box-head" }, h("span", { class: "num" }, String(n)),
      h("span", { class: "holder" }, holder ? (mine ? `${holder} (you)` : holder) : "free")),
    h("div", { class: "spot" }, ...hands),
    wagers.length ? h("ul", { class: "wagers" }, ...wagers.map(chip)) : null,
    buttons.length ? h("div", { class: "box-actions" }, ...buttons) : null);
}

function drawFelt() {
  const d = shown ? shown.dealer : [];
  const dt = cardsValue(d);
  ui.dealer.replaceChildren(
    h("div", { class: "label" }, "Dealer"),
    h("div", { class: "cards", id: "dealer-cards" }, ...d.map(cardEl)),
    d.length ? h("div", { class: "total", id: "dealer-total" },
      totalText(dt.total, dt.soft, !!(shown && shown.dealerBlackjack))) : null);
  // Box 1 is on the dealer's left: on the players' right.
  const boxes = [];
  for (let n = BOXES; n >= 1; n--) boxes.push(boxEl(n));
  ui.boxes.replaceChildren(...boxes);
}

// ---- the controls ------------------------------------------------------------------------------

function drawStatus() {
  ui.phase.textContent = PHASE_LABEL[view.phase] || view.phase;
  ui.phase.dataset.phase = view.phase;
  ui.round.textContent = view.round ? `Round ${view.round}` : "";
  ui.limits.textContent = `${money(view.min_bet, currency)} – ${money(view.max_bet, currency)}`;
  ui.shoe.textContent = `${view.cards_left} cards in the shoe${view.last_round ? " · last round" : ""}`;
  countdown(ui.timer, view.next_automatic, (c) => AUTO_LABEL[c] || c);
  if (view.jackpot_meters && view.jackpot_meters.length === 2) {
    ui.jackpot.textContent = `Blazing 7s jackpot: minor ${money(view.jackpot_meters[0], currency)} · major ${money(view.jackpot_meters[1], currency)}`;
  } else ui.jackpot.textContent = "";
  if (view.tournament) {
    const st = view.tournament.stacks || {};
    ui.jackpot.textContent = `Tournament ${view.tournament.tournament}, phase ${view.tournament.phase}: ` +
      Object.entries(st).map(([p, v]) => `${p} ${v}`).join(", ");
  }
}

function drawControls() {
  if (!isPlayer()) {
    ui.controls.replaceChildren(h("p", { class: "muted", id: "watching" }, "You are watching this table."));
    return;
  }
  const mine = [...myBoxes()];
  // Box choice when he holds several boxes.
  const prev = ui.boxSelect.value;
  ui.boxSelect.replaceChildren(...mine.map((n) => h("option", { value: n, selected: String(n) === prev }, `Box ${n}`)));
  ui.boxSelect.hidden = mine.length < 2;

  const rows = [];
  // Betting.
  if (legal("place_bet") || legal("withdraw_bet") || legal("place_side_bet") || legal("withdraw_side_bet")) {
    const bet = [];
    if (legal("place_bet") && mine.length) {
      bet.push(h("button", { id: "place-bet", class: "primary", onclick: () => {
        const box = targetBox();
        const a = needAmount();
        if (box && a) play({ type: "place_bet", box, amount: a }, `Bet ${money(a, currency)} on box ${box}`);
      } }, "Place bet"));
    }
    if (legal("withdraw_bet")) {
      const box = myBetBox();
      if (box) bet.push(h("button", { id: "withdraw", onclick: () => play({ type: "withdraw_bet", box }, "Bet withdrawn") }, "Withdraw bet"));
    }
    if (bet.length) rows.push(h("div", { class: "row" }, ...bet));
    // Only the side bets this table offers (the view names them).
    const offered = SIDE_BETS.filter(([k]) => (view.side_bets_offered || []).includes(k));
    if (legal("place_side_bet") && offered.length) {
      if (!offered.some(([k]) => k === sideKind)) sideKind = offered[0][0];
      const sel = h("select", { id: "side-kind", "aria-label": "Side bet", onchange: () => { sideKind = sel.value; } },
        ...offered.map(([k, label]) => h("option", { value: k, selected: k === sideKind }, label)));
      rows.push(h("div", { class: "row side" }, h("span", { class: "muted" }, "Side bet"), sel,
        h("button", { id: "place-side-bet", onclick: () => {
          const box = myBetBox();
          const a = needAmount();
          if (box && a) play({ type: "place_side_bet", box, bet: sel.value, amount: a }, `Side bet on box ${box}`);
        } }, "Place side bet")));
    }
    if (legal("withdraw_side_bet")) {
      const mineSide = (view.side_bets || []).filter((w) => w.player === me.id);
      if (mineSide.length) {
        rows.push(h("div", { class: "row" }, ...mineSide.map((w) => h("button", {
          class: "small", dataset: { withdrawSide: w.kind },
          onclick: () => play({ type: "withdraw_side_bet", box: w.hand, bet: w.kind }, "Side bet withdrawn"),
        }, `Withdraw ${KIND_LABEL[w.kind] || w.kind} (box ${w.hand})`))));
      }
    }
  }
  // Insurance and even money offered to him.
  const offers = (view.offers || []).filter((o) => o.startsWith(`${me.id}@`));
  offers.forEach((o, i) => {
    const box = parseInt(o.slice(o.lastIndexOf("@") + 1), 10);
    const sfx = i === 0 ? "" : `-${box}`;
    const btns = [h("span", {}, `Box ${box}: `)];
    if (legal("insure")) {
      btns.push(h("button", { id: `insure${sfx}`, onclick: () => {
        const a = needAmount();
        if (a) play({ type: "insure", box, amount: a }, `Insured box ${box}`);
      } }, "Insure"));
    }
    if (legal("even_money")) {
      btns.push(h("button", { id: `even-money${sfx}`, onclick: () => play({ type: "even_money", box }, "Even money taken") }, "Even money"));
    }
    if (legal("decline_offer")) {
      btns.push(h("button", { id: `decline${sfx}`, onclick: () => play({ type: "decline_offer", box }, "Declined") }, "No, thanks"));
    }
    if (btns.length > 1) rows.push(h("div", { class: "row offer", dataset: { offer: o } }, ...btns));
  });
  // Decisions on the hand whose turn it is, when that hand is his.
  if (view.turn && view.turn.length) {
    const [box, hand] = view.turn;
    const holder = (view.seats || [])[box - 1];
    const acts = [["hit", "Hit"], ["stand", "Stand"], ["double", "Double"], ["split", "Split"]]
      .filter(([t]) => legal(t))
      .map(([t, label]) => h("button", { id: `action-${t}`, class: `act act-${t}`, dataset: { turnBox: box, turnHand: hand },
        onclick: () => play({ type: t, box, hand }) }, label));
    if (holder === me.id && acts.length) {
      rows.push(h("div", { class: "row actions", id: "actions" },
        h("span", { class: "muted" }, `Box ${box}, hand ${hand + 1}:`), ...acts));
    }
  }
  // A player behind answers the holder's double or split.
  if (legal("behind_double") || legal("behind_split")) {
    const box = view.turn && view.turn.length ? view.turn[0] : 0;
    const btns = [h("span", {}, `Behind box ${box}: `)];
    if (legal("behind_double")) {
      btns.push(h("button", { id: "behind-double-yes", onclick: () => play({ type: "behind_double", box, accept: true }, "Doubled behind") }, "Double too"),
        h("button", { id: "behind-double-no", onclick: () => play({ type: "behind_double", box, accept: false }, "Not doubling") }, "Don't double"));
    }
    if (legal("behind_split")) {
      for (const [c, label] of [["first", "Follow first hand"], ["second", "Follow second hand"], ["both", "Both (second stake)"]]) {
        btns.push(h("button", { id: `behind-split-${c}`, onclick: () => play({ type: "behind_split", box, choice: c }, `Following ${c}`) }, label));
      }
    }
    rows.push(h("div", { class: "row behind" }, ...btns));
  }
  if (legal("leave") && mine.length) {
    rows.push(h("div", { class: "row" }, h("button", { id: "leave", class: "link", onclick: () => play({ type: "leave" }, "You left the table") }, "Leave the table")));
  }
  if (!rows.length) {
    let hint = "";
    if (!mine.length && legal("sit")) hint = "Choose a free box and sit down, or bet behind a player.";
    else if (view.phase === "betting") hint = "";
    else hint = "Waiting…";
    if (hint) rows.push(h("p", { class: "muted" }, hint));
  }
  ui.actions.replaceChildren(...rows);
}

// A view (at `at`, its seq) replaces what the felt shows, unless events already moved it further.
function takeView(v, at) {
  view = v;
  for (const b of v.boxes || []) for (const w of b.wagers) wagerInfo.set(w.id, { ...w, box: b.number });
  for (const w of [...(v.bets || []), ...(v.side_bets || [])]) wagerInfo.set(w.id, { ...w, box: w.hand, hand: -1 });
  if (shown && shown.seq > at) return;
  if ((v.boxes || []).length || (v.dealer || []).length) {
    shown = { round: v.round, dealer: [...v.dealer], over: false, seq: at,
      boxes: v.boxes.map((b) => ({ number: b.number, wagers: [...b.wagers],
        hands: b.hands.map((x) => ({ ...x, cards: [...x.cards] })) })) };
  } else if (shown && !shown.over) {
    shown = null;
  }
}

// What the events change on the felt before the next view comes.
function applyToFelt(seqNo, e) {
  if (!shown || shown.over) {
    if (e.type === "bets_closed") shown = null;
    return;
  }
  shown.seq = seqNo;
  const box = (n) => shown.boxes.find((b) => b.number === n);
  const setTotal = (hd) => {
    const v = cardsValue(hd.cards);
    hd.total = v.total;
    hd.soft = v.soft;
  };
  if (e.type === "card_dealt") {
    if (e.box === 0) {
      shown.dealer.push(e.card);
      return;
    }
    const b = box(e.box);
    if (!b) return;
    while (b.hands.length <= e.hand) b.hands.push({ cards: [], total: 0, soft: false, blackjack: false, doubled: false, done: false });
    b.hands[e.hand].cards.push(e.card);
    setTotal(b.hands[e.hand]);
  } else if (e.type === "hole_card_dealt") {
    shown.dealer.push(-1);
  } else if (e.type === "hole_card_shown") {
    const i = shown.dealer.indexOf(-1);
    if (i >= 0) shown.dealer[i] = e.card;
  } else if (e.type === "acted") {
    const b = box(e.box);
    const hd = b && b.hands[e.hand];
    if (!hd) return;
    if (e.action.endsWith("double")) hd.doubled = true;
    if (e.action.endsWith("split") && hd.cards.length === 2) {
      const moved = { cards: [hd.cards.pop()], total: 0, soft: false, blackjack: false, doubled: false, done: false };
      setTotal(hd);
      setTotal(moved);
      b.hands.push(moved);
    }
  } else if (e.type === "hand_done") {
    const hd = box(e.box) && box(e.box).hands[e.hand];
    if (hd) {
      hd.done = true;
      hd.total = e.total;
    }
  } else if (e.type === "dealer_done") {
    shown.dealerBlackjack = e.blackjack;
  } else if (e.type === "round_settled" || e.type === "round_voided") {
    shown.over = true;
  }
}

function render() {
  if (!view) return;
  drawStatus();
  drawFelt();
  drawControls();
}

// ---- outcome and balance ------------------------------------------------------------------------

function outcomeLine(e) {
  const back = e.returned + e.won;
  let text;
  if (e.won > 0) text = `won ${money(e.won, currency)} (back ${money(back, currency)})`;
  else if (e.returned === e.stake && e.stake > 0) text = `push: ${money(e.returned, currency)} back`;
  else if (e.stake === 0) text = e.reason;
  else text = `lost ${money(e.stake - e.returned, currency)}`;
  const w = wagerInfo.get(e.wager);
  let what = e.wager;
  if (w) {
    what = `Box ${w.box} ${KIND_LABEL[w.kind] || w.kind}`;
    if (w.hand >= 0 && !["bet", "insurance"].includes(w.kind) && !SIDE_BETS.some(([k]) => k === w.kind)) {
      what += `, hand ${w.hand + 1}`;
    }
  }
  return h("li", { dataset: { wager: e.wager, reason: e.reason } }, `${what} (${e.reason}): ${text}`);
}

function drawOutcome() {
  if (!outcome) {
    ui.outcome.replaceChildren();
    ui.outcome.hidden = true;
    return;
  }
  ui.outcome.hidden = false;
  const stake = outcome.lines.reduce((s, e) => s + e.stake, 0);
  const back = outcome.lines.reduce((s, e) => s + e.returned + e.won, 0);
  const net = back - stake;
  let head;
  if (!outcome.done) head = "Settling…";
  else if (outcome.voided) head = "Round void: your stakes came back";
  else if (net > 0) head = `You won ${money(net, currency)}`;
  else if (net < 0) head = `You lost ${money(-net, currency)}`;
  else if (outcome.lines.every((e) => e.won === 0 && e.returned === e.stake)) head = "Push: your stakes came back";
  else head = "Even: you neither won nor lost";
  ui.outcome.className = `panel outcome ${outcome.done ? (net > 0 ? "won" : net < 0 ? "lost" : "push") : ""}`;
  ui.outcome.dataset.net = String(net);
  ui.outcome.replaceChildren(
    h("div", { class: "result", id: "outcome-head" }, head),
    h("div", { class: "muted" }, `${outcome.round}: staked ${money(stake, currency)}, back ${money(back, currency)}`),
    h("ul", { class: "lines" }, ...outcome.lines.map(outcomeLine)));
}

async function refreshBalance() {
  try {
    const m = await api("GET", "/me");
    const b = m.balance || {};
    ui.balance.textContent = money(b.available, b.currency || currency);
    ui.pending.textContent = b.pending ? ` (${money(b.pending, b.currency || currency)} in play)` : "";
  } catch (e) {
    showError(e);
  }
}

function onEvents(events) {
  let money_ = false;
  let ended = false;
  for (const { seq: at, round, event: e } of events) {
    if (at > lastEventSeq) lastEventSeq = at;
    if (!e) continue;
    applyToFelt(at, e);
    if (e.type === "wager_settled" && me && e.player === me.id) {
      if (!outcome || outcome.round !== round) outcome = { round, lines: [], done: false };
      outcome.lines.push(e);
      money_ = true;
    } else if ((e.type === "wager_placed" || e.type === "wager_voided" || e.type === "wager_refunded")
      && me && e.player === me.id) {
      money_ = true;
      if (e.type === "wager_voided" && outcome && outcome.round === round) outcome.voided = true;
    } else if ((e.type === "round_settled" || e.type === "round_voided") && outcome && outcome.round === round) {
      outcome.done = true;
      if (e.type === "round_voided") outcome.voided = true;
    } else if (e.type === "round_settled" || e.type === "round_voided") {
      money_ = true;
    }
    if (e.type === "round_settled" || e.type === "round_voided") {
      money_ = true;
      ended = true;
    }
  }
  drawOutcome();
  if (view) {
    drawFelt();
    drawControls(); // the decisions the view offered wait for the next view (see `legal`)
  }
  if (money_) refreshBalance();
  // (decisions hidden until the next view: read it at once, not after the betting's debounce)
  const waiting = !!view && (view.legal || []).some((t) => DECISIONS.has(t));
  scheduleRefresh(ended || waiting ? 0 : 150);
}

// ---- the view -----------------------------------------------------------------------------------

let refreshTimer = null;
function scheduleRefresh(ms) {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(refresh, ms);
}

async function refresh() {
  try {
    const d = await api("GET", `/tables/${encodeURIComponent(TABLE)}`);
    if (d.seq < seq) return; // an older answer overtaken by a newer one
    seq = d.seq;
    tableInfo = d.table;
    currency = tableInfo.currency || currency;
    takeView(d.view, d.seq);
    render();
    if (seq < lastEventSeq) scheduleRefresh(150); // still behind the events: its decisions wait
  } catch (e) {
    showError(e);
    // (a table moving between processes answers 503 for a moment: the decisions it hides
    // must not wait for the next event, which may be the auto-stand)
    if (seq < lastEventSeq) scheduleRefresh(1000);
  }
}

function layout() {
  ui.phase = h("span", { id: "phase", class: "badge phase" });
  ui.round = h("span", { id: "round", class: "muted" });
  ui.limits = h("span", { id: "limits", class: "muted" });
  ui.shoe = h("span", { id: "shoe", class: "muted" });
  ui.timer = h("span", { id: "timer", class: "timer" });
  ui.conn = h("span", { id: "connection", class: "status" });
  ui.jackpot = h("div", { id: "jackpot", class: "muted" });
  ui.balance = h("strong", { id: "balance" });
  ui.pending = h("span", { id: "pending", class: "muted" });
  ui.dealer = h("div", { class: "dealer", id: "dealer" });
  ui.boxes = h("div", { class: "boxes", id: "boxes" });
  ui.amount = h("input", { id: "bet-amount", inputmode: "decimal", size: 8, "aria-label": "Amount",
    value: "" });
  ui.boxSelect = h("select", { id: "bet-box", "aria-label": "Box", hidden: true });
  ui.chips = h("div", { class: "chips bj-chips", id: "chips" });
  ui.actions = h("div", { id: "actions-area" });
  ui.controls = h("section", { class: "panel controls", id: "controls" },
    h("div", { class: "row" }, h("label", { for: "bet-amount" }, `Amount (${currency})`), ui.amount, ui.boxSelect, ui.chips),
    ui.actions);
  ui.outcome = h("section", { class: "panel outcome", id: "outcome", hidden: true, "aria-live": "polite" });
  const felt = h("div", { class: "bj-felt" }, ui.dealer,
    h("div", { class: "felt-print" }, h("div", {}, "BLACKJACK PAYS 3 TO 2"),
      h("div", { class: "small" }, "Dealer must stand on 17 · Insurance pays 2 to 1")),
    ui.boxes);
  const status = h("section", { class: "panel status-bar" },
    h("div", { class: "row" }, h("strong", { id: "table-name" }, tableInfo.name || TABLE),
      h("span", { class: "muted" }, `${tableInfo.profile}, ${tableInfo.mode}`), ui.phase, ui.round, ui.timer),
    h("div", { class: "row" }, ui.limits, ui.shoe, ui.conn),
    ui.jackpot);
  const wallet = isPlayer() ? h("div", { class: "wallet" }, "Balance ", ui.balance, ui.pending) : null;
  $("#main").replaceChildren(status, wallet, felt, ui.outcome, ui.controls);
}

function drawChips() {
  const min = view ? view.min_bet : 0;
  const values = [...new Set([min, 2 * min, 5 * min, 10 * min].filter((v) => v > 0 && (!view || v <= view.max_bet)))];
  ui.chips.replaceChildren(...values.map((v) => h("button", { class: "chip", type: "button", dataset: { chip: v },
    title: money(v, currency), onclick: () => { ui.amount.value = money(v).replace(/'/g, ""); } },
  money(v).replace(/\.00$/, ""))));
}

(async () => {
  try {
    if (!TABLE) {
      say("No table given: open a table from the lobby.", "error");
      return;
    }
    me = await requireLogin();
    topBar(me, "Blackjack");
    const d = await api("GET", `/tables/${encodeURIComponent(TABLE)}`);
    tableInfo = d.table;
    currency = tableInfo.currency;
    seq = d.seq;
    takeView(d.view, d.seq);
    document.title = `Casino: ${tableInfo.name || TABLE}`;
    layout();
    if (view.min_bet) ui.amount.value = money(view.min_bet).replace(/'/g, "");
    drawChips();
    render();
    if (isPlayer()) refreshBalance();
    live = new Live(tableSocket(tableInfo.ws_url));
    live.onStatus = (s) => {
      ui.conn.textContent = s === "connected" ? "" : s;
      if (s === "logged-out") say("Your session ended: log in again from the lobby.", "error");
      if (s === "connected") scheduleRefresh(0);
    };
    live.onRefusal = (m) => say(`Refused (${m.code}): ${m.message}`, "error");
    live.onError = (m) => say(`Error (${m.code}): ${m.message}`, "error");
    live.subscribe(TABLE, (snap) => {
      if (snap.seq >= seq) {
        seq = snap.seq;
        takeView(snap.view, snap.seq);
        render();
      }
    }, onEvents);
  } catch (e) {
    if (String(e.message) !== "not logged in") showError(e);
  }
})();
