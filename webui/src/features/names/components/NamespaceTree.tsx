import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { formatCount } from "@/lib/format";
import { useTreeLevel } from "../api/browse-tree";
import { ancestors } from "../name-prefix";
import type { NameEntry } from "../types";

interface NamespaceTreeProps {
  /** the prefix narrowing the results ("" for none): its item is selected */
  prefix: string;
  onSelectPrefix: (name: string) => void;
  onOpenFile: (name: string) => void;
}

/** The namespace, one level fetched at a time, with file counts (ARIA tree). */
export function NamespaceTree({ prefix, onSelectPrefix, onOpenFile }: NamespaceTreeProps) {
  const root = useTreeLevel("/");
  const [expanded, setExpanded] = useState<Set<string>>(() => new Set(ancestors(prefix)));
  const [focused, setFocused] = useState<string | null>(null);
  const treeRef = useRef<HTMLUListElement>(null);

  // a prefix chosen elsewhere (name box, URL) opens the tree down to it
  useEffect(() => {
    if (!prefix) return;
    setExpanded((current) => {
      const missing = ancestors(prefix).slice(0, -1).filter((a) => !current.has(a));
      return missing.length ? new Set([...current, ...missing]) : current;
    });
  }, [prefix]);

  const toggle = (name: string, open?: boolean) =>
    setExpanded((current) => {
      const next = new Set(current);
      if (open ?? !next.has(name)) next.add(name);
      else next.delete(name);
      return next;
    });

  const activate = (entry: NameEntry) => {
    setFocused(entry.name);
    if (entry.leaf) onOpenFile(entry.name);
    else {
      onSelectPrefix(entry.name === prefix ? "" : entry.name);
      if (entry.name !== prefix) toggle(entry.name, true);
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLUListElement>) => {
    const items = Array.from(treeRef.current?.querySelectorAll<HTMLElement>('[role="treeitem"]') ?? []).filter(
      (item) => item.offsetParent !== null || item.closest("[hidden]") === null,
    );
    const current = (event.target as HTMLElement).closest<HTMLElement>('[role="treeitem"]');
    if (!current) return;
    const index = items.indexOf(current);
    const name = current.dataset.name ?? "";
    const leaf = current.dataset.leaf === "true";
    const focusAt = (i: number) => {
      const item = items[Math.max(0, Math.min(items.length - 1, i))];
      if (item) {
        setFocused(item.dataset.name ?? null);
        item.focus();
      }
    };
    switch (event.key) {
      case "ArrowDown":
        focusAt(index + 1);
        break;
      case "ArrowUp":
        focusAt(index - 1);
        break;
      case "Home":
        focusAt(0);
        break;
      case "End":
        focusAt(items.length - 1);
        break;
      case "ArrowRight":
        if (!leaf && !expanded.has(name)) toggle(name, true);
        else focusAt(index + 1);
        break;
      case "ArrowLeft":
        if (!leaf && expanded.has(name)) toggle(name, false);
        else {
          const parent = current.parentElement?.closest<HTMLElement>('[role="treeitem"]');
          if (parent) focusAt(items.indexOf(parent));
        }
        break;
      case "Enter":
      case " ":
        current.querySelector<HTMLElement>(".tree-label")?.click();
        break;
      default:
        return;
    }
    event.preventDefault();
  };

  const tabStop = focused ?? (prefix || root.data?.children[0]?.name || null);
  return (
    <section className="tree-panel" aria-labelledby="tree-heading">
      <h2 id="tree-heading" className="panel-heading">
        Namespace
      </h2>
      {root.isError ? <RequestProblem error={root.error} what="Browsing names" onRetry={() => void root.refetch()} /> : null}
      {root.isPending ? <p className="hint">Loading names…</p> : null}
      {root.data && root.data.children.length === 0 ? <p className="hint">No names published yet.</p> : null}
      <ul role="tree" aria-label="Namespace" className="tree" ref={treeRef} onKeyDown={onKeyDown}>
        {root.data?.children.map((entry) => (
          <TreeItem
            key={entry.name}
            entry={entry}
            level={1}
            expanded={expanded}
            prefix={prefix}
            tabStop={tabStop}
            onToggle={toggle}
            onActivate={activate}
          />
        ))}
      </ul>
    </section>
  );
}

interface TreeItemProps {
  entry: NameEntry;
  level: number;
  expanded: Set<string>;
  prefix: string;
  tabStop: string | null;
  onToggle: (name: string) => void;
  onActivate: (entry: NameEntry) => void;
}

function TreeItem({ entry, level, expanded, prefix, tabStop, onToggle, onActivate }: TreeItemProps) {
  const open = !entry.leaf && expanded.has(entry.name);
  const children = useTreeLevel(entry.name, open);
  const labelId = useId();
  return (
    <li
      role="treeitem"
      aria-level={level}
      aria-expanded={entry.leaf ? undefined : open}
      aria-selected={entry.name === prefix}
      aria-labelledby={labelId}
      aria-describedby={entry.leaf ? undefined : `${labelId}-count`}
      tabIndex={entry.name === tabStop ? 0 : -1}
      data-name={entry.name}
      data-leaf={entry.leaf}
      className="tree-item"
    >
      <div className={entry.name === prefix ? "tree-row selected" : "tree-row"} style={{ paddingLeft: `${(level - 1) * 0.9}rem` }}>
        {entry.leaf ? (
          <span className="tree-twisty" aria-hidden="true">
            ·
          </span>
        ) : (
          <span className="tree-twisty" aria-hidden="true" onClick={() => onToggle(entry.name)}>
            {open ? "▾" : "▸"}
          </span>
        )}
        <span id={labelId} className={entry.leaf ? "tree-label leaf" : "tree-label"} onClick={() => onActivate(entry)}>
          {entry.component}
        </span>
        {entry.leaf ? null : (
          <span id={`${labelId}-count`} className="facet-count">
            {formatCount(entry.count)}
            <span className="visually-hidden">{entry.count === 1 ? " file" : " files"}</span>
          </span>
        )}
      </div>
      {open ? (
        <ul role="group">
          {children.isPending ? (
            <li role="none" className="hint">
              Loading…
            </li>
          ) : null}
          {children.isError ? (
            <li role="none" className="field-error">
              {(children.error as Error).message}
            </li>
          ) : null}
          {children.data?.children.map((child) => (
            <TreeItem
              key={child.name}
              entry={child}
              level={level + 1}
              expanded={expanded}
              prefix={prefix}
              tabStop={tabStop}
              onToggle={onToggle}
              onActivate={onActivate}
            />
          ))}
          {children.data?.truncated ? (
            <li role="none" className="hint">
              More names than shown: type a longer prefix in “NDN name”.
            </li>
          ) : null}
        </ul>
      ) : null}
    </li>
  );
}
