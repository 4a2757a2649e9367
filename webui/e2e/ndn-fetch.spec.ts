// In-browser download over NDN: the portal's NDNts consumer, through a real NDNd forwarder's
// WebSocket face, from a real `ndnsci serve` producer serving the sample archive under the
// catalog's names. Needs `ndnsci forwarder` and `ndnsci serve` (ndnsci/ndn); when they are not
// installed the test is skipped and says so loudly: the NDN download was then NOT tested
// (NDNSCI_REQUIRE_NDN=1 makes that a failure instead).
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { expect, screenshot, test } from "./fixtures";
import { filesBySha256, freePort, ndnsci, ndnsciBin, SAMPLE, Server, sha256File } from "./harness";

const run = promisify(execFile);

async function missingNdnCommands(): Promise<string | null> {
  for (const command of ["forwarder", "serve"]) {
    try {
      await run(ndnsciBin(), [command, "--help"]);
    } catch {
      return `\`ndnsci ${command}\` is not available in ${ndnsciBin()}`;
    }
  }
  return null;
}

interface Ndn {
  dir: string;
  wsUrl: string;
  env: NodeJS.ProcessEnv;
  socket: string;
  producer: Server;
}

let ndn: Ndn | undefined;

test.describe("fetch over NDN in the browser", () => {
  test.beforeAll(async ({}, testInfo) => {
    const missing = await missingNdnCommands();
    if (missing) {
      const message = `NDN download e2e NOT RUN: ${missing} (the NDN data plane is not installed yet)`;
      if (process.env.NDNSCI_REQUIRE_NDN === "1") throw new Error(message);
      console.warn(`\n*** ${message} ***\n`);
      testInfo.annotations.push({ type: "not run", description: message });
      test.skip(true, message);
      return;
    }
    testInfo.setTimeout(600_000); // the first run builds NDNd (deploy/forwarder/build.sh)
    const catalog = process.env.NDNSCI_E2E_URL!;
    // short: AF_UNIX socket paths are limited to ~100 bytes
    const dir = mkdtempSync("/tmp/ndnsci-w-");
    const socket = join(dir, "fw", "nfd.sock");
    const wsPort = await freePort();
    const env = {
      NDNSCI_FW_WS_PORT: String(wsPort),
      NDNSCI_FW_UDP_PORT: String(await freePort()),
      NDN_CLIENT_TRANSPORT: `unix://${socket}`,
      NDNSCI_CONFIG_DIR: join(dir, "config"),
      NDNSCI_CACHE_DIR: join(dir, "cache"),
    };
    await ndnsci(["forwarder", "start", "--socket", socket], env);

    // the producer serves a tree laid out by the catalog's names (ROOT/CMIP5/... = /CMIP5/...)
    const bySha = filesBySha256(SAMPLE);
    const found = (await (await fetch(`${catalog}/api/v1/search?limit=1000&facets=`)).json()) as {
      results: { name: string; sha256: string }[];
    };
    for (const file of found.results) {
      const source = bySha.get(file.sha256);
      if (!source) continue;
      const target = join(dir, "root", ...file.name.split("/").filter(Boolean));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(source, target);
    }
    await ndnsci(["keys", "create"], env);
    const producer = new Server(ndnsciBin(), ["serve", join(dir, "root", "CMIP5"), "--prefix", "/CMIP5", "-v"], env);
    await producer.waitForOutput(/serving .* on /, 30_000, "ndnsci serve");
    ndn = { dir, wsUrl: `ws://127.0.0.1:${wsPort}`, env, socket, producer };
  });

  test.afterAll(async () => {
    if (!ndn) return;
    await ndn.producer.stop();
    await ndnsci(["forwarder", "stop", "--socket", ndn.socket], ndn.env).catch(() => {});
    rmSync(ndn.dir, { recursive: true, force: true });
    ndn = undefined;
  });

  test("a cart of two files is fetched, verified against the catalog and saved", async ({ page }) => {
    const { wsUrl } = ndn!;
    await page.addInitScript((url) => window.localStorage.setItem("ndnsci.forwarder", url), wsUrl);
    await page.goto("/?model=HadGEM2-ES");
    const row = page.getByRole("table", { name: "Results", exact: true }).locator("tbody tr");
    await expect(row).toHaveCount(1);
    await row.getByRole("checkbox").check();
    await page.goto("/?model=CanESM2");
    await row.getByRole("checkbox").check();
    await expect(page.getByRole("button", { name: "Forwarder reachable", exact: true })).toBeVisible({ timeout: 20_000 });

    await page.getByRole("button", { name: "Cart, 2 files", exact: true }).click();
    const cart = page.getByRole("region", { name: "Cart", exact: true });
    const downloads: Promise<import("@playwright/test").Download>[] = [];
    page.on("download", (d) => downloads.push(Promise.resolve(d)));
    await cart.getByRole("button", { name: "Fetch over NDN", exact: true }).click();
    const statuses = cart.locator(".dl-status");
    await expect(statuses).toHaveText([/^verified: SHA-256 matches the catalog/, /^verified: SHA-256 matches the catalog/], {
      timeout: 60_000,
    });
    await screenshot(page, "ndn-fetch");

    await expect.poll(() => downloads.length).toBeGreaterThanOrEqual(1);
    const first = await downloads[0]!;
    const saved = (await first.path())!;
    const source = [...filesBySha256(SAMPLE).values()].find((p) => p.endsWith(first.suggestedFilename()))!;
    expect(sha256File(saved)).toBe(sha256File(source));
    expect(readFileSync(saved).length).toBeGreaterThan(10_000);
  });

  test("a name no producer serves fails with a reason", async ({ page }) => {
    const { wsUrl } = ndn!;
    await page.addInitScript(
      ([url, item]) => {
        window.localStorage.setItem("ndnsci.forwarder", url);
        window.localStorage.setItem("ndnsci.cart.v1", JSON.stringify([item]));
      },
      [wsUrl, { name: "/CMIP5/output1/NOPE/missing.nc", fileName: "missing.nc", size: 10, sha256: null }] as const,
    );
    await page.goto("/");
    await page.getByRole("button", { name: "Cart, 1 file", exact: true }).click();
    await page.getByRole("button", { name: "Fetch over NDN", exact: true }).click();
    await expect(page.getByRole("region", { name: "Cart", exact: true }).locator(".dl-status")).toHaveText(/^failed: .*(refused|no producer answered)/, {
      timeout: 20_000,
    });
  });
});
