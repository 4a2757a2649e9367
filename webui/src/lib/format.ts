// Formatting for people: sizes, times, counts.

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return "—";
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ${UNITS[unit]}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** `1850-01-16T12:00:00` -> `1850-01-16` (any calendar: the text is not parsed as a Date). */
export function datePart(iso: string | null | undefined): string | null {
  if (!iso) return null;
  return iso.split("T", 1)[0] ?? iso;
}

export function formatCoverage(start: string | null | undefined, end: string | null | undefined): string {
  const a = datePart(start);
  const b = datePart(end);
  if (!a && !b) return "—";
  if (a === b) return a ?? "—";
  return `${a ?? "…"} – ${b ?? "…"}`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
