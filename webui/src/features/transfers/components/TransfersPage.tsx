import { useEffect, useRef } from "react";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { formatBytes, formatTimestamp } from "@/lib/format";
import { useTransfers } from "../api/transfers";
import { TransferJobView } from "./TransferJobView";

interface TransfersPageProps {
  /** the job whose view is open, else the list */
  job: number | null;
  onOpenJob: (id: number | null) => void;
}

/** The Transfers page: the newest jobs, or one job's view. */
export function TransfersPage({ job, onOpenJob }: TransfersPageProps) {
  if (job !== null) return <TransferJobView key={job} id={job} onBack={() => onOpenJob(null)} />;
  return <TransferList onOpenJob={onOpenJob} />;
}

function TransferList({ onOpenJob }: { onOpenJob: (id: number) => void }) {
  const jobs = useTransfers();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <section className="transfers" aria-labelledby="transfers-heading">
      <h2 id="transfers-heading" className="panel-heading" tabIndex={-1} ref={heading}>
        Transfers
      </h2>
      <p className="hint">
        Jobs copying files to a folder at this site, run by its transfer agent. Submit one from the cart or from a search's
        results (“Transfer to a site”).
      </p>
      {jobs.isPending ? (
        <p role="status" className="hint">
          Loading transfer jobs…
        </p>
      ) : null}
      {jobs.isError ? <RequestProblem error={jobs.error} what="Listing the transfers" onRetry={() => void jobs.refetch()} /> : null}
      {jobs.data && jobs.data.length === 0 ? (
        <Notice tone="info" title="No transfer jobs yet">
          <p>Put files in the cart, or search, then choose “Transfer to a site”.</p>
        </Notice>
      ) : null}
      {jobs.data && jobs.data.length > 0 ? (
        <div className="table-wrap">
          <table className="results transfers-table" aria-label="Transfer jobs">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">State</th>
                <th scope="col">Destination</th>
                <th scope="col">Files done</th>
                <th scope="col">Bytes</th>
                <th scope="col">Engine</th>
                <th scope="col">Owner</th>
                <th scope="col">Submitted</th>
              </tr>
            </thead>
            <tbody>
              {jobs.data.map((j) => (
                <tr key={j.id}>
                  <td>
                    <button type="button" className="link-button" onClick={() => onOpenJob(j.id)}>
                      Job {j.id}
                    </button>
                  </td>
                  <td>
                    <span className={`job-state job-${j.state}`}>{j.state}</span>
                  </td>
                  <td>{j.destination}</td>
                  <td>
                    {j.counts.done} of {j.files}
                  </td>
                  <td>
                    {formatBytes(j.bytes_done)} of {formatBytes(j.bytes)}
                  </td>
                  <td>{j.engine}</td>
                  <td>{j.owner}</td>
                  <td>{formatTimestamp(j.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
