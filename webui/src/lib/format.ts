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

/** Bytes per second, e.g. `1.50 MiB/s`. */
export function formatRate(bytesPerSecond: number | null | undefined): string {
  if (bytesPerSecond === null || bytesPerSecond === undefined || !Number.isFinite(bytesPerSecond)) return "—";
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}

/** A duration for people: `45 s`, `3 min 20 s`, `2 h 5 min`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return "—";
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ""}`;
  const minutes = Math.round((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${minutes ? ` ${minutes} min` : ""}`;
}

/** Unix seconds as a local date and time, e.g. `2026-12-02 14:05:09`. */
export function formatTimestamp(unixSeconds: number | null | undefined): string {
  if (unixSeconds === null || unixSeconds === undefined || !Number.isFinite(unixSeconds)) return "—";
  const d = new Date(unixSeconds * 1000);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
