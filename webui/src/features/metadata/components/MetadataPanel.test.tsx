import { screen, within } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { fixtures, handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { MetadataPanel } from "./MetadataPanel";

const NAME = fixtures.fileBnu.name;

describe("MetadataPanel", () => {
  it("is a region named Metadata with everything known about the file", async () => {
    renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    const panel = screen.getByRole("region", { name: "Metadata" });
    expect(await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename })).toBeInTheDocument();
    // checksum, time coverage and calendar
    expect(panel).toHaveTextContent(fixtures.fileBnu.sha256);
    expect(panel).toHaveTextContent("1450-01-01 – 1450-03-01");
    expect(panel).toHaveTextContent("noleap");
    // the correction the translator applied to the name
    expect(panel).toHaveTextContent("dir-file-mismatch");
    expect(panel).toHaveTextContent("table directory 'cfMon' disagrees");
    // variables with units, dimensions, global attributes
    const variables = within(panel).getByRole("table", { name: "Variables" });
    expect(within(variables).getByRole("rowheader", { name: "fgco2" }).closest("tr")).toHaveTextContent("kg m-2 s-1");
    expect(within(panel).getByRole("table", { name: "Dimensions" })).toHaveTextContent("lat5");
    expect(within(panel).getByText("institute_id").nextElementSibling).toHaveTextContent("BNU");
    expect(panel).toHaveTextContent("ESM pre-industrial control");
    // the original file name and the path it was published from, before corrections
    expect(within(panel).getByText("Original file name").nextElementSibling).toHaveTextContent(fixtures.fileBnu.original);
    expect(within(panel).getByText("Original path").nextElementSibling).toHaveTextContent("/cfMon/r1i1p1/");
    // a download link for browsers without NDN: the HTTP gateway
    const link = within(panel).getByRole("link", { name: "Download over HTTP" });
    expect(link).toHaveAttribute("href", `/data${NAME}`);
    expect(link).toHaveAttribute("download", fixtures.fileBnu.filename);
  });

  it("names the federation site that published the file, and no site in a catalog without one", async () => {
    server.use(handle("file", () => HttpResponse.json({ ...fixtures.fileBnu, site: "kisti" })));
    const { unmount } = renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    let panel = screen.getByRole("region", { name: "Metadata" });
    await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename });
    expect(within(panel).getByText("Site").nextElementSibling).toHaveTextContent(/^kisti \(the federation site/);
    unmount();
    server.resetHandlers();
    renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    panel = screen.getByRole("region", { name: "Metadata" });
    await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename });
    expect(within(panel).queryByText("Site")).not.toBeInTheDocument();
  });

  it("offers a CMS file's XRootD URL when the catalog gives one, and none otherwise", async () => {
    const url = "root://xrootd.example.org:1094//store/mc/a/b.root";
    server.use(
      handle("file", () =>
        HttpResponse.json({ ...fixtures.fileBnu, name: "/CMS/store/mc/a/b.root", urls: { http: "/data/CMS/store/mc/a/b.root", xrootd: url } }),
      ),
    );
    const { unmount } = renderWithClient(<MetadataPanel name="/CMS/store/mc/a/b.root" onClose={() => {}} />);
    let panel = screen.getByRole("region", { name: "Metadata" });
    await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename });
    expect(within(panel).getByText("XRootD").nextElementSibling).toHaveTextContent(url);
    expect(within(panel).getByRole("button", { name: "Copy XRootD URL" })).toBeInTheDocument();
    unmount();
    server.resetHandlers();
    renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    panel = screen.getByRole("region", { name: "Metadata" });
    await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename });
    expect(within(panel).queryByText("XRootD")).not.toBeInTheDocument();
  });

  it("escapes the name once more in the HTTP link", async () => {
    server.use(handle("file", () => HttpResponse.json({ ...fixtures.fileBnu, name: "/CMS/a%20b/c.root" })));
    renderWithClient(<MetadataPanel name="/CMS/a%20b/c.root" onClose={() => {}} />);
    const link = await screen.findByRole("link", { name: "Download over HTTP" });
    expect(link).toHaveAttribute("href", "/data/CMS/a%2520b/c.root");
  });

  it("shows the canonical file name beside an original one the translator corrected", async () => {
    server.use(
      handle("file", () =>
        HttpResponse.json({ ...fixtures.fileBnu, original: "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc_1", original_path: null }),
      ),
    );
    renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    const panel = screen.getByRole("region", { name: "Metadata" });
    await within(panel).findByRole("heading", { name: fixtures.fileBnu.filename });
    expect(within(panel).getByText("Original file name").nextElementSibling).toHaveTextContent(
      `fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc_1 (published as ${fixtures.fileBnu.filename})`,
    );
    expect(within(panel).queryByText("Original path")).not.toBeInTheDocument();
  });

  it("says what went wrong when the file is gone", async () => {
    server.use(handle("file", () => HttpResponse.json({ detail: "no file named '/x/y.nc'" }, { status: 404 })));
    renderWithClient(<MetadataPanel name="/x/y.nc" onClose={() => {}} />);
    expect(await screen.findByRole("alert")).toHaveTextContent("no file named '/x/y.nc'");
  });

  it("explains a record published by name only", async () => {
    server.use(
      handle("file", () =>
        HttpResponse.json({ ...fixtures.fileBnu, metadata: null, corrections: [], history: [] }),
      ),
    );
    renderWithClient(<MetadataPanel name={NAME} onClose={() => {}} />);
    expect(await screen.findByText("Published by name only")).toBeInTheDocument();
    expect(screen.getByText(/None: the name was read as published/)).toBeInTheDocument();
  });

  it("closes", async () => {
    const onClose = vi.fn();
    const { user } = renderWithClient(<MetadataPanel name={NAME} onClose={onClose} />);
    await user.click(screen.getByRole("button", { name: "Close metadata" }));
    expect(onClose).toHaveBeenCalled();
  });
});
