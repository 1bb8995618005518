// Provably fair RNG spins, checked in the browser (roulette/fair.py, FAIRNESS.md): the seed
// revealed after the result must hash to the commitment published before the bets, and give
// the number: HMAC-SHA256(seed, "<table>:<spin>:<block>") read 4 bytes big-endian, the first
// value below the largest multiple of 37 under 2^32 taken mod 37 (rejection sampling).

const LIMIT = 2 ** 32 - (2 ** 32 % 37);
const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");
const bytes = (h) => new Uint8Array(h.match(/../g).map((x) => parseInt(x, 16)));

export async function spinNumber(seed, table, spin) {
  const key = await crypto.subtle.importKey("raw", bytes(seed), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  for (let block = 0; ; block++) {
    const mac = new DataView(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${table}:${spin}:${block}`)));
    for (let i = 0; i < 32; i += 4) {
      const v = mac.getUint32(i, false);
      if (v < LIMIT) return v % 37;
    }
  }
}

// {ok, why}: whether the revealed seed is the one committed to and gives the number.
export async function verifySpin(commitment, seed, table, spin, number) {
  if (!/^[0-9a-f]{64}$/.test(seed)) return { ok: false, why: "the seed is not 64 hex digits" };
  if (!crypto.subtle) return { ok: false, why: "this browser cannot check it here (use casino verify)" };
  const hashed = hex(await crypto.subtle.digest("SHA-256", bytes(seed)));
  if (hashed !== commitment) return { ok: false, why: `sha256(seed) is ${hashed.slice(0, 12)}…, not the commitment` };
  const n = await spinNumber(seed, table, spin);
  if (number !== null && n !== number) return { ok: false, why: `the seed gives ${n}, not ${number}` };
  return { ok: true, why: number === null ? `refunded; the seed matches its commitment` : `the seed gives ${n}` };
}
