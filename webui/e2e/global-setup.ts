// Before the end-to-end tests: a catalog from scratch (temp SQLite database, the sample CMIP5
// archive published into it, served on a free loopback port with the built portal at /).
// The returned function stops it and removes the folder. It runs no forwarder, producer or
// transfer agent: the specs that need them start their own (transfers.spec.ts: `ndnsci up`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publishSample, startCatalog } from "./harness";

export default async function globalSetup() {
  const dir = mkdtempSync(join(tmpdir(), "ndnsci-webui-e2e-"));
  const db = `sqlite:///${join(dir, "catalog.db")}`;
  await publishSample(db);
  const catalog = await startCatalog(db);
  process.env.NDNSCI_E2E_URL = catalog.url;
  process.env.NDNSCI_E2E_DB = db;
  process.env.NDNSCI_E2E_DIR = dir;
  return async () => {
    await catalog.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
