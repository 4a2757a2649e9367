import { screen, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { renderWithClient } from "@/testing/render";
import { NamespaceTree } from "./NamespaceTree";

describe("NamespaceTree", () => {
  it("is a tree named Namespace whose items load their children with counts", async () => {
    const onSelectPrefix = vi.fn();
    const { user } = renderWithClient(<NamespaceTree prefix="" onSelectPrefix={onSelectPrefix} onOpenFile={() => {}} />);
    const tree = screen.getByRole("tree", { name: "Namespace" });
    const cmip5 = await within(tree).findByRole("treeitem", { name: "CMIP5" });
    expect(cmip5).toHaveAttribute("aria-expanded", "false");
    expect(cmip5).toHaveTextContent("32");

    await user.click(within(cmip5).getByText("CMIP5"));
    expect(onSelectPrefix).toHaveBeenCalledWith("/CMIP5");
    expect(cmip5).toHaveAttribute("aria-expanded", "true");
    const output1 = await within(cmip5).findByRole("treeitem", { name: "output1" });
    expect(output1).toHaveAttribute("aria-level", "2");
  });

  it("marks the current prefix and opens the tree down to it", async () => {
    renderWithClient(<NamespaceTree prefix="/CMIP5/output1" onSelectPrefix={() => {}} onOpenFile={() => {}} />);
    const output1 = await screen.findByRole("treeitem", { name: "output1" });
    expect(output1).toHaveAttribute("aria-selected", "true");
    expect(screen.getByRole("treeitem", { name: "CMIP5" })).toHaveAttribute("aria-expanded", "true");
  });

  it("moves with the arrow keys", async () => {
    const { user } = renderWithClient(<NamespaceTree prefix="" onSelectPrefix={() => {}} onOpenFile={() => {}} />);
    const cmip5 = await screen.findByRole("treeitem", { name: "CMIP5" });
    cmip5.focus();
    await user.keyboard("{ArrowRight}");
    expect(cmip5).toHaveAttribute("aria-expanded", "true");
    await screen.findByRole("treeitem", { name: "output1" });
    await user.keyboard("{ArrowDown}");
    expect(screen.getByRole("treeitem", { name: "output1" })).toHaveFocus();
    await user.keyboard("{ArrowLeft}");
    expect(cmip5).toHaveFocus();
  });
});
