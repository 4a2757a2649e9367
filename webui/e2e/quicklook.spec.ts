// The metadata panel's quick look: a map and a global-mean time series drawn by the catalog's
// gateway (GET /api/v1/quicklook/<NDN name>), which fetches the file over NDN from a real
// `ndnsci serve` through a real NDNd. Its own catalog (the global one has no forwarder): one
// sample CMIP5 file given a second variable (e2e/quicklook_file.py), so there is a variable to
// switch to. Skipped, loudly, without the NDN commands (NDNSCI_REQUIRE_NDN=1: a failure).
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { Page } from "@playwright/test";
import { expect, screenshot, test } from "./fixtures";
import { DIST, freePort, ndnsci, ndnsciBin, REPO, SAMPLE, Server } from "./harness";

const run = promisify(execFile);
const SOURCE = "output1/CMCC/CMCC-CMS/rcp85/mon/atmos/Amon/r1i1p1/v20170725/tasmax/tasmax_Amon_CMCC-CMS_rcp85_r1i1p1_209001-210012.nc";

interface Site {
  dir: string;
  url: string;
  env: NodeJS.ProcessEnv;
  socket: string;
  producer: Server;
  catalog: Server;
}

let site: Site | undefined;

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not ready after ${ms} ms`);
}

async function imageShown(page: Page, alt: RegExp) {
  const image = page.getByAltText(alt);
  await expect(image).toBeVisible({ timeout: 30_000 });
  // decoded, not a broken image
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBeGreaterThan(100);
  return image;
}

test.describe("quick look in the metadata panel", () => {
  test.beforeAll(async ({}, testInfo) => {
    try {
      for (const command of ["forwarder", "serve"]) await run(ndnsciBin(), [command, "--help"]);
    } catch {
      const message = "quick look e2e NOT RUN: `ndnsci forwarder` / `ndnsci serve` are not available";
      if (process.env.NDNSCI_REQUIRE_NDN === "1") throw new Error(message);
      console.warn(`\n*** ${message} ***\n`);
      test.skip(true, message);
      return;
    }
    testInfo.setTimeout(600_000); // the first run builds NDNd (deploy/forwarder/build.sh)
    const dir = mkdtempSync("/tmp/ndnsci-q-"); // short: AF_UNIX socket paths are limited
    const archive = join(dir, "archive", SOURCE);
    mkdirSync(dirname(archive), { recursive: true });
    await run(join(REPO, ".venv/bin/python"), [join(REPO, "webui/e2e/quicklook_file.py"), join(SAMPLE, SOURCE), archive]);
    const db = `sqlite:///${join(dir, "catalog.db")}`;
    await ndnsci(["publish", join(dir, "archive"), "--db", db]);

    const socket = join(dir, "fw", "nfd.sock");
    const env = {
      NDNSCI_FW_WS_PORT: String(await freePort()),
      NDNSCI_FW_UDP_PORT: String(await freePort()),
      NDN_CLIENT_TRANSPORT: `unix://${socket}`,
      NDNSCI_CONFIG_DIR: join(dir, "config"),
      NDNSCI_CACHE_DIR: join(dir, "cache"),
    };
    await ndnsci(["forwarder", "start", "--socket", socket], env);
    await ndnsci(["keys", "create"], env);
    // the producer serves the file under its catalog name
    const served = join(dir, "root", "CMIP5", SOURCE);
    mkdirSync(dirname(served), { recursive: true });
    copyFileSync(archive, served);
    const producer = new Server(ndnsciBin(), ["serve", join(dir, "root", "CMIP5"), "--prefix", "/CMIP5"], env);
    await producer.waitForOutput(/serving .* on /, 30_000, "ndnsci serve");
    const port = await freePort();
    const catalog = new Server(ndnsciBin(), ["catalog", "serve", "--db", db, "--host", "127.0.0.1", "--port", String(port)], {
      ...env,
      NDNSCI_WEBUI_DIR: DIST,
    });
    const url = `http://127.0.0.1:${port}`;
    await until("catalog", async () => (await fetch(`${url}/api/v1/health`)).ok, 30_000);
    site = { dir, url, env, socket, producer, catalog };
  });

  test.afterAll(async () => {
    if (!site) return;
    await site.catalog.stop();
    await site.producer.stop();
    await ndnsci(["forwarder", "stop", "--socket", site.socket], site.env).catch(() => {});
    rmSync(site.dir, { recursive: true, force: true });
    site = undefined;
  });

  test("the map and the time series of the first variable, then of another", async ({ page }) => {
    const { url } = site!;
    await page.goto(`${url}/`);
    const row = page.getByRole("table", { name: "Results", exact: true }).locator("tbody tr");
    await expect(row).toHaveCount(1);
    await row.click();
    const panel = page.getByRole("region", { name: "Metadata", exact: true });
    await expect(panel.getByRole("heading", { name: "Quick look", exact: true })).toBeVisible();

    // the first data variable: tasmax, at its first time step
    const variable = panel.getByRole("combobox", { name: "Variable", exact: true });
    await expect(variable).toHaveValue("tasmax");
    await imageShown(page, /^Map of Daily Maximum Near-Surface Air Temperature \(tasmax\) in K at 2090-01-16/);
    await imageShown(page, /^Time series of the area-weighted global mean of .*\(tasmax\) in K/);
    await screenshot(page, "quicklook");

    // another time step: the map's description follows
    const time = panel.getByRole("slider", { name: "Time step", exact: true });
    await time.focus();
    await page.keyboard.press("ArrowRight");
    await imageShown(page, /^Map of .*\(tasmax\) in K at 2090-02-/);

    // switch variables: map and time series are the other variable's
    await variable.selectOption("tasmin");
    await imageShown(page, /^Map of Daily Minimum Near-Surface Air Temperature \(tasmin\) in K at 2090-01-16/);
    await imageShown(page, /^Time series of the area-weighted global mean of .*\(tasmin\)/);
    await expect(panel.getByRole("alert")).toHaveCount(0);

    // the gateway's answers themselves: a PNG, and a clear refusal for an unknown variable
    const name = `/CMIP5/${SOURCE}`;
    const base = `${url}/api/v1/quicklook${name}`;
    const png = await fetch(`${base}?variable=tasmin`);
    expect(png.headers.get("content-type")).toBe("image/png");
    const refused = await fetch(`${base}?variable=nope`);
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { detail: string }).detail).toContain("tasmax");
  });
});
