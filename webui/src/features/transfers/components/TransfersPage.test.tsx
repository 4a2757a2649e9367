import { screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { aJob, FakeEventSource } from "../testing";
import { TransfersPage } from "./TransfersPage";

beforeEach(() => {
  FakeEventSource.made = [];
  vi.stubGlobal("EventSource", FakeEventSource);
});
afterEach(() => vi.unstubAllGlobals());

describe("TransfersPage", () => {
  it("lists the newest jobs and opens one", async () => {
    server.use(
      handle("transfers", () =>
        HttpResponse.json({ jobs: [aJob({ id: 8, state: "done", bytes_done: 59014, destination: "b" }), aJob()] }),
      ),
    );
    const onOpenJob = vi.fn();
    const { user } = renderWithClient(<TransfersPage job={null} onOpenJob={onOpenJob} />);
    expect(screen.getByText("Loading transfer jobs…")).toBeInTheDocument();
    const table = await screen.findByRole("table", { name: "Transfer jobs" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((r) => within(r).getAllByRole("cell").slice(0, 6).map((c) => c.textContent))).toEqual([
      ["Job 8", "done", "b", "1 of 2", "57.6 KiB of 57.6 KiB", "auto"],
      ["Job 7", "running", "cmip5/fgco2", "1 of 2", "28.8 KiB of 57.6 KiB", "auto"],
    ]);
    await user.click(within(table).getByRole("button", { name: "Job 7" }));
    expect(onOpenJob).toHaveBeenCalledWith(7);
  });

  it("says when there is no job yet, and when the catalog cannot be asked", async () => {
    server.use(handle("transfers", () => HttpResponse.json({ jobs: [] })));
    const { unmount } = renderWithClient(<TransfersPage job={null} onOpenJob={() => {}} />);
    expect(await screen.findByText("No transfer jobs yet")).toBeInTheDocument();
    unmount();
    server.use(handle("transfers", () => HttpResponse.json({ detail: "database down" }, { status: 503 })));
    renderWithClient(<TransfersPage job={null} onOpenJob={() => {}} />);
    expect(await screen.findByRole("alert")).toHaveTextContent("Listing the transfers failed");
  });

  it("shows one job's view, with the way back to the list", async () => {
    const onOpenJob = vi.fn();
    const { user } = renderWithClient(<TransfersPage job={7} onOpenJob={onOpenJob} />);
    expect(await screen.findByRole("heading", { name: "Transfer job 7" })).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "All transfers" }));
    expect(onOpenJob).toHaveBeenCalledWith(null);
  });
});
