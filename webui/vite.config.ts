/// <reference types="vitest/config" />
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

// `npm run dev` proxies the API and the HTTP gateway (/data) to a running catalog (`ndnsci catalog serve`, port 8000 by
// default; NDNSCI_CATALOG_URL picks another). The production build is served by the catalog.
const catalog = process.env.NDNSCI_CATALOG_URL ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react()],
  resolve: { alias: { "@": fileURLToPath(new URL("./src", import.meta.url)) } },
  server: { proxy: { "/api": catalog, "/data": catalog } },
  preview: { proxy: { "/api": catalog, "/data": catalog } },
  build: {
    // the catalog serves the build from its package (catalog/ndnsci_catalog/portal); its wheel
    // carries it
    outDir: "../catalog/ndnsci_catalog/portal",
    emptyOutDir: true,
    target: "es2022",
    // the size budget is checked by bench/webui.mjs; NDNts is a lazy chunk on purpose
    chunkSizeWarningLimit: 400,
  },
  test: {
    environment: "jsdom",
    environmentOptions: { jsdom: { url: "http://localhost:3000/" } },
    globals: true,
    setupFiles: ["./src/testing/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
    // the default 5 s fails tests that take 3 s on a quiet machine when the machine is shared
    testTimeout: 30_000,
  },
});
