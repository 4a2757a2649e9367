import { type FormEvent, useId, useState } from "react";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { useSubmitTransfer } from "../api/transfers";
import { useToken } from "../token";
import { ENGINES, type TransferSelection } from "../types";
import { TokenField } from "./TokenField";

interface TransferFormProps {
  /** the files: the cart's names, or a search's query string */
  selection: TransferSelection;
  /** what they are, in words, e.g. "the 2 files in the cart" */
  what: string;
  onOpenJob: (id: number) => void;
}

/** "Transfer to a site": a job the site's transfer agent runs, copying the files into a
 * folder below its transfer root, verified, resumed after any restart. */
export function TransferForm({ selection, what, onOpenJob }: TransferFormProps) {
  const submit = useSubmitTransfer();
  const [token] = useToken();
  const [destination, setDestination] = useState("");
  const [engine, setEngine] = useState("auto");
  const [tried, setTried] = useState(false);
  const id = useId();
  const destinationMissing = destination.trim() === "";
  const tokenMissing = token === "";

  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setTried(true);
    if (destinationMissing || tokenMissing) return;
    submit.mutate({ selection, destination: destination.trim(), engine, token });
  };

  return (
    <form className="transfer-form" onSubmit={onSubmit} aria-label="Transfer to a site" noValidate>
      <p className="hint">
        A job copies {what} to a folder at this site. The site's transfer agent runs it without this page: each file is
        fetched over NDN, checked against the catalog's SHA-256 and resumed after any restart.
      </p>
      <label>
        Destination folder
        <input
          value={destination}
          onChange={(e) => setDestination(e.target.value)}
          placeholder="e.g. cmip5/tas"
          spellCheck={false}
          aria-invalid={tried && destinationMissing}
          aria-describedby={`${id}-destination`}
        />
      </label>
      <p id={`${id}-destination`} className={tried && destinationMissing ? "field-error" : "hint"}>
        {tried && destinationMissing
          ? "Write a folder, relative to the site's transfer root."
          : "Relative to the site's transfer root; each file goes to its DRS path below it."}
      </p>
      <label>
        Engine
        <select value={engine} onChange={(e) => setEngine(e.target.value)}>
          {ENGINES.map((e) => (
            <option key={e.value} value={e.value}>
              {e.label}
            </option>
          ))}
        </select>
      </label>
      <TokenField invalid={tried && tokenMissing} />
      {tried && tokenMissing ? <p className="field-error">Give a catalog token: submitting a transfer needs one.</p> : null}
      <button type="submit" className="button button-primary" disabled={submit.isPending}>
        {submit.isPending ? "Submitting…" : "Submit transfer"}
      </button>
      {submit.isError ? <RequestProblem error={submit.error} what="Submitting the transfer" /> : null}
      {submit.isSuccess ? (
        <Notice
          tone="success"
          title={`Transfer job ${submit.data.id} submitted`}
          action={
            <button type="button" className="button" onClick={() => onOpenJob(submit.data.id)}>
              View job {submit.data.id}
            </button>
          }
        >
          <p>
            {submit.data.files} {submit.data.files === 1 ? "file" : "files"} to {submit.data.destination}, engine{" "}
            {submit.data.engine}.
          </p>
        </Notice>
      ) : null}
    </form>
  );
}
