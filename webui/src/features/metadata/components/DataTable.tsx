import type { ReactNode } from "react";

interface DataTableProps<Row> {
  /** the table's accessible name */
  label: string;
  /** column headings; the first column holds each row's header */
  columns: readonly string[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** one cell per column, the first being the row's header */
  cells: (row: Row) => readonly ReactNode[];
}

/** A compact table of named things (variables, dimensions): one row per thing. */
export function DataTable<Row>({ label, columns, rows, rowKey, cells }: DataTableProps<Row>) {
  return (
    <table className="compact" aria-label={label}>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const [header, ...rest] = cells(row);
          return (
            <tr key={rowKey(row)}>
              <th scope="row">{header}</th>
              {rest.map((cell, i) => (
                <td key={columns[i + 1]}>{cell}</td>
              ))}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
