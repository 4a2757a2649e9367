import { type ReactNode, type RefObject, useEffect, useRef } from "react";
import { CopyButton } from "@/components/ui/CopyButton";
import { Notice } from "@/components/ui/Notice";
import { RequestProblem } from "@/components/ui/RequestProblem";
import { SlowNotice } from "@/components/ui/SlowNotice";
import { dataUrl } from "@/lib/data-url";
import { datePart, formatBytes, formatCount } from "@/lib/format";
import { QuickLook } from "./QuickLook";
import { useFile } from "../api/get-file";
import type { FileDetails } from "../types";
import { DataTable } from "./DataTable";
import { FactList } from "./FactList";

/** "2024-05-01T10:20:30.123456+00:00" as "2024-05-01 10:20:30": to the second is enough */
const timestamp = (iso: string) => iso.replace("T", " ").replace(/\..*$/, "");

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

/** A file the gateway can draw: netCDF by its format or its name, with a header read. */
function isNetcdf(file: FileDetails): boolean {
  return !file.nameOnly && (/netcdf/i.test(file.format ?? "") || /\.nc$/i.test(file.fileName));
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

      <FactList
        facts={[
          [
            "Original file name",
            <>
              {file.original}
              {file.original !== file.fileName ? <span className="muted"> (published as {file.fileName})</span> : null}
            </>,
          ],
          file.originalPath ? ["Original path", <code className="original-path">{file.originalPath}</code>] : null,
          [
            "Size",
            <>
              {formatBytes(file.size)}
              {file.size !== null ? <span className="muted"> ({formatCount(file.size)} bytes)</span> : null}
            </>,
          ],
          [
            "SHA-256",
            file.sha256 ? (
              <>
                <code className="checksum">{file.sha256}</code> <CopyButton text={file.sha256} label="Copy SHA-256" />
              </>
            ) : (
              "not computed (published with --no-checksum)"
            ),
          ],
          ["Scheme", file.scheme],
          file.format ? ["Format", file.format] : null,
          ["Published", timestamp(file.publishedAt)],
          file.site ? ["Site", <>{file.site} <span className="muted">(the federation site that published it)</span></>] : null,
          file.xrootdUrl
            ? [
                "XRootD",
                <>
                  <code className="xrootd-url">{file.xrootdUrl}</code> <CopyButton text={file.xrootdUrl} label="Copy XRootD URL" />{" "}
                  <span className="muted">(xrdcp reads it over NDN)</span>
                </>,
              ]
            : null,
        ]}
      />

      {isNetcdf(file) ? (
        <>
          <h4>Quick look</h4>
          <QuickLook name={file.name} />
        </>
      ) : null}

      <h4>Time coverage</h4>
      {file.time ? (
        <FactList
          facts={[
            ["Period", `${datePart(file.time.start) ?? "?"} – ${datePart(file.time.end) ?? "?"}`],
            ["Calendar", file.time.calendar ?? "not stated"],
            file.time.units ? ["Units", file.time.units] : null,
            file.time.steps !== null
              ? [
                  "Time steps",
                  <>
                    {formatCount(file.time.steps)}
                    {file.time.first ? (
                      <span className="muted">
                        {" "}
                        (first {file.time.first}, last {file.time.last ?? "?"})
                      </span>
                    ) : null}
                  </>,
                ]
              : null,
          ]}
        />
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
      <FactList facts={file.facets} />

      {file.nameOnly ? (
        <Notice tone="info" title="Published by name only">
          <p>The catalog has this file's name and facets but its header was not read, so there are no variables or attributes.</p>
        </Notice>
      ) : null}

      {file.variables.length ? (
        <>
          <h4>Variables</h4>
          <DataTable
            label="Variables"
            columns={["Name", "Units", "Long name", "Dimensions"]}
            rows={file.variables}
            rowKey={(v) => v.name}
            cells={(v) => [
              <code>{v.name}</code>,
              v.units ?? "—",
              v.longName ?? v.standardName ?? "—",
              <>
                {v.dimensions.length ? `(${v.dimensions.join(", ")})` : "scalar"}
                {v.dtype ? <span className="muted"> {v.dtype}</span> : null}
              </>,
            ]}
          />
        </>
      ) : null}

      {file.dimensions.length ? (
        <>
          <h4>Dimensions</h4>
          <DataTable
            label="Dimensions"
            columns={["Name", "Size"]}
            rows={file.dimensions}
            rowKey={(d) => d.name}
            cells={(d) => [
              <code>{d.name}</code>,
              `${d.size === null ? "?" : formatCount(d.size)}${d.unlimited ? " (unlimited)" : ""}`,
            ]}
          />
        </>
      ) : null}

      {file.globalAttributes.length ? (
        <>
          <h4>Global attributes</h4>
          <FactList facts={file.globalAttributes} variant="attributes" label="Global attributes" />
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
                #{h.seq} {h.version ?? "unversioned"}, replaced {timestamp(h.replacedAt)},{" "}
                {formatBytes(h.size)}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </div>
  );
}
