// The websocket protocol (docs/protocol.md, "Websockets"), as a page uses it: one socket,
// authenticated by the session cookie on the handshake; every command answered once by its
// cid; events in seq order; on a dropped connection it reconnects with a growing pause and
// subscribes again with `since` = the last seq seen, so nothing is missed and nothing twice.

import { toLogin } from "./api.js";
import { money, say } from "./ui.js";

let cids = 0;
const nextCid = () => `p${Date.now().toString(36)}-${++cids}`;

// Where a table's page opens its socket: at the table's owner when the lobby names its address
// (`ws_url`) on this page's own host (a proxy routing a path to each process), so its commands
// are not forwarded; else this host's /ws. (Another host's would not take the session cookie:
// the handshake's Origin must be the host it reaches.)
export function tableSocket(wsUrl) {
  const here = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws";
  try {
    const url = new URL(wsUrl || here);
    return url.host === location.host && url.protocol === new URL(here).protocol ? url.href : here;
  } catch {
    return here;
  }
}

export class Live {
  constructor(url) {
    this.home = tableSocket("");
    this.url = url || this.home;
    this.failures = 0; // closes in a row at a table's owner's address: back home after a few
    this.ws = null;
    this.tables = new Map(); // table -> {seq, onSnapshot, onEvents}
    this.waiting = new Map(); // cid -> {resolve, command}
    this.retry = 250;
    this.onStatus = () => {};
    this.connect();
  }

  connect() {
    const ws = new WebSocket(this.url, ["casino.v1"]);
    this.ws = ws;
    ws.onopen = () => {
      this.onStatus("connected");
      for (const [table, t] of this.tables) this.sendSubscribe(table, t);
    };
    ws.onmessage = (m) => this.receive(JSON.parse(m.data));
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      // 4010: his own session limit is up; a new connection would start the next session at
      // once, so the page stays off until he chooses to come back (reloads).
      if (e.code === 4010) {
        this.onStatus("session-over");
        say("Your session limit is reached: the table is closed for you. Reload the page to start a new session.",
          "error");
        return;
      }
      // 4012: this session was logged out (from another tab, say); like 4001 and 4003, no login
      // left. 4011: he is excluded; the login page says until when.
      const loggedOut = e.code === 4001 || e.code === 4003 || e.code === 4011 || e.code === 4012;
      this.onStatus(loggedOut ? "logged-out" : "reconnecting");
      // Commands in flight get no answer on this socket: sent again with the same cid after
      // reconnecting, they are answered once (the table applies a cid at most once).
      if (loggedOut) {  // the login is gone: log in again, then come back
        toLogin();
        return;
      }
      // An owner's address that keeps failing (its process gone, the table moved on): this
      // host's /ws serves every table, forwarded.
      if (this.url !== this.home && ++this.failures >= 3) this.url = this.home;
      // Spread out: a table's stream failing on the server (1011) closes all its sockets at
      // once, and they should not all come back in the same instant, four times a second.
      setTimeout(() => this.connect(), this.retry * (0.5 + Math.random()));
      this.retry = Math.min(this.retry * 2, 5000);
    };
  }

  // The socket at another address (the table's owner's, once the page knows it): opened
  // there, every table followed again from its last seq, commands waiting sent again.
  moveTo(url) {
    if (!url || url === this.url) return;
    this.url = url;
    const old = this.ws;
    this.ws = null; // (its close is no longer this one's)
    if (old) old.close();
    this.connect();
  }

  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  sendSubscribe(table, t) {
    const frame = { type: "subscribe", cid: nextCid(), table };
    if (t.seq !== null) frame.since = t.seq;
    this.send(frame);
    for (const [cid, w] of this.waiting) if (w.table === table) this.send(w.frame);
  }

  // Follow a table: onSnapshot(snapshot frame), then onEvents(list of {seq, round, event}).
  subscribe(table, onSnapshot, onEvents) {
    const t = { seq: null, onSnapshot, onEvents };
    this.tables.set(table, t);
    this.sendSubscribe(table, t);
  }

  // Play a command at a table: resolves to the answer frame ({type: "accepted"} or
  // {type: "rejected", code, message}); never rejects.
  play(table, command) {
    const cid = nextCid();
    const frame = { type: "play", cid, table, command };
    return new Promise((resolve) => {
      this.waiting.set(cid, { resolve, frame, table });
      this.send(frame);
    });
  }

  receive(msg) {
    // The pause before a reconnect starts again from its shortest once the server serves
    // again (an answer accepted), not merely once a socket opens: one that opens and is
    // closed at once (the database away, say) keeps backing off.
    if (msg.type === "accepted") {
      this.retry = 250;
      this.failures = 0;
    }
    if (msg.type === "accepted" || msg.type === "rejected") {
      const w = this.waiting.get(msg.cid);
      if (w) {
        this.waiting.delete(msg.cid);
        w.resolve(msg);
      } else if (msg.type === "rejected" && this.onRefusal) {
        this.onRefusal(msg);
      }
      return;
    }
    if (msg.type === "snapshot") {
      const t = this.tables.get(msg.table);
      if (!t) return;
      t.seq = msg.seq;
      t.onSnapshot(msg);
      return;
    }
    if (msg.type === "events") {
      const t = this.tables.get(msg.table);
      if (!t) return;
      const fresh = msg.events.filter((e) => t.seq === null || e.seq > t.seq);
      if (!fresh.length) return;
      t.seq = fresh[fresh.length - 1].seq;
      t.onEvents(fresh);
      return;
    }
    if (msg.type === "reality_check") {  // the reminder he asked for (PUT /me/limits)
      const result = msg.net === 0 ? "neither won nor lost" : `${msg.net > 0 ? "won" : "lost"} ${money(Math.abs(msg.net), msg.currency)}`;
      say(`Reality check: you have been playing for ${msg.minutes} minutes and have ${result} in that time.`,
        "reality");
      return;
    }
    if (msg.type === "error" && this.onError) this.onError(msg);
  }
}
