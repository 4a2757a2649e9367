import { useId, useState } from "react";
import { type QuickLookVariable, quicklookUrl, useQuickLookImage, useQuickLookInfo } from "../api/quicklook";

/** A map of one of the file's variables at a chosen time step and level, its global mean below. */
export function QuickLook({ name }: { name: string }) {
  const info = useQuickLookInfo(name);
  const [chosen, setChosen] = useState<string | null>(null);
  const [time, setTime] = useState(0);
  const [level, setLevel] = useState(0);
  const ids = useId();

  if (info.isPending) return <p className="hint">Loading the quick look (the gateway fetches the file over NDN)…</p>;
  if (info.isError)
    return (
      <p className="quicklook-error" role="alert">
        No quick look: {info.error.message}
      </p>
    );
  const variables = info.data.variables;
  const variable: QuickLookVariable | undefined = variables.find((v) => v.name === (chosen ?? info.data.defaultVariable)) ?? variables[0];
  if (!variable) return <p className="hint">No variable of this file has a map to draw.</p>;
  const t = Math.min(time, variable.times - 1);
  const l = Math.min(level, variable.levels - 1);
  const timeLabel = variable.timeLabels[t] ?? `step ${t}`;
  const levelLabel = variable.levels > 1 ? (variable.levelLabels[l] ?? `level ${l}`) : "";
  const what = `${variable.title} (${variable.name})${variable.units ? ` in ${variable.units}` : ""}`;

  return (
    <div className="quicklook">
      <div className="quicklook-controls">
        <label htmlFor={`${ids}-variable`}>Variable</label>{" "}
        <select
          id={`${ids}-variable`}
          value={variable.name}
          onChange={(e) => {
            setChosen(e.target.value);
            setTime(0);
            setLevel(0);
          }}
        >
          {variables.map((v) => (
            <option key={v.name} value={v.name}>
              {v.name}
            </option>
          ))}
        </select>{" "}
        {variable.times > 1 ? (
          <>
            <label htmlFor={`${ids}-time`}>Time step</label>{" "}
            <input
              id={`${ids}-time`}
              type="range"
              min={0}
              max={variable.times - 1}
              value={t}
              aria-valuetext={timeLabel}
              onChange={(e) => setTime(Number(e.target.value))}
            />{" "}
            <output htmlFor={`${ids}-time`}>{timeLabel}</output>{" "}
          </>
        ) : null}
        {variable.levels > 1 ? (
          <>
            <label htmlFor={`${ids}-level`}>Level</label>{" "}
            <select id={`${ids}-level`} value={l} onChange={(e) => setLevel(Number(e.target.value))}>
              {Array.from({ length: variable.levels }, (_, i) => (
                <option key={i} value={i}>
                  {variable.levelLabels[i] ?? `level ${i}`}
                </option>
              ))}
            </select>
          </>
        ) : null}
      </div>
      <Picture
        url={quicklookUrl(name, "", { variable: variable.name, time: t, level: l })}
        alt={`Map of ${what} at ${timeLabel}${levelLabel ? `, ${levelLabel}` : ""}`}
        what="map"
      />
      <Picture
        url={quicklookUrl(name, "/timeseries.png", { variable: variable.name, level: l })}
        alt={`Time series of the area-weighted global mean of ${what}${levelLabel ? ` at ${levelLabel}` : ""}, one point per time step`}
        what="time series"
      />
    </div>
  );
}

function Picture({ url, alt, what }: { url: string; alt: string; what: string }) {
  const image = useQuickLookImage(url);
  if (image.isPending) return <p className="hint quicklook-loading">Drawing the {what}…</p>;
  if (image.isError)
    return (
      <p className="quicklook-error" role="alert">
        The {what} cannot be drawn: {image.error.message}
      </p>
    );
  return <img className="quicklook-image" src={image.data} alt={alt} />;
}
