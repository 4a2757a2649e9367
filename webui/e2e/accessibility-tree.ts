// Chromium's own accessibility tree, read over the DevTools protocol: the names a screen reader
// is given, CSS generated content included (which jsdom and axe do not judge).
import type { Page } from "@playwright/test";

export interface AxNode {
  id: string;
  role: string;
  name: string;
  childIds: string[];
}

interface CdpAxNode {
  nodeId: string;
  ignored: boolean;
  role?: { value?: unknown };
  name?: { value?: unknown };
  childIds?: string[];
}

/** Every node of the page's accessibility tree that is not ignored. */
export async function accessibilityTree(page: Page): Promise<AxNode[]> {
  const cdp = await page.context().newCDPSession(page);
  try {
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as { nodes: CdpAxNode[] };
    return nodes
      .filter((n) => !n.ignored)
      .map((n) => ({
        id: n.nodeId,
        role: String(n.role?.value ?? ""),
        name: String(n.name?.value ?? ""),
        childIds: n.childIds ?? [],
      }));
  } finally {
    await cdp.detach();
  }
}

/** The nodes under `root` (not `root` itself), in document order. */
export function descendants(tree: AxNode[], root: AxNode): AxNode[] {
  const byId = new Map(tree.map((n) => [n.id, n]));
  const found: AxNode[] = [];
  const walk = (node: AxNode) => {
    for (const id of node.childIds) {
      const child = byId.get(id);
      if (!child) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

/** The one node with this role and exactly this name. */
export function theNode(tree: AxNode[], role: string, name: string): AxNode {
  const matches = tree.filter((n) => n.role === role && n.name === name);
  if (matches.length !== 1) throw new Error(`${matches.length} ${role} nodes named ${JSON.stringify(name)}`);
  return matches[0]!;
}

// Roles whose name a screen reader announces as the thing's label (text runs are not labels).
const LABELLED = new Set([
  "button", "link", "checkbox", "radio", "combobox", "searchbox", "textbox", "spinbutton", "slider",
  "group", "region", "navigation", "complementary", "main", "banner", "form", "dialog", "alertdialog",
  "heading", "table", "columnheader", "rowheader", "list", "listbox", "option", "tree", "treeitem",
  "tab", "tablist", "menuitem", "progressbar", "status", "img",
]);
// Arrows, technical symbols, box drawing, geometric shapes, dingbats, pictographs: what a
// page draws for the eye (▸ ▾ ✕ →), and a screen reader reads out by its Unicode name.
const DRAWN = /[\u2190-\u21FF\u2300-\u23FF\u2500-\u27BF\u2900-\u297F\u2B00-\u2BFF]|\p{Extended_Pictographic}/u;

/** "role: name" of every label that carries a drawn symbol. */
export function drawnSymbolsInNames(tree: AxNode[]): string[] {
  return tree.filter((n) => LABELLED.has(n.role) && DRAWN.test(n.name)).map((n) => `${n.role}: ${n.name}`);
}
