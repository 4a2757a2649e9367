import type { ReactNode } from "react";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { SlowNotice } from "@/components/ui/SlowNotice";
import { formatCount, plural } from "@/lib/format";
import { hasFilters, PAGE_SIZES, SORTS } from "@/lib/search-query/query-string";
import type { SearchQuery, SortKey } from "@/lib/search-query/types";
import { useSearchFiles } from "../api/search-files";
import type { ResultRow } from "../types";
import { Pager } from "./Pager";
import { ResultsTable } from "./ResultsTable";

interface SearchResultsProps {
  query: SearchQuery;
  selected: string | null;
  onQuery: (change: (query: SearchQuery) => SearchQuery) => void;
  onOpen: (row: ResultRow) => void;
  isInCart: (name: string) => boolean;
  onToggleCart: (row: ResultRow, add: boolean) => void;
  /** page-level actions (add to cart, manifest), given the rows shown */
  actions?: (rows: ResultRow[], total: number) => ReactNode;
  /** shown under an empty result: the active filters, to remove one */
  emptyHelp?: ReactNode;
}

export function SearchResults(props: SearchResultsProps) {
  const { query, onQuery } = props;
  const result = useSearchFiles(query);
  const page = result.data;
  const stale = result.isPlaceholderData;

  const setSort = (sort: SortKey) => onQuery((s) => ({ ...s, sort, offset: 0 }));

  return (
    <section className="results-section" aria-labelledby="results-heading">
      <div className="results-toolbar">
        <h2 id="results-heading" className="results-count" aria-live="polite">
          {page ? (
            page.total === 0 ? (
              "No files"
            ) : (
              <>
                {plural(page.total, "file")}
                {page.total > page.rows.length ? (
                  <>
                    {" "}
                    <span className="muted">{`· ${formatCount(page.offset + 1)}–${formatCount(page.offset + page.rows.length)} shown`}</span>
                  </>
                ) : null}
              </>
            )
          ) : result.isError ? (
            "Results"
          ) : (
            "Searching…"
          )}
        </h2>
        <label className="inline-field">
          Sort by
          <select value={query.sort} onChange={(e) => setSort(e.target.value as SortKey)}>
            {SORTS.map((s) => (
              <option key={s.key} value={s.key}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline-field">
          Per page
          <select
            value={query.limit}
            onChange={(e) => onQuery((s) => ({ ...s, limit: Number(e.target.value), offset: 0 }))}
          >
            {(PAGE_SIZES.includes(query.limit as (typeof PAGE_SIZES)[number]) ? PAGE_SIZES : [...PAGE_SIZES, query.limit].sort((a, b) => a - b)).map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        {page && page.rows.length > 0 && props.actions ? <div className="toolbar-actions">{props.actions(page.rows, page.total)}</div> : null}
      </div>

      <SlowNotice active={result.isFetching} what="search" />
      {result.isError ? <RequestProblem error={result.error} what="Search" onRetry={() => void result.refetch()} /> : null}

      {!page && result.isPending ? <SkeletonTable /> : null}

      {page && page.total === 0 ? (
        hasFilters(query) ? (
          <Notice tone="info" title="No files match this search">
            <p>Every filter below must hold at once. Remove one, widen the time range, or try other words.</p>
            {props.emptyHelp}
          </Notice>
        ) : (
          <Notice tone="info" title="The catalog is empty">
            <p>
              Nothing has been published yet. A data provider publishes a directory with <code>ndnsci publish DIR</code>.
            </p>
          </Notice>
        )
      ) : null}

      {page && page.total > 0 && page.rows.length === 0 ? (
        <Notice tone="info" title="This page is past the last result">
          <button type="button" className="button" onClick={() => onQuery((s) => ({ ...s, offset: 0 }))}>
            Back to the first page
          </button>
        </Notice>
      ) : null}

      {page && page.rows.length > 0 ? (
        <div className={stale ? "stale" : undefined}>
          <ResultsTable
            rows={page.rows}
            sort={query.sort}
            selected={props.selected}
            busy={result.isFetching}
            onOpen={props.onOpen}
            onSort={setSort}
            isInCart={props.isInCart}
            onToggleCart={props.onToggleCart}
          />
          <Pager
            total={page.total}
            offset={query.offset}
            limit={query.limit}
            onOffset={(offset) => onQuery((s) => ({ ...s, offset }))}
          />
        </div>
      ) : null}
    </section>
  );
}

function SkeletonTable() {
  return (
    <div className="skeleton" aria-hidden="true">
      {Array.from({ length: 6 }, (_, i) => (
        <div key={i} className="skeleton-row" />
      ))}
    </div>
  );
}
