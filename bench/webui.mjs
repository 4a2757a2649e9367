// Web portal budgets: initial JavaScript size, and time to the first search results on screen.
//
//   node bench/webui.mjs [--runs 7]        (after `npm --prefix webui run build`)
//
// Size: the gzipped JavaScript that index.html loads before anything else (its module script
// and modulepreloads), next to the budget of 250 KB; lazy chunks (NDNts) are listed apart.
// Time: a real catalog (`ndnsci catalog serve`, temp SQLite, tests/data/netcdf/cmip5) serves
// the built portal; headless Chromium (the system one) loads `/` in a fresh profile and a
// requestAnimationFrame probe records when the first row of the Results table exists, measured
// from navigation start (performance.now()). Cold = empty browser cache, warm = reload. Budget:
// 1000 ms. Prints one figure per line: `webui <figure>: <value> <unit>`.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(REPO, "catalog/ndnsci_catalog/portal");
const NDNSCI = process.env.NDNSCI_BIN ?? join(REPO, ".venv/bin/ndnsci");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const runs = Number(process.argv[process.argv.indexOf("--runs") + 1]) || 7;
const { chromium } = createRequire(join(REPO, "webui/package.json"))("playwright-core");

const kb = (bytes) => (bytes / 1000).toFixed(1);
const gz = (file) => gzipSync(readFileSync(join(DIST, file)), { level: 9 }).length;

function sizes() {
  const html = readFileSync(join(DIST, "index.html"), "utf8");
  const initial = [...html.matchAll(/(?:src|href)="\/?(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const all = readdirSync(join(DIST, "assets")).filter((f) => f.endsWith(".js")).map((f) => `assets/${f}`);
  const initialGz = initial.reduce((sum, f) => sum + gz(f), 0);
  console.log(`webui initial js gzip: ${kb(initialGz)} KB (budget 250 KB, ${initial.length} file(s))`);
  for (const f of all.filter((f) => !initial.includes(f))) {
    console.log(`webui lazy chunk ${f.replace(/^assets\/|-[\w-]{8}\.js$/g, "")} gzip: ${kb(gz(f))} KB`);
  }
  const css = readdirSync(join(DIST, "assets")).filter((f) => f.endsWith(".css"));
  console.log(`webui css gzip: ${kb(css.reduce((s, f) => s + gz(`assets/${f}`), 0))} KB`);
  return initialGz;
}

function freePort() {
  return new Promise((done) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

async function waitHealthy(url, proc) {
  for (let i = 0; i < 300; i += 1) {
    if (proc.exitCode !== null) throw new Error("the catalog exited");
    try {
      if ((await fetch(`${url}/api/v1/health`)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the catalog did not start");
}

const PROBE = () => {
  const check = () => {
    if (document.querySelector('table[aria-label="Results"] tbody tr')) window.__firstResults = performance.now();
    else requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
};

async function firstResults(browser, url, reloads) {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  await context.addInitScript(PROBE);
  const page = await context.newPage();
  const times = [];
  for (let i = 0; i <= reloads; i += 1) {
    if (i === 0) await page.goto(url);
    else await page.reload();
    await page.waitForFunction(() => window.__firstResults !== undefined, null, { timeout: 20_000 });
    times.push(await page.evaluate(() => window.__firstResults));
  }
  await context.close();
  return times;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main() {
  const initialGz = sizes();
  const dir = mkdtempSync(join(tmpdir(), "ndnsci-bench-webui-"));
  const db = `sqlite:///${join(dir, "catalog.db")}`;
  try {
    execFileSync(NDNSCI, ["publish", join(REPO, "tests/data/netcdf/cmip5"), "--db", db], { stdio: "ignore" });
  } catch (error) {
    if (error.status !== 1) throw error; // 1: the sample's one unnameable file
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const catalog = spawn(NDNSCI, ["catalog", "serve", "--db", db, "--port", String(port)], {
    env: { ...process.env, NDNSCI_WEBUI_DIR: DIST },
    stdio: "ignore",
  });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  try {
    await waitHealthy(url.slice(0, -1), catalog);
    await firstResults(browser, url, 0); // warm up the server (imports, facet index)
    const cold = [];
    const warm = [];
    for (let i = 0; i < runs; i += 1) {
      const [first, ...again] = await firstResults(browser, url, 1);
      cold.push(first);
      warm.push(...again);
    }
    const fmt = (xs) => `${median(xs).toFixed(0)} ms (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, ${xs.length} runs)`;
    console.log(`webui first results cold: ${fmt(cold)} (budget 1000 ms)`);
    console.log(`webui first results warm: ${fmt(warm)}`);
    const ok = initialGz <= 250_000 && median(cold) <= 1000;
    console.log(`webui budgets: ${ok ? "met" : "EXCEEDED"}`);
  } finally {
    await browser.close();
    catalog.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
