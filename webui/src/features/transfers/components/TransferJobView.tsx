import { useEffect, useRef, useState } from "react";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { formatBytes, formatDuration, formatRate, formatTimestamp, plural } from "@/lib/format";
import { FILES_LIMIT, useCancelTransfer, useRetryTransfer, useTransfer, useTransferFiles } from "../api/transfers";
import { useToken } from "../token";
import { FILE_STATES, type FileState, isActive, type TransferFile, type TransferJob } from "../types";
import { type LiveState, useTransferEvents } from "../use-transfer-events";
import { TokenField } from "./TokenField";

const LIVE_TEXT: Record<LiveState, string> = {
  connecting: "Connecting to live updates…",
  live: "Live: updated as the agent reports",
  reconnecting: "Live updates lost: reconnecting…",
  ended: "Finished: no more updates",
  failed: "Live updates refused by the catalog: reload to try again",
  unsupported: "This browser has no live updates: asking every few seconds",
};

/** One job: its bytes, rate, ETA and engines, live (server-sent events), its files, and
 * cancel and retry. */
export function TransferJobView({ id, onBack }: { id: number; onBack: () => void }) {
  const job = useTransfer(id);
  const active = job.data ? isActive(job.data) : false;
  const live = useTransferEvents(id, active);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const polling = live === "unsupported" && active;
  const { refetch } = job;
  useEffect(() => {
    if (!polling) return;
    const timer = setInterval(() => void refetch(), 2000);
    return () => clearInterval(timer);
  }, [polling, refetch]);

  return (
    <section className="transfers transfer-job" aria-labelledby="transfer-job-heading">
      <div className="panel-bar">
        <h2 id="transfer-job-heading" className="panel-heading" tabIndex={-1} ref={heading}>
          Transfer job {id}
        </h2>
        <button type="button" className="button button-small" onClick={onBack}>
          All transfers
        </button>
      </div>
      {job.isPending ? (
        <p role="status" className="hint">
          Loading job {id}…
        </p>
      ) : null}
      {job.isError ? <RequestProblem error={job.error} what={`Reading transfer job ${id}`} onRetry={() => void job.refetch()} /> : null}
      {job.data ? (
        <>
          <p className={`live live-${live}`} role="status">
            {LIVE_TEXT[live]}
          </p>
          <JobSummary job={job.data} />
          <JobActions job={job.data} />
          <JobFiles id={id} />
        </>
      ) : null}
    </section>
  );
}

function JobSummary({ job }: { job: TransferJob }) {
  const { counts } = job;
  const others = (["running", "pending", "failed", "cancelled"] as const)
    .filter((s) => counts[s])
    .map((s) => `${counts[s]} ${s}`);
  const engines = Object.entries(job.engines)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([engine, n]) => `${engine}: ${plural(n, "file")}`);
  const percent = job.bytes > 0 ? Math.floor((100 * job.bytes_done) / job.bytes) : null;
  return (
    <>
      <div className="job-progress">
        <progress max={job.bytes || 1} value={Math.min(job.bytes_done, job.bytes || 1)} aria-label={`Job ${job.id} bytes`} />
        <span>
          {formatBytes(job.bytes_done)} of {formatBytes(job.bytes)}
          {percent !== null ? ` (${percent}%)` : ""}
        </span>
      </div>
      <dl className="facts job-facts" aria-label={`Job ${job.id}`}>
        <dt>State</dt>
        <dd>
          <span className={`job-state job-${job.state}`}>{job.state}</span>
        </dd>
        <dt>Files</dt>
        <dd>
          {counts.done} of {job.files} done{others.length ? ` (${others.join(", ")})` : ""}
        </dd>
        <dt>Rate</dt>
        <dd>{formatRate(job.rate)}</dd>
        <dt>Time left</dt>
        <dd>{isActive(job) ? (job.eta !== null ? formatDuration(job.eta) : "unknown") : "—"}</dd>
        <dt>Engines used</dt>
        <dd>{engines.length ? engines.join(", ") : "none yet"}</dd>
        <dt>Engine asked</dt>
        <dd>{job.engine}</dd>
        <dt>Destination</dt>
        <dd>
          <code>{job.destination}</code> (below the site's transfer root)
        </dd>
        <dt>Owner</dt>
        <dd>{job.owner}</dd>
        <dt>Submitted</dt>
        <dd>{formatTimestamp(job.created)}</dd>
        <dt>Finished</dt>
        <dd>{formatTimestamp(job.finished)}</dd>
      </dl>
      {job.unknown_sizes ? (
        <p className="hint">
          The catalog gives no size for {plural(job.unknown_sizes, "file")}: the time left is unknown.
        </p>
      ) : null}
    </>
  );
}

