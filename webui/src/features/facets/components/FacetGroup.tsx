import { useId, useMemo, useState } from "react";
import { formatCount } from "@/lib/format";
import type { FacetFilter } from "@/lib/search-query/types";
import type { FacetCounts } from "../types";

const SHOWN = 8;
const FILTER_FROM = 12;

interface FacetGroupProps {
  facet: FacetCounts;
  filter: FacetFilter | undefined;
  folded: boolean;
  onToggle: (value: string, on: boolean) => void;
}

/** One facet: a group named after it, a checkbox per value with its live count (OR within). */
export function FacetGroup({ facet, filter, folded: startFolded, onToggle }: FacetGroupProps) {
  const selected = useMemo(() => new Set(filter?.include ?? []), [filter]);
  const [folded, setFolded] = useState(startFolded && selected.size === 0);
  const [all, setAll] = useState(false);
  const [needle, setNeedle] = useState("");
  const id = useId();

  // selected values stay visible even when the other filters leave them no file
  const values = useMemo(() => {
    const listed = new Set(facet.values.map((v) => v.value));
    const missing = [...selected].filter((v) => !listed.has(v)).map((value) => ({ value, count: 0 }));
    return [...missing, ...facet.values];
  }, [facet.values, selected]);
  const matching = needle
    ? values.filter((v) => v.value.toLowerCase().includes(needle.trim().toLowerCase()))
    : values;
  const shown = all || needle ? matching : matching.slice(0, SHOWN);
  // picked values first when the list is cut, so a choice never disappears
  const visible = all || needle ? shown : [...new Set([...values.filter((v) => selected.has(v.value)), ...shown])];

  return (
    <fieldset className="facet" aria-describedby={`${id}-summary`}>
      <legend>
        <button
          type="button"
          className="facet-toggle"
          aria-expanded={!folded}
          aria-controls={`${id}-values`}
          onClick={() => setFolded((f) => !f)}
        >
          {/* drawn for the eye only: the group and the button are named exactly after the facet */}
          <span className="facet-twisty" aria-hidden="true">
            {folded ? "▸" : "▾"}
          </span>
          {facet.key}
        </button>
      </legend>
      <span id={`${id}-summary`} className="facet-summary">
        {formatCount(facet.values.length)} {facet.values.length === 1 ? "value" : "values"}
        {selected.size ? `, ${selected.size} chosen` : ""}
      </span>
      <div id={`${id}-values`} hidden={folded}>
        {values.length >= FILTER_FROM ? (
          <input
            type="search"
            className="facet-filter"
            value={needle}
            onChange={(e) => setNeedle(e.target.value)}
            placeholder={`Filter ${facet.key}…`}
            aria-label={`Filter ${facet.key} values`}
          />
        ) : null}
        <ul className="facet-values">
          {visible.map(({ value, count }) => (
            <li key={value}>
              <label className={count === 0 && !selected.has(value) ? "facet-value empty" : "facet-value"}>
                <input
                  type="checkbox"
                  checked={selected.has(value)}
                  onChange={(e) => onToggle(value, e.target.checked)}
                  aria-label={`${value}, ${formatCount(count)} ${count === 1 ? "file" : "files"}`}
                />
                <span className="facet-value-text">{value}</span>
                <span className="facet-count" aria-hidden="true">
                  {formatCount(count)}
                </span>
              </label>
            </li>
          ))}
        </ul>
        {needle && matching.length === 0 ? <p className="hint">No {facet.key} matches “{needle}”.</p> : null}
        {!needle && matching.length > SHOWN ? (
          <button type="button" className="link-button" onClick={() => setAll((a) => !a)} aria-expanded={all}>
            {all ? "Show fewer" : `Show all ${formatCount(matching.length)}`}
          </button>
        ) : null}
      </div>
    </fieldset>
  );
}
