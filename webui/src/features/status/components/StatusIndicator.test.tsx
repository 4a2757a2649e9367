import { screen } from "@testing-library/react";
import { HttpResponse } from "msw";
import { afterEach, describe, expect, it, vi } from "vitest";
import { handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { StatusIndicator } from "./StatusIndicator";

class FakeSocket {
  static opens = true;
  static urls: string[] = [];
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onclose: (() => void) | null = null;
  constructor(url: string) {
    FakeSocket.urls.push(url);
    setTimeout(() => (FakeSocket.opens ? this.onopen?.() : this.onerror?.()), 5);
  }
  close() {}
}

afterEach(() => vi.unstubAllGlobals());

describe("StatusIndicator", () => {
  it("shows a reachable catalog with its size and a reachable forwarder", async () => {
    FakeSocket.opens = true;
    vi.stubGlobal("WebSocket", FakeSocket);
    renderWithClient(<StatusIndicator />);
    expect(await screen.findByText("Catalog reachable · 32 files")).toBeInTheDocument();
    expect(await screen.findByText("Forwarder reachable")).toBeInTheDocument();
    expect(FakeSocket.urls.at(-1)).toBe("ws://127.0.0.1:9696");
  });

  it("shows what is down", async () => {
    FakeSocket.opens = false;
    vi.stubGlobal("WebSocket", FakeSocket);
    server.use(handle("health", () => HttpResponse.error()));
    renderWithClient(<StatusIndicator />);
    expect(await screen.findByText("Catalog unreachable")).toBeInTheDocument();
    expect(await screen.findByText("Forwarder unreachable")).toBeInTheDocument();
  });

  it("probes the forwarder address the user set", async () => {
    FakeSocket.opens = true;
    vi.stubGlobal("WebSocket", FakeSocket);
    window.localStorage.setItem("ndnsci.forwarder", "ws://127.0.0.1:19696");
    renderWithClient(<StatusIndicator />);
    await screen.findByText("Forwarder reachable");
    expect(FakeSocket.urls.at(-1)).toBe("ws://127.0.0.1:19696");
  });
});
