import { screen } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { fixtures, handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { TOKEN_KEY } from "../token";
import { TransferForm } from "./TransferForm";

const NAMES = ["/CMIP5/a/tas_1.nc", "/CMIP5/a/tas_2.nc"];

describe("TransferForm", () => {
  it("submits the names, destination, engine and the session's bearer token, then offers the job", async () => {
    const posted = vi.fn();
    server.use(
      handle("submitTransfer", async ({ request }) => {
        posted(await request.json(), request.headers.get("Authorization"));
        return HttpResponse.json({ ...fixtures.transferJob, id: 12, files: 2, destination: "cmip5/tas" }, { status: 201 });
      }),
    );
    const onOpenJob = vi.fn();
    const { user } = renderWithClient(<TransferForm selection={{ names: NAMES }} what="the 2 files in the cart" onOpenJob={onOpenJob} />);
    expect(screen.getByRole("combobox", { name: "Engine" })).toHaveValue("auto");
    await user.type(screen.getByLabelText("Destination folder"), "cmip5/tas");
    await user.selectOptions(screen.getByRole("combobox", { name: "Engine" }), "python");
    await user.type(screen.getByLabelText("Catalog token"), "ndnsci_secret");
    await user.click(screen.getByRole("button", { name: "Submit transfer" }));

    expect(await screen.findByText("Transfer job 12 submitted")).toBeInTheDocument();
    expect(posted).toHaveBeenCalledWith({ names: NAMES, destination: "cmip5/tas", engine: "python" }, "Bearer ndnsci_secret");
    expect(window.sessionStorage.getItem(TOKEN_KEY)).toBe("ndnsci_secret");
    expect(window.localStorage.getItem(TOKEN_KEY)).toBeNull();
    expect(Object.values({ ...window.localStorage })).not.toContain("ndnsci_secret");
    await user.click(screen.getByRole("button", { name: "View job 12" }));
    expect(onOpenJob).toHaveBeenCalledWith(12);
  });

  it("sends a search's query string as is", async () => {
    window.sessionStorage.setItem(TOKEN_KEY, "t");
    const posted = vi.fn();
    server.use(
      handle("submitTransfer", async ({ request }) => {
        posted(await request.json());
        return HttpResponse.json(fixtures.transferJob, { status: 201 });
      }),
    );
    const { user } = renderWithClient(
      <TransferForm selection={{ search: "model=HadCM3&variable=tas" }} what="the 3 files of this search" onOpenJob={() => {}} />,
    );
    expect(screen.getByLabelText("Catalog token")).toHaveValue("t");
    await user.type(screen.getByLabelText("Destination folder"), "hadcm3");
    await user.click(screen.getByRole("button", { name: "Submit transfer" }));
    await screen.findByText("Transfer job 7 submitted");
    expect(posted).toHaveBeenCalledWith({ search: "model=HadCM3&variable=tas", destination: "hadcm3", engine: "auto" });
  });

  it("asks for a destination and a token before sending anything", async () => {
    const posted = vi.fn();
    server.use(handle("submitTransfer", () => (posted(), HttpResponse.json(fixtures.transferJob, { status: 201 }))));
    const { user } = renderWithClient(<TransferForm selection={{ names: NAMES }} what="2 files" onOpenJob={() => {}} />);
    await user.click(screen.getByRole("button", { name: "Submit transfer" }));
    expect(screen.getByText("Write a folder, relative to the site's transfer root.")).toBeInTheDocument();
    expect(screen.getByText("Give a catalog token: submitting a transfer needs one.")).toBeInTheDocument();
    expect(screen.getByLabelText("Destination folder")).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByLabelText("Catalog token")).toHaveAttribute("aria-invalid", "true");
    expect(posted).not.toHaveBeenCalled();
  });

  it("shows the catalog's reason for a refusal (a bad token, an absolute destination)", async () => {
    window.sessionStorage.setItem(TOKEN_KEY, "wrong");
    server.use(handle("submitTransfer", () => HttpResponse.json({ detail: "unknown or revoked token" }, { status: 401 })));
    const { user } = renderWithClient(<TransferForm selection={{ names: NAMES }} what="2 files" onOpenJob={() => {}} />);
    await user.type(screen.getByLabelText("Destination folder"), "/etc");
    await user.click(screen.getByRole("button", { name: "Submit transfer" }));
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Submitting the transfer was refused");
    expect(alert).toHaveTextContent("unknown or revoked token");
  });
});
