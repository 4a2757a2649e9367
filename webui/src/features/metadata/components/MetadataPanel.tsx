import { type ReactNode, type RefObject, useEffect, useRef } from "react";
import { CopyButton } from "@/components/ui/CopyButton";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { SlowNotice } from "@/components/ui/SlowNotice";
import { dataUrl } from "@/lib/data-url";
import { datePart, formatBytes, formatCount } from "@/lib/format";
import { useFile } from "../api/get-file";
import type { FileDetails } from "../types";

interface MetadataPanelProps {
  name: string;
  onClose: () => void;
  /** e.g. an "Add to cart" button for this file */
  actions?: (file: FileDetails) => ReactNode;
}

/** Everything known about one file: the region named "Metadata". */
export function MetadataPanel({ name, onClose, actions }: MetadataPanelProps) {
  const file = useFile(name);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (file.data) heading.current?.focus({ preventScroll: true });
  }, [file.data]);

  return (
    <section className="metadata" aria-label="Metadata">
      <div className="panel-bar">
        <h2 className="panel-heading">Metadata</h2>
        <button type="button" className="button button-small" onClick={onClose} aria-label="Close metadata">
          Close ✕
        </button>
      </div>
      <SlowNotice active={file.isFetching} what="file record" />
      {file.isPending ? <p className="hint">Loading {name}…</p> : null}
      {file.isError ? <RequestProblem error={file.error} what="Reading this file's record" onRetry={() => void file.refetch()} /> : null}
      {file.data ? <Details file={file.data} headingRef={heading} actions={actions} /> : null}
    </section>
  );
}

function Details({
  file,
  headingRef,
  actions,
}: {
  file: FileDetails;
  headingRef: RefObject<HTMLHeadingElement | null>;
  actions?: (file: FileDetails) => ReactNode;
}) {
  return (
    <div className="metadata-body">
      <h3 className="file-title" tabIndex={-1} ref={headingRef}>
        {file.fileName}
      </h3>
      <p className="ndn-line">
        <code className="ndn-name">{file.name}</code> <CopyButton text={file.name} label="Copy name" />
      </p>
      <div className="metadata-actions">
        {actions ? actions(file) : null}{" "}
        <a
          href={dataUrl(file.name)}
          download={file.fileName}
          className="button button-small"
          title="Over HTTP from the catalog server, which fetches it over NDN (no NDN needed here)"
        >
          Download over HTTP
        </a>
      </div>

      <dl className="facts">
        <dt>Original file name</dt>
        <dd>
          {file.original}
          {file.original !== file.fileName ? <span className="muted"> (published as {file.fileName})</span> : null}
        </dd>
        {file.originalPath ? (
          <>
            <dt>Original path</dt>
            <dd>
              <code className="original-path">{file.originalPath}</code>
            </dd>
          </>
        ) : null}
        <dt>Size</dt>
        <dd>
          {formatBytes(file.size)}
          {file.size !== null ? <span className="muted"> ({formatCount(file.size)} bytes)</span> : null}
        </dd>
        <dt>SHA-256</dt>
        <dd>
          {file.sha256 ? (
            <>
              <code className="checksum">{file.sha256}</code> <CopyButton text={file.sha256} label="Copy" />
            </>
          ) : (
            "not computed (published with --no-checksum)"
          )}
        </dd>
        <dt>Scheme</dt>
        <dd>{file.scheme}</dd>
        {file.format ? (
          <>
            <dt>Format</dt>
            <dd>{file.format}</dd>
          </>
        ) : null}
        <dt>Published</dt>
        <dd>{file.publishedAt.replace("T", " ").replace(/\..*$/, "")}</dd>
      </dl>

      <h4>Time coverage</h4>
      {file.time ? (
        <dl className="facts">
          <dt>Period</dt>
          <dd>
            {datePart(file.time.start) ?? "?"} – {datePart(file.time.end) ?? "?"}
          </dd>
          <dt>Calendar</dt>
          <dd>{file.time.calendar ?? "not stated"}</dd>
          {file.time.units ? (
            <>
              <dt>Units</dt>
              <dd>{file.time.units}</dd>
            </>
          ) : null}
          {file.time.steps !== null ? (
            <>
              <dt>Time steps</dt>
              <dd>
                {formatCount(file.time.steps)}
                {file.time.first ? (
                  <span className="muted">
                    {" "}
                    (first {file.time.first}, last {file.time.last ?? "?"})
                  </span>
                ) : null}
              </dd>
            </>
          ) : null}
        </dl>
      ) : (
        <p className="hint">No time axis (a fixed field, or the header was not read).</p>
      )}

      {file.spatial ? (
        <>
          <h4>Spatial extent</h4>
          <p>
            latitude {file.spatial.south}° to {file.spatial.north}°, longitude {file.spatial.west}° to {file.spatial.east}°
          </p>
        </>
      ) : null}

      <h4>Corrections applied to the name</h4>
      {file.corrections.length ? (
        <ul className="corrections">
          {file.corrections.map((c, i) => (
            <li key={i}>
              <code>{c.rule}</code> {c.message}
            </li>
          ))}
        </ul>
      ) : (
        <p className="hint">None: the name was read as published, nothing was rewritten.</p>
      )}

      <h4>Facets</h4>
      <dl className="facts facets-list">
        {file.facets.map(([key, value]) => (
          <div key={key} className="fact">
            <dt>{key}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>

      {file.nameOnly ? (
        <Notice tone="info" title="Published by name only">
          <p>The catalog has this file's name and facets but its header was not read, so there are no variables or attributes.</p>
        </Notice>
      ) : null}

      {file.variables.length ? (
        <>
          <h4>Variables</h4>
          <table className="compact" aria-label="Variables">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Units</th>
                <th scope="col">Long name</th>
                <th scope="col">Dimensions</th>
              </tr>
            </thead>
            <tbody>
              {file.variables.map((v) => (
                <tr key={v.name}>
                  <th scope="row">
                    <code>{v.name}</code>
                  </th>
                  <td>{v.units ?? "—"}</td>
                  <td>{v.longName ?? v.standardName ?? "—"}</td>
                  <td>
                    {v.dimensions.length ? `(${v.dimensions.join(", ")})` : "scalar"}
                    {v.dtype ? <span className="muted"> {v.dtype}</span> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}

      {file.dimensions.length ? (
        <>
          <h4>Dimensions</h4>
          <table className="compact" aria-label="Dimensions">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Size</th>
              </tr>
            </thead>
            <tbody>
              {file.dimensions.map((d) => (
                <tr key={d.name}>
                  <th scope="row">
                    <code>{d.name}</code>
                  </th>
                  <td>
                    {d.size === null ? "?" : formatCount(d.size)}
                    {d.unlimited ? " (unlimited)" : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}

      {file.globalAttributes.length ? (
        <>
          <h4>Global attributes</h4>
          <dl className="attributes" aria-label="Global attributes">
            {file.globalAttributes.map(([key, value]) => (
              <div key={key} className="fact">
                <dt>{key}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        </>
      ) : null}

      {file.warnings.length ? (
        <>
          <h4>Extractor warnings</h4>
          <ul>
            {file.warnings.map((w, i) => (
              <li key={i}>{w}</li>
            ))}
          </ul>
        </>
      ) : null}

      {file.history.length ? (
        <>
          <h4>Earlier versions</h4>
          <ul className="history">
            {file.history.map((h) => (
              <li key={h.seq}>
                #{h.seq} {h.version ?? "unversioned"}, replaced {h.replacedAt.replace("T", " ").replace(/\..*$/, "")},{" "}
                {formatBytes(h.size)}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
