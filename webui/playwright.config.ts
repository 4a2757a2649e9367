// End-to-end tests: the system Chromium (Debian's package, deploy/browser/install.sh; no
// browser download) against a real catalog started by e2e/global-setup.ts.
import { defineConfig } from "@playwright/test";

const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";

export default defineConfig({
  testDir: "e2e",
  globalSetup: "./e2e/global-setup.ts",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    acceptDownloads: true,
    launchOptions: {
      executablePath: chromium,
      // Playwright also gives every launch a fresh temporary --user-data-dir
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
