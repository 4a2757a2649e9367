import { formatCount } from "@/lib/format";

interface PagerProps {
  total: number;
  offset: number;
  limit: number;
  onOffset: (offset: number) => void;
}

export function Pager({ total, offset, limit, onOffset }: PagerProps) {
  if (total <= limit && offset === 0) return null;
  const page = Math.floor(offset / limit) + 1;
  const pages = Math.max(1, Math.ceil(total / limit));
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" className="button" disabled={offset === 0} onClick={() => onOffset(0)}>
        First
      </button>
      <button type="button" className="button" disabled={offset === 0} onClick={() => onOffset(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span aria-current="page">
        Page {formatCount(page)} of {formatCount(pages)}
      </span>
      <button type="button" className="button" disabled={offset + limit >= total} onClick={() => onOffset(offset + limit)}>
        Next
      </button>
      <button
        type="button"
        className="button"
        disabled={offset + limit >= total}
        onClick={() => onOffset((pages - 1) * limit)}
      >
        Last
      </button>
    </nav>
  );
}
