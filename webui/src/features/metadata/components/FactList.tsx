import type { ReactNode } from "react";

/** A term and what it is; `null` leaves the row out (a fact the file does not have). */
export type Fact = readonly [term: string, value: ReactNode] | null;

interface FactListProps {
  facts: readonly Fact[];
  /** "attributes": the file's own names, in monospace */
  variant?: "facts" | "attributes";
  /** names the list when no heading does */
  label?: string;
}

/** Every term/value list of the metadata panel: a description list, one group per fact. */
export function FactList({ facts, variant = "facts", label }: FactListProps) {
  return (
    <dl className={variant} aria-label={label}>
      {facts.map((fact) =>
        fact ? (
          <div key={fact[0]} className="fact">
            <dt>{fact[0]}</dt>
            <dd>{fact[1]}</dd>
          </div>
        ) : null,
      )}
    </dl>
  );
}
