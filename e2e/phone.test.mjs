// The phone page in a real browser (docs/phone.md): Debian's Chromium through chromedriver, in a phone-sized
// viewport, trusting the data directory's certificate authority through an NSS database as a phone that
// installed it does. `codemode serve` serves the page; the CLI plays the computer (pairing, an agent's runs,
// revoking). Run by scripts/e2e after the window's suite.
//
//   node phone.test.mjs        (needs: chromium, chromedriver, certutil; E2E_OUT for screenshots and figures)

import { remote } from "webdriverio";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { scenarios } from "./scenarios.mjs";

const ROOT = resolve(import.meta.dirname, "..");
const BIN = join(ROOT, "target", process.env.E2E_PROFILE || "debug");
const OUT = process.env.E2E_OUT || join(ROOT, "target", "e2e");
const PORT = 18443 + (process.pid % 1000);
const ORIGIN = `https://127.0.0.1:${PORT}`;
mkdirSync(OUT, { recursive: true });

const work = mkdtempSync(join(tmpdir(), "codemode-phone-e2e-"));
const home = join(work, "data");
const figures = {};
const children = [];

function cli(...args) {
  return JSON.parse(execFileSync(join(BIN, "codemode"), ["--home", home, "--json", ...args], { encoding: "utf8" }));
}
function program(name, code) {
  const path = join(work, name);
  writeFileSync(path, code);
  return path;
}
function assert(condition, message) {
  if (!condition) throw new Error(message);
}
const { test, finish } = scenarios((slug) => browser.saveScreenshot(join(OUT, `phone-failed-${slug}.png`)));
function started(child, pattern, what) {
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${seen}`)), 20000);
    const look = (chunk) => {
      seen += chunk;
      if (pattern.test(seen)) { clearTimeout(timer); resolve(seen); }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.on("exit", (code) => reject(new Error(`${what} exited (${code}): ${seen}`)));
  });
}

// The page, served from a fresh data directory.
mkdirSync(home, { recursive: true });
const server = spawn(join(BIN, "codemode"), ["--home", home, "serve", "--listen", `127.0.0.1:${PORT}`], { stdio: ["ignore", "pipe", "pipe"] });
children.push(server);
await started(server, /phone page is at/, "codemode serve");

// The phone trusts the authority, as one that installed phone/ca.pem does: Chromium reads ~/.pki/nssdb.
const browserHome = join(work, "browser-home");
const nssdb = join(browserHome, ".pki", "nssdb");
mkdirSync(nssdb, { recursive: true });
execFileSync("certutil", ["-d", `sql:${nssdb}`, "-N", "--empty-password"]);
execFileSync("certutil", ["-d", `sql:${nssdb}`, "-A", "-t", "C,,", "-n", "codemode-phone-test", "-i", join(home, "phone", "ca.pem")]);

const DRIVER_PORT = 9515 + (process.pid % 1000);
const driver = spawn("chromedriver", [`--port=${DRIVER_PORT}`], { env: { ...process.env, HOME: browserHome }, stdio: ["ignore", "pipe", "pipe"] });
children.push(driver);
await started(driver, /started successfully/, "chromedriver");

const browser = await remote({
  hostname: "127.0.0.1",
  port: DRIVER_PORT,
  logLevel: "warn",
  capabilities: {
    browserName: "chrome",
    "goog:chromeOptions": {
      binary: "/usr/bin/chromium",
      // Root in CI: Chromium's sandbox needs an unprivileged user. Certificates are checked as usual.
      args: ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=412,915"],
      mobileEmulation: {
        deviceMetrics: { width: 412, height: 915, pixelRatio: 2 },
        userAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36",
      },
    },
  },
});

const inPage = (fn, ...args) => browser.execute(fn, ...args);
const text = (selector) => inPage((s) => document.querySelector(s)?.innerText ?? null, selector);
async function waitFor(probe, message, timeout = 15000) {
  await browser.waitUntil(probe, { timeout, interval: 100, timeoutMsg: message });
}
async function tap(selector) {
  await waitFor(() => inPage((s) => { const el = document.querySelector(s); if (!el || el.disabled) return false; el.click(); return true; }, selector), `${selector} never became tappable`);
}

let pairing;
await test("the pairing link shows the authority's fingerprint, and pairing opens the queue", async () => {
  pairing = cli("devices", "pair", "Test phone");
  assert(pairing.link.startsWith(`${ORIGIN}/pair?code=`), `link: ${pairing.link}`);
  await browser.url(pairing.link);
  assert((await text("#fingerprint")).trim() === pairing.fingerprint, "the page shows the fingerprint the computer printed");
  await tap("#pair");
  await waitFor(async () => (await text("#queue-empty")) !== null, "the empty queue after pairing");
  assert((await text("#device")) === "Test phone", "the header names the device");
  const cookies = await browser.getCookies();
  const device = cookies.find((c) => c.name === "codemode_device");
  assert(device && device.httpOnly && device.secure && device.sameSite === "Strict", `cookie: ${JSON.stringify(device)}`);
  // What loading the page costs a phone: the figures the issue asks for.
  await browser.url(`${ORIGIN}/`);
  await waitFor(async () => (await text("#queue-empty")) !== null, "the queue after a reload");
  const load = await inPage(() => {
    const nav = performance.getEntriesByType("navigation")[0];
    const resources = performance.getEntriesByType("resource");
    const bytes = [nav, ...resources].reduce((sum, e) => sum + (e.encodedBodySize || 0), 0);
    return { ms: Math.round(nav.loadEventEnd - nav.startTime), bytes, requests: 1 + resources.length };
  });
  figures.pageLoadMs = load.ms;
  figures.pageBytes = load.bytes;
  figures.pageRequests = load.requests;
  console.log(`     the page loads in ${load.ms} ms: ${load.requests} requests, ${(load.bytes / 1024).toFixed(1)} KiB`);
});

let first;
await test("a call that starts waiting appears without a reload, and its card shows the whole call", async () => {
  await inPage(() => { window.__sameDocument = true; });
  first = cli("run", program("first.js", 'async () => files.write_file({ path: "notes/todo.txt", content: "buy\\u200bmilk" })'));
  assert(first.status === "paused", `run: ${first.status}`);
  await waitFor(async () => (await text("#queue")) !== null && (await text("#queue")).includes("files.write_file"), "the waiting call appears");
  assert(await inPage(() => window.__sameDocument === true), "the page was not reloaded");
  await tap(`.queue-row[data-run="${first.executionId}"]`);
  await waitFor(async () => (await text("#card-title")) === "files.write_file", "the card opens");
  const args = await text("#arguments");
  assert(args.includes("notes/todo.txt"), `arguments: ${args}`);
  assert(args.includes("\\u{200b}"), `the invisible character is marked: ${args}`);
  const programText = await text("#program");
  assert(programText.includes("files.write_file"), `program: ${programText}`);
  assert((await text("#source")).includes("cli"), "the source is shown");
  await browser.saveScreenshot(join(OUT, "phone-card.png"));
});

await test("Approve runs the call once, recorded as the device's decision", async () => {
  await tap("#approve");
  await waitFor(async () => (await text("#queue-empty")) !== null, "back to the empty queue");
  const run = cli("show", first.executionId);
  assert(run.status === "completed", `status: ${run.status}`);
  assert(run.log[0].decision.by === "device" && run.log[0].decision.device === "Test phone", `decision: ${JSON.stringify(run.log[0].decision)}`);
});

await test("Reject with a preset reason: the agent reads it", async () => {
  const second = cli("run", program("second.js", 'async () => files.write_file({ path: "notes/other.txt", content: "no" })'));
  await waitFor(async () => ((await text("#queue")) || "").includes("notes/other.txt"), "the second call appears");
  await tap(`.queue-row[data-run="${second.executionId}"]`);
  await tap("#reject");
  const preset = await inPage(() => { const b = document.querySelector("#reason-box .presets button"); b.click(); return b.innerText; });
  await tap("#reject-confirm");
  await waitFor(async () => (await text("#queue-empty")) !== null, "back to the empty queue");
  const run = cli("show", second.executionId);
  assert(run.status === "rejected", `status: ${run.status}`);
  assert(run.error === `Action files.write_file rejected by user: ${preset}`, `error: ${run.error}`);
});

await test("a card decided elsewhere says so instead of deciding again", async () => {
  const third = cli("run", program("third.js", 'async () => files.write_file({ path: "notes/third.txt", content: "3" })'));
  await waitFor(async () => ((await text("#queue")) || "").includes("notes/third.txt"), "the third call appears");
  await tap(`.queue-row[data-run="${third.executionId}"]`);
  await waitFor(async () => (await text("#card-title")) === "files.write_file", "the card opens");
  cli("approve", third.executionId);
  await waitFor(async () => (await text("#card-gone")) !== null, "the card says the call no longer waits");
  await browser.saveScreenshot(join(OUT, "phone-card-gone.png"));
});

await test("revoking the phone on the computer leaves the page saying it is not paired", async () => {
  await browser.url(`${ORIGIN}/`);
  await waitFor(async () => (await text("#queue-empty")) !== null, "the queue");
  cli("devices", "revoke", "Test phone");
  await waitFor(async () => ((await text("#message")) || "").includes("not paired"), "the page says it is not paired", 30000);
  await browser.url(`${ORIGIN}/`);
  const page = await text("body");
  assert(page.includes("not paired") && !page.includes("notes/"), `after revoking: ${page}`);
});

await browser.deleteSession().catch(() => {});
for (const child of children) child.kill();
writeFileSync(join(OUT, "phone-figures.json"), JSON.stringify(figures, null, 2) + "\n");
finish();
