import { screen, waitFor } from "@testing-library/react";
import { HttpResponse } from "msw";
import { describe, expect, it, vi } from "vitest";
import { handle, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { NamePrefixBox } from "./NamePrefixBox";

describe("NamePrefixBox", () => {
  it("completes the next name component with counts, from what was typed", async () => {
    const asked = vi.fn();
    server.use(
      handle("autocomplete", ({ request }) => {
        const prefix = new URL(request.url).searchParams.get("prefix")!;
        asked(prefix);
        const next = prefix.endsWith("/MIROC/")
          ? [{ component: "MIROC-ESM", name: "/CMIP5/output1/MIROC/MIROC-ESM", count: 1, leaf: false }]
          : [
              { component: "MIROC", name: "/CMIP5/output1/MIROC", count: 1, leaf: false },
              { component: "MOHC", name: "/CMIP5/output1/MOHC", count: 1, leaf: false },
            ];
        return HttpResponse.json({ prefix, completions: next });
      }),
    );
    const onApply = vi.fn();
    const { user } = renderWithClient(<NamePrefixBox prefix="" onApply={onApply} onOpenFile={() => {}} />);
    const box = screen.getByRole("combobox", { name: "NDN name" });
    await user.type(box, "/CMIP5/output1/M");
    await waitFor(() => expect(asked).toHaveBeenLastCalledWith("/CMIP5/output1/M"));
    expect(await screen.findByRole("option", { name: "MOHC/, 1 file" })).toBeInTheDocument();
    expect(box).toHaveAttribute("aria-expanded", "true");

    await user.keyboard("{ArrowDown}");
    expect(box).toHaveAttribute("aria-activedescendant", screen.getByRole("option", { name: "MIROC/, 1 file" }).id);
    await user.keyboard("{Enter}");
    expect(box).toHaveValue("/CMIP5/output1/MIROC/");
    expect(await screen.findByRole("option", { name: "MIROC-ESM/, 1 file" })).toBeInTheDocument();
    expect(onApply).not.toHaveBeenCalled();

    await user.click(screen.getByRole("button", { name: "Narrow to this name" }));
    expect(onApply).toHaveBeenCalledWith("/CMIP5/output1/MIROC");
  });

  it("normalizes a typed prefix", async () => {
    const onApply = vi.fn();
    const { user } = renderWithClient(<NamePrefixBox prefix="" onApply={onApply} onOpenFile={() => {}} />);
    await user.type(screen.getByRole("combobox", { name: "NDN name" }), "CMIP5//output1/{Escape}{Enter}");
    expect(onApply).toHaveBeenCalledWith("/CMIP5/output1");
  });

  it("opens a file chosen among the completions", async () => {
    server.use(
      handle("autocomplete", () =>
        HttpResponse.json({ prefix: "/x/", completions: [{ component: "a.nc", name: "/x/a.nc", count: 1, leaf: true }] }),
      ),
    );
    const onOpenFile = vi.fn();
    const { user } = renderWithClient(<NamePrefixBox prefix="" onApply={() => {}} onOpenFile={onOpenFile} />);
    await user.type(screen.getByRole("combobox", { name: "NDN name" }), "/x/");
    await user.click(await screen.findByRole("option", { name: "a.nc, 1 file" }));
    expect(onOpenFile).toHaveBeenCalledWith("/x/a.nc");
  });
});
