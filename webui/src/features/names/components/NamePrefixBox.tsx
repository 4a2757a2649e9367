import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { formatCount, plural } from "@/lib/format";
import { useDebounced } from "@/lib/use-debounced";
import { useAutocomplete } from "../api/autocomplete";
import { normalizePrefix } from "../name-prefix";
import type { NameEntry } from "../types";

interface NamePrefixBoxProps {
  prefix: string;
  onApply: (prefix: string) => void;
  /** a completion that is a file was chosen */
  onOpenFile: (name: string) => void;
}

/** The NDN name prefix filter, completing one name component at a time (ARIA combobox). */
export function NamePrefixBox({ prefix, onApply, onOpenFile }: NamePrefixBoxProps) {
  const [text, setText] = useState(prefix);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const id = useId();
  const listId = `${id}-list`;
  // the list closes a moment after the box loses focus (a click on an entry lands first);
  // the timer goes with the component
  const closing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(closing.current), []);
  useEffect(() => setText(prefix), [prefix]);

  const typed = useDebounced(text, 120);
  const completions = useAutocomplete(normalizeForCompletion(typed), open);
  const options = open ? (completions.data ?? []) : [];
  useEffect(() => setActive(-1), [typed]);

  const choose = (entry: NameEntry) => {
    if (entry.leaf) {
      setText(entry.name);
      setOpen(false);
      onApply(entry.name);
      onOpenFile(entry.name);
      return;
    }
    setText(`${entry.name}/`); // and keep completing the next component
    setOpen(true);
  };

  const apply = (event?: FormEvent) => {
    event?.preventDefault();
    setOpen(false);
    const name = normalizePrefix(text);
    setText(name);
    onApply(name);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      setOpen(true);
      setActive((i) => (options.length ? (i + 1) % options.length : -1));
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      setActive((i) => (options.length ? (i <= 0 ? options.length - 1 : i - 1) : -1));
    } else if ((event.key === "Enter" || event.key === "Tab") && open && active >= 0 && options[active]) {
      event.preventDefault();
      choose(options[active]);
    } else if (event.key === "Escape") {
      if (open) setOpen(false);
      else setText(prefix);
    }
  };

  const expanded = open && (options.length > 0 || completions.isError);
  return (
    <form className="name-box" onSubmit={apply}>
      <label htmlFor={`${id}-input`} className="panel-heading">
        NDN name
      </label>
      <div className="combo">
        <input
          id={`${id}-input`}
          role="combobox"
          aria-expanded={expanded}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={expanded && active >= 0 ? `${id}-opt-${active}` : undefined}
          aria-describedby={`${id}-help`}
          value={text}
          placeholder="/CMIP5/output1/…"
          spellCheck={false}
          autoComplete="off"
          onChange={(e) => {
            setText(e.target.value);
            setOpen(true);
          }}
          onFocus={() => setOpen(true)}
          onBlur={() => {
            closing.current = setTimeout(() => setOpen(false), 150);
          }}
          onKeyDown={onKeyDown}
        />
        <ul id={listId} role="listbox" aria-label="Name completions" className="combo-list" hidden={!expanded}>
          {options.map((entry, i) => (
            <li
              key={entry.name}
              id={`${id}-opt-${i}`}
              role="option"
              aria-selected={i === active}
              aria-label={`${entry.component}${entry.leaf ? "" : "/"}, ${plural(entry.count, "file")}`}
              className={i === active ? "active" : undefined}
              onMouseDown={(e) => e.preventDefault()} // keep focus in the input
              onClick={() => choose(entry)}
            >
              <span className="combo-component">
                {entry.component}
                {entry.leaf ? "" : "/"}
              </span>
              <span className="facet-count">{formatCount(entry.count)}</span>
            </li>
          ))}
          {completions.isError ? (
            <li role="option" aria-disabled="true" aria-selected="false" className="combo-error">
              Completions unavailable: {(completions.error as Error).message}
            </li>
          ) : null}
        </ul>
        <button type="submit" className="button button-small" aria-label="Narrow to this name" title="Narrow the results to names under this prefix">
          Narrow
        </button>
      </div>
      <div className="name-actions">
        {prefix ? (
          <button type="button" className="link-button" onClick={() => onApply("")}>
            Clear name filter
          </button>
        ) : null}
      </div>
      <p id={`${id}-help`} className="hint">
        Type a prefix; ↓ and Enter complete the next component.
      </p>
    </form>
  );
}

/** Completions of "/a/b/" are b's children; of "/a/b" the components of /a starting with "b". */
function normalizeForCompletion(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return "/";
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}
