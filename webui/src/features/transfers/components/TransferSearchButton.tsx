import { useId, useState } from "react";
import { plural } from "@/lib/format";
import { TransferForm } from "./TransferForm";

interface TransferSearchButtonProps {
  /** the search as a /search query string (the job takes every file that matches it) */
  search: string;
  total: number;
  onOpenJob: (id: number) => void;
}

/** "Transfer all N to a site" beside a search's results: the form opens below it. */
export function TransferSearchButton({ search, total, onOpenJob }: TransferSearchButtonProps) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <div className="transfer-launch" onKeyDown={(e) => e.key === "Escape" && setOpen(false)}>
      <button
        type="button"
        className="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
        title="A transfer job copying every file of this search to a folder at this site"
      >
        Transfer all {total} to a site
      </button>
      {open ? (
        <div id={id} className="transfer-popover">
          <div className="panel-bar">
            <h3 className="panel-heading">Transfer to a site</h3>
            <button type="button" className="button button-small" onClick={() => setOpen(false)}>
              Close
            </button>
          </div>
          <TransferForm selection={{ search }} what={`the ${plural(total, "file")} of this search`} onOpenJob={onOpenJob} />
        </div>
      ) : null}
    </div>
  );
}
