// Real processes for the end-to-end tests: the catalog (`ndnsci catalog serve`, serving the
// built portal at /), the NDN forwarder and producer. Everything runs on loopback, on free
// ports, in temp folders, and is stopped by the process id this harness started.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const WEBUI = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = resolve(WEBUI, "..");
export const SAMPLE = join(REPO, "tests/data/netcdf/cmip5");
export const DIST = join(WEBUI, "..", "catalog", "ndnsci_catalog", "portal");
export const SCREENSHOTS = join(REPO, "docs/screenshots");

/** The `ndnsci` command: $NDNSCI_BIN, else the repository's virtualenv. */
export function ndnsciBin(): string {
  const bin = process.env.NDNSCI_BIN ?? join(REPO, ".venv/bin/ndnsci");
  if (!existsSync(bin)) throw new Error(`no ndnsci at ${bin}: run \`make setup\` (or set NDNSCI_BIN)`);
  return bin;
}

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.on("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

const run = promisify(execFile);

export async function ndnsci(args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(ndnsciBin(), args, { env: { ...process.env, ...env }, maxBuffer: 16 << 20 }).catch((error) => {
    // ndnsci publish exits 1 when some files were quarantined (the sample has one on purpose)
    if (args[0] === "publish" && error.code === 1) return { stdout: error.stdout as string, stderr: error.stderr as string };
    throw new Error(`ndnsci ${args.join(" ")} failed (${error.code}):\n${error.stderr ?? error.message}`);
  });
}

export async function publishSample(dbUrl: string): Promise<void> {
  const { stderr, stdout } = await ndnsci(["publish", SAMPLE, "--db", dbUrl]);
  if (!/\b\d+ published\b/.test(`${stdout}\n${stderr}`)) throw new Error(`publish printed no summary:\n${stderr}`);
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, proc?: Server): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc && proc.exited) throw new Error(`${what}: the process exited (${proc.exitCode}):\n${proc.log()}`);
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: not ready after ${timeoutMs} ms${proc ? `:\n${proc.log()}` : ""}`);
}

/** A child process we started, its output kept for error messages. */
export class Server {
  readonly proc: ChildProcess;
  private output = "";
  exited = false;
  exitCode: number | null = null;

  constructor(command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString()).slice(-20_000);
    };
    this.proc.stdout?.on("data", keep);
    this.proc.stderr?.on("data", keep);
    this.proc.on("exit", (code) => {
      this.exited = true;
      this.exitCode = code;
    });
  }

  log(): string {
    return this.output;
  }

  waitForOutput(pattern: RegExp, timeoutMs: number, what: string): Promise<void> {
    return waitUntil(what, async () => pattern.test(this.output), timeoutMs, this);
  }

  async stop(): Promise<void> {
    if (this.exited || this.proc.pid === undefined) return;
    const gone = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGTERM");
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 5000);
    await gone;
    clearTimeout(timer);
  }
}

export interface Catalog {
  url: string;
  server: Server;
  stop: () => Promise<void>;
}

/** `ndnsci catalog serve` on a free loopback port, serving the portal build at /. */
export async function startCatalog(dbUrl: string): Promise<Catalog> {
  if (!existsSync(join(DIST, "index.html"))) throw new Error("the portal is not built: run `npm run build` first");
  const port = await freePort();
  const server = new Server(ndnsciBin(), ["catalog", "serve", "--db", dbUrl, "--host", "127.0.0.1", "--port", String(port)], {
    NDNSCI_WEBUI_DIR: DIST,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil("catalog", async () => (await fetch(`${url}/api/v1/health`)).ok, 30_000, server);
  return { url, server, stop: () => server.stop() };
}

export function sha256File(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** Every file under `dir`, by the SHA-256 of its content. */
export function filesBySha256(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const path = join(d, entry);
      if (statSync(path).isDirectory()) walk(path);
      else found.set(sha256File(path), path);
    }
  };
  walk(dir);
  return found;
}