function JobActions({ job }: { job: TransferJob }) {
  const [token] = useToken();
  const cancel = useCancelTransfer();
  const retry = useRetryTransfer();
  const [needToken, setNeedToken] = useState(false);
  const retryable = job.counts.failed + job.counts.cancelled > 0 || job.state === "cancelled";
  const run = (action: typeof cancel) => {
    if (!token) {
      setNeedToken(true);
      return;
    }
    setNeedToken(false);
    cancel.reset();
    retry.reset();
    action.mutate({ id: job.id, token });
  };
  return (
    <div className="job-actions">
      <div className="job-buttons">
        <button type="button" className="button" disabled={!isActive(job) || cancel.isPending} onClick={() => run(cancel)}>
          {cancel.isPending ? "Cancelling…" : "Cancel job"}
        </button>
        <button type="button" className="button" disabled={!retryable || retry.isPending} onClick={() => run(retry)}>
          {retry.isPending ? "Retrying…" : "Retry failed and cancelled files"}
        </button>
      </div>
      <TokenField invalid={needToken} />
      {needToken ? <p className="field-error">Give a catalog token: cancelling and retrying need one.</p> : null}
      {cancel.isError ? <RequestProblem error={cancel.error} what="Cancelling the job" /> : null}
      {retry.isError ? <RequestProblem error={retry.error} what="Retrying the job" /> : null}
    </div>
  );
}

function JobFiles({ id }: { id: number }) {
  const [state, setState] = useState<FileState | null>(null);
  const files = useTransferFiles(id, state);
  return (
    <div className="job-files">
      <div className="panel-bar">
        <h3>Files</h3>
        <label>
          Show{" "}
          <select value={state ?? ""} onChange={(e) => setState((e.target.value || null) as FileState | null)}>
            <option value="">all files</option>
            {FILE_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      {files.isPending ? (
        <p role="status" className="hint">
          Loading the files…
        </p>
      ) : null}
      {files.isError ? <RequestProblem error={files.error} what="Listing the job's files" onRetry={() => void files.refetch()} /> : null}
      {files.data && files.data.length === 0 ? <p className="hint">No {state ?? ""} files.</p> : null}
      {files.data && files.data.length > 0 ? (
        <div className="table-wrap">
          <table className="compact transfer-files" aria-label={`Files of job ${id}`}>
            <thead>
              <tr>
                <th scope="col">File</th>
                <th scope="col">State</th>
                <th scope="col">Bytes</th>
                <th scope="col">Attempts</th>
                <th scope="col">Engine</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {files.data.map((f) => (
                <FileRow key={f.name} file={f} />
              ))}
            </tbody>
          </table>
          {files.data.length >= FILES_LIMIT ? (
            <p className="hint">The first {FILES_LIMIT} files are shown; `ndnsci transfer status {id} --files` lists them all.</p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function FileRow({ file }: { file: TransferFile }) {
  const fileName = file.path.split("/").pop() || file.name;
  const waiting = file.state === "pending" && file.retry_at ? `next try at ${formatTimestamp(file.retry_at)}` : "";
  return (
    <tr className={`file-${file.state}`}>
      <th scope="row" title={file.name}>
        {fileName}
      </th>
      <td>{file.state}</td>
      <td>
        {formatBytes(file.bytes_done)}
        {file.size !== null ? ` of ${formatBytes(file.size)}` : ""}
      </td>
      <td>{file.attempts}</td>
      <td>{file.engine ?? "—"}</td>
      <td className="file-error">{[file.error, waiting].filter(Boolean).join("; ") || "—"}</td>
    </tr>
  );
}
