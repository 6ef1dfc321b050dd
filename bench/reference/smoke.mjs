// Smoke test + rough timings for the reference Code Mode host (bench/reference/serve.sh).
//   node smoke.mjs http://127.0.0.1:PORT [--reps 5]
// Needs Node >= 18 (global fetch); no dependencies. Exits non-zero on an unexpected status.

const args = process.argv.slice(2);
const base = (args.find((a) => !a.startsWith("--")) ?? "http://127.0.0.1:8799").replace(/\/$/, "");
const repsIdx = args.indexOf("--reps");
const REPS = repsIdx >= 0 ? Number(args[repsIdx + 1]) : 5;
const N = 100;
const K = 100;
const tag = `smoke-${process.pid}-${Date.now()}`;
let roomSeq = 0;
const freshRoom = () => `${tag}-${roomSeq++}`;

async function call(room, body) {
  const t0 = performance.now();
  const res = await fetch(`${base}/?room=${encodeURIComponent(room)}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`non-JSON answer (${res.status}): ${text.slice(0, 300)}`);
  }
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
  return { json, ms };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (x) => x.toFixed(1);

let failures = 0;
function expect(label, out, status) {
  if (out?.status !== status) {
    failures++;
    console.error(`FAIL ${label}: expected ${status}, got ${JSON.stringify(out).slice(0, 400)}`);
  }
}

// Time `once(room)` REPS times after one warm-up; `room` is shared unless perRep.
async function bench(label, once, { perRep = false } = {}) {
  let room = freshRoom();
  const first = await once(room); // warm-up (also the status we report)
  const times = [];
  for (let i = 0; i < REPS; i++) {
    if (perRep) room = freshRoom();
    times.push((await once(room)).ms);
  }
  console.log(
    `${label.padEnd(34)} status=${String(first.status).padEnd(10)} median=${fmt(median(times))} ms  ` +
      `(min ${fmt(Math.min(...times))}, max ${fmt(Math.max(...times))}, n=${REPS})`,
  );
  return first;
}

async function run(room, code, status, label) {
  const { json, ms } = await call(room, { op: "run", code });
  expect(label, json, status);
  return { ...json, ms, status: json.status };
}

const echoN = `async () => { let s = 0; for (let i = 0; i < ${N}; i++) { const r = await kb.echo({ i }); s += r.i; } return s; }`;
const pauseK = `async () => { for (let i = 0; i < ${K}; i++) await kb.echo({ i }); const t = await crm.create_ticket({ title: "t" }); return t; }`;
const steps = `async () => { let s = 0; for (let i = 0; i < 100; i++) s += await codemode.step("s" + i, () => i); return s; }`;

try {
  await call(freshRoom(), { op: "ping" });
} catch (e) {
  console.error(`cannot reach ${base}: ${e.message}`);
  process.exit(2);
}

await bench("ping (HTTP->DO no-op)", async (room) => {
  const { json, ms } = await call(room, { op: "ping" });
  if (json.ok !== true) {
    failures++;
    console.error(`FAIL ping: ${JSON.stringify(json)}`);
  }
  return { status: json.ok === true ? "ok" : "bad", ms };
});

await bench("run async () => 1", (room) => run(room, "async () => 1", "completed", "empty"));

await bench(`pass N=${N} kb.echo`, async (room) => {
  const out = await run(room, echoN, "completed", `N=${N}`);
  if (out.result !== (N * (N - 1)) / 2) {
    failures++;
    console.error(`FAIL N=${N}: result ${out.result}`);
  }
  return out;
});

// First pass: K reads then an approval-gated call -> paused. Resume: approve -> completed.
// Each rep uses a fresh room so the approve hits the room (DO) that ran it.
const paused = [];
await bench(`pause after K=${K} reads`, async (room) => {
  const out = await run(room, pauseK, "paused", `pause K=${K}`);
  paused.push({ room, executionId: out.executionId });
  return out;
}, { perRep: true });

let checkedEffects = false;
await bench(`approve->resume K=${K}`, async () => {
  const p = paused.shift();
  if (!p) throw new Error("no paused run left to approve");
  const { json, ms } = await call(p.room, { op: "approve", executionId: p.executionId });
  expect(`approve K=${K}`, json, "completed");
  if (!checkedEffects) {
    checkedEffects = true;
    const { json: fx } = await call(p.room, { op: "effects" });
    // Reads execute once (not re-run on replay), the ticket exactly once.
    if (fx.tickets?.length !== 1 || fx.echoExecs !== K || fx.ticketExecs !== 1) {
      failures++;
      console.error(`FAIL effects after approve: ${JSON.stringify(fx)}`);
    }
  }
  return { ...json, ms };
});

await bench("pass 100x codemode.step", (room) => run(room, steps, "completed", "steps"));

if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("smoke: all statuses as expected");
