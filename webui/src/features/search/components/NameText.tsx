import { Fragment } from "react";

/** An NDN name that wraps at its "/" separators instead of overflowing. */
export function NameText({ name }: { name: string }) {
  const parts = name.split("/").slice(1);
  return (
    <span className="ndn-name" translate="no">
      {parts.map((part, i) => (
        <Fragment key={i}>
          /<wbr />
          {part}
        </Fragment>
      ))}
    </span>
  );
}

/** A file name that wraps after its "_" and "-" separators. */
export function FileNameText({ name }: { name: string }) {
  const parts = name.split(/(?<=[_-])/);
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 ? <wbr /> : null}
        </Fragment>
      ))}
    </>
  );
}
