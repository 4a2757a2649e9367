import { formatBytes, formatCoverage } from "@/lib/format";
import type { SortKey } from "@/lib/search-query/types";
import type { ResultRow } from "../types";
import { FileNameText, NameText } from "./NameText";

interface ResultsTableProps {
  rows: ResultRow[];
  sort: SortKey;
  selected: string | null;
  busy: boolean;
  onOpen: (row: ResultRow) => void;
  onSort: (sort: SortKey) => void;
  isInCart: (name: string) => boolean;
  onToggleCart: (row: ResultRow, add: boolean) => void;
}

type Column = { label: string; asc: SortKey; desc: SortKey } | { label: string };

const COLUMNS: Column[] = [
  { label: "Original file name" },
  { label: "NDN name", asc: "name", desc: "-name" },
  { label: "Size", asc: "size", desc: "-size" },
  { label: "Time coverage", asc: "time_start", desc: "-time_start" },
];

/** Shown only in a federation, where some file has the site that published it. */
const SITE_COLUMN: Column = { label: "Site" };

function SortHeader({ column, sort, onSort }: { column: Column; sort: SortKey; onSort: (s: SortKey) => void }) {
  if (!("asc" in column)) return <th scope="col">{column.label}</th>;
  const direction = sort === column.asc ? "ascending" : sort === column.desc ? "descending" : undefined;
  const next = direction === "ascending" ? column.desc : column.asc;
  return (
    <th scope="col" aria-sort={direction ?? "none"}>
      <button type="button" className="sort-button" onClick={() => onSort(next)} title={`Sort by ${column.label}`}>
        {column.label}
        <span aria-hidden="true" className="sort-mark">
          {direction === "ascending" ? " ▲" : direction === "descending" ? " ▼" : " ↕"}
        </span>
      </button>
    </th>
  );
}

/** One page of results; choosing a row opens its metadata. */
export function ResultsTable({ rows, sort, selected, busy, onOpen, onSort, isInCart, onToggleCart }: ResultsTableProps) {
  const federated = rows.some((row) => row.site !== null);
  const columns = federated ? [...COLUMNS, SITE_COLUMN] : COLUMNS;
  return (
    <div className="table-wrap">
      <table className="results" aria-label="Results" aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col" className="col-cart">
              <span className="visually-hidden">In cart</span>
            </th>
            {columns.map((column) => (
              <SortHeader key={column.label} column={column} sort={sort} onSort={onSort} />
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const inCart = isInCart(row.name);
            return (
              <tr
                key={row.name}
                className={row.name === selected ? "selected" : undefined}
                aria-current={row.name === selected ? "true" : undefined}
                onClick={() => onOpen(row)}
              >
                <td className="col-cart" onClick={(e) => e.stopPropagation()}>
                  <input
                    type="checkbox"
                    checked={inCart}
                    onChange={(e) => onToggleCart(row, e.target.checked)}
                    aria-label={`${inCart ? "Remove" : "Add"} ${row.fileName} ${inCart ? "from" : "to"} the cart`}
                  />
                </td>
                <td className="col-file">
                  <button
                    type="button"
                    className="link-button file-button"
                    onClick={(e) => {
                      e.stopPropagation();
                      onOpen(row);
                    }}
                    aria-label={`${row.original}: show metadata`}
                  >
                    <FileNameText name={row.original} />
                  </button>
                  {row.original !== row.fileName ? (
                    <span className="canonical-name">
                      <span className="visually-hidden">published as </span>
                      <span aria-hidden="true">→ </span>
                      <FileNameText name={row.fileName} />
                    </span>
                  ) : null}
                </td>
                <td className="col-name">
                  <NameText name={row.name} />
                </td>
                <td className="col-size">{formatBytes(row.size)}</td>
                <td className="col-time">{formatCoverage(row.timeStart, row.timeEnd)}</td>
                {federated ? <td className="col-site">{row.site ?? "—"}</td> : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
