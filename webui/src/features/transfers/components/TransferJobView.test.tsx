import { act, screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fixtures, handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { aJob, FakeEventSource } from "../testing";
import { TOKEN_KEY } from "../token";
import { TransferJobView } from "./TransferJobView";

beforeEach(() => {
  FakeEventSource.made = [];
  vi.stubGlobal("EventSource", FakeEventSource);
});
afterEach(() => {
  vi.unstubAllGlobals();
  window.sessionStorage.clear();
});

function view() {
  return renderWithClient(<TransferJobView id={7} onBack={() => {}} />);
}

describe("TransferJobView", () => {
  it("shows the job's bytes, rate, time left, engines and each file's state, bytes, attempts and engine", async () => {
    view();
    expect(screen.getByText("Loading job 7…")).toBeInTheDocument();
    expect(await screen.findByText("28.8 KiB of 57.6 KiB (50%)")).toBeInTheDocument();
    expect(screen.getByRole("progressbar", { name: "Job 7 bytes" })).toHaveAttribute("value", "29507");
    expect(screen.getByText("1 of 2 done (1 running)")).toBeInTheDocument();
    expect(screen.getByText("14.4 KiB/s")).toBeInTheDocument();
    expect(screen.getByText("2 s")).toBeInTheDocument();
    expect(screen.getByText("python: 1 file")).toBeInTheDocument();
    const files = await screen.findByRole("table", { name: "Files of job 7" });
    const rows = within(files).getAllByRole("row").slice(1);
    expect(rows.map((r) => within(r).getAllByRole("cell").map((c) => c.textContent))).toEqual([
      ["done", "28.8 KiB of 28.8 KiB", "1", "python", "—"],
      ["running", "0 B of 28.8 KiB", "2", "—", "—"],
    ]);
    expect(within(rows[0]!).getByRole("rowheader")).toHaveTextContent("fgco2_Omon_CanESM2_esmHistorical_r1i1p1_185001-200512.nc");
  });

  it("follows the job's server-sent events, and stops listening once it is done", async () => {
    let asked = 0;
    server.use(handle("transferFiles", () => (asked++, HttpResponse.json(fixtures.transferFiles))));
    view();
    await screen.findByText("28.8 KiB of 57.6 KiB (50%)");
    expect(FakeEventSource.made).toHaveLength(1);
    const source = FakeEventSource.made[0]!;
    expect(source.url).toBe("/api/v1/transfers/7/events");
    act(() => source.open());
    expect(screen.getByText("Live: updated as the agent reports")).toBeInTheDocument();
    act(() => source.job(aJob({ bytes_done: 44000, rate: 20000, eta: 0.75 })));
    expect(screen.getByText("43.0 KiB of 57.6 KiB (74%)")).toBeInTheDocument();
    expect(screen.getByText("19.5 KiB/s")).toBeInTheDocument();
    const before = asked;
    act(() =>
      source.job(
        aJob({ state: "done", bytes_done: 59014, eta: null, finished: 1796222225, engines: { python: 2 },
          counts: { pending: 0, running: 0, done: 2, failed: 0, cancelled: 0 } }), // prettier-ignore
      ),
    );
    expect(screen.getByText("Finished: no more updates")).toBeInTheDocument();
    expect(screen.getByText("2 of 2 done")).toBeInTheDocument();
    expect(screen.getByText("python: 2 files")).toBeInTheDocument();
    expect(source.readyState).toBe(FakeEventSource.CLOSED);
    await vi.waitFor(() => expect(asked).toBeGreaterThan(before)); // the files asked again
    expect(screen.getByRole("button", { name: "Cancel job" })).toBeDisabled();
  });

  it("says when the live updates break and when they come back", async () => {
    view();
    await screen.findByText("28.8 KiB of 57.6 KiB (50%)");
    const source = FakeEventSource.made[0]!;
    act(() => source.fail(false));
    expect(screen.getByText("Live updates lost: reconnecting…")).toBeInTheDocument();
    act(() => source.open());
    expect(screen.getByText("Live: updated as the agent reports")).toBeInTheDocument();
    act(() => source.fail(true));
    expect(screen.getByText("Live updates refused by the catalog: reload to try again")).toBeInTheDocument();
  });

  it("does not listen to a job that has ended", async () => {
    server.use(handle("transfer", () => HttpResponse.json(aJob({ state: "failed", eta: null }))));
    view();
    expect(await screen.findByText("Finished: no more updates")).toBeInTheDocument();
    expect(FakeEventSource.made).toHaveLength(0);
  });

  it("cancels and retries with the session's token, and listens again after a retry", async () => {
    window.sessionStorage.setItem(TOKEN_KEY, "ndnsci_t");
    const calls: string[] = [];
    server.use(
      handle("cancelTransfer", ({ request }) => {
        calls.push(`cancel ${request.headers.get("Authorization")}`);
        return HttpResponse.json(aJob({ state: "cancelled", eta: null, counts: { pending: 0, running: 0, done: 1, failed: 0, cancelled: 1 } }));
      }),
      handle("retryTransfer", ({ request }) => {
        calls.push(`retry ${request.headers.get("Authorization")}`);
        return HttpResponse.json(aJob({ state: "queued", counts: { pending: 1, running: 0, done: 1, failed: 0, cancelled: 0 } }));
      }),
    );
    const { user } = view();
    await screen.findByText("28.8 KiB of 57.6 KiB (50%)");
    expect(screen.getByRole("button", { name: "Retry failed and cancelled files" })).toBeDisabled();
    await user.click(screen.getByRole("button", { name: "Cancel job" }));
    expect(await screen.findByText("1 of 2 done (1 cancelled)")).toBeInTheDocument();
    expect(FakeEventSource.made[0]!.readyState).toBe(FakeEventSource.CLOSED);
    expect(screen.getByRole("button", { name: "Cancel job" })).toBeDisabled();
    await user.click(screen.getByRole("button", { name: "Retry failed and cancelled files" }));
    expect(await screen.findByText("1 of 2 done (1 pending)")).toBeInTheDocument();
    expect(calls).toEqual(["cancel Bearer ndnsci_t", "retry Bearer ndnsci_t"]);
    expect(FakeEventSource.made).toHaveLength(2); // a new stream for the job running again
  });

  it("asks for a token before cancelling, and shows a refusal", async () => {
    server.use(handle("cancelTransfer", () => HttpResponse.json({ detail: "a bearer token is required" }, { status: 401 })));
    const { user } = view();
    await screen.findByText("28.8 KiB of 57.6 KiB (50%)");
    await user.click(screen.getByRole("button", { name: "Cancel job" }));
    expect(screen.getByText("Give a catalog token: cancelling and retrying need one.")).toBeInTheDocument();
    await user.type(screen.getByLabelText("Catalog token"), "expired");
    await user.click(screen.getByRole("button", { name: "Cancel job" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Cancelling the job was refused");
  });

  it("filters the files by state", async () => {
    const states: (string | null)[] = [];
    server.use(
      handle("transferFiles", ({ request }) => {
        const state = new URL(request.url).searchParams.get("state");
        states.push(state);
        const files = fixtures.transferFiles.files.filter((f) => !state || f.state === state);
        return HttpResponse.json({ files });
      }),
    );
    const { user } = view();
    await screen.findByRole("table", { name: "Files of job 7" });
    await user.selectOptions(screen.getByRole("combobox", { name: "Show" }), "failed");
    expect(await screen.findByText("No failed files.")).toBeInTheDocument();
    expect(states).toEqual([null, "failed"]);
  });

  it("explains a job that does not exist", async () => {
    server.use(handle("transfer", () => HttpResponse.json({ detail: "no transfer job 7" }, { status: 404 })));
    view();
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Reading transfer job 7 was refused");
    expect(alert).toHaveTextContent("no transfer job 7");
  });
});
