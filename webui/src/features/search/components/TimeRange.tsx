import { type FormEvent, useEffect, useState } from "react";

// what the catalog accepts: 1850, 1850-01, 185001, 1850-01-16, 18500116, with a time after it
const TIME = /^\d{4}(-?\d{2}(-?\d{2}([T ]?\d{2}(:?\d{2}(:?\d{2})?)?)?)?)?$/;

interface TimeRangeProps {
  start: string;
  end: string;
  onApply: (start: string, end: string) => void;
}

export function TimeRange({ start, end, onApply }: TimeRangeProps) {
  const [from, setFrom] = useState(start);
  const [until, setUntil] = useState(end);
  const [problem, setProblem] = useState<string | null>(null);
  useEffect(() => setFrom(start), [start]);
  useEffect(() => setUntil(end), [end]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const a = from.trim();
    const b = until.trim();
    const bad = [a && !TIME.test(a) ? `"${a}"` : null, b && !TIME.test(b) ? `"${b}"` : null].filter(Boolean);
    if (bad.length) {
      setProblem(`${bad.join(" and ")} is not a date: write a year (1850), a month (1850-01) or a day (1850-01-16).`);
      return;
    }
    if (a && b && a.replace(/\D/g, "").slice(0, 8) > b.replace(/\D/g, "").padEnd(8, "9").slice(0, 8)) {
      setProblem("The start of the range is after its end.");
      return;
    }
    setProblem(null);
    onApply(a, b);
  };

  return (
    <form className="time-range" onSubmit={submit} aria-describedby="time-help">
      <fieldset>
        <legend>Time coverage</legend>
        <p id="time-help" className="hint">
          Files whose data overlaps this period (any calendar).
        </p>
        <div className="time-inputs">
          <label>
            From
            <input value={from} onChange={(e) => setFrom(e.target.value)} placeholder="1850" inputMode="numeric" size={10} />
          </label>
          <label>
            To
            <input value={until} onChange={(e) => setUntil(e.target.value)} placeholder="2005-12" inputMode="numeric" size={10} />
          </label>
          <button type="submit" className="button button-small">
            Apply
          </button>
        </div>
        {problem ? (
          <p className="field-error" role="alert">
            {problem}
          </p>
        ) : null}
      </fieldset>
    </form>
  );
}
