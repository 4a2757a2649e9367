import { type FormEvent, useEffect, useRef, useState } from "react";

interface SearchBoxProps {
  value: string;
  /** live, while typing (debounced): replaces the URL entry */
  onType: (q: string) => void;
  /** Enter or the button: a new history entry */
  onSubmit: (q: string) => void;
}

const TYPE_DELAY_MS = 300;

export function SearchBox({ value, onType, onSubmit }: SearchBoxProps) {
  const [text, setText] = useState(value);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // the URL changed under us (back button, a chip removed): show it
  useEffect(() => {
    setText((current) => (current.trim() === value.trim() ? current : value));
  }, [value]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const change = (next: string) => {
    setText(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => onType(next), TYPE_DELAY_MS);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    clearTimeout(timer.current);
    onSubmit(text);
  };

  return (
    <form role="search" className="search-box" onSubmit={submit}>
      <label htmlFor="q" className="search-label">
        Search
      </label>
      <input
        id="q"
        type="search"
        value={text}
        onChange={(e) => change(e.target.value)}
        placeholder="variable, model, experiment, file name… e.g. tasmax rcp85"
        autoComplete="off"
        spellCheck={false}
        aria-describedby="q-help"
      />
      <button type="submit" className="button button-primary">
        Search
      </button>
      <p id="q-help" className="hint">
        Words match file names, facets and metadata; all words must match.
      </p>
    </form>
  );
}
