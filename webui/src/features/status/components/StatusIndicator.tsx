import { useForwarderUrl } from "@/lib/forwarder-url";
import { formatCount } from "@/lib/format";
import { useCatalogHealth, useCatalogStats } from "../api/get-health";
import { useForwarderProbe } from "../api/probe-forwarder";

type Light = "ok" | "down" | "unknown";

function Indicator({ light, text, title, onCheck }: { light: Light; text: string; title: string; onCheck: () => void }) {
  return (
    <button type="button" className={`status status-${light}`} title={`${title} (click to check again)`} onClick={onCheck}>
      <span className="status-dot" aria-hidden="true" />
      {text}
    </button>
  );
}

/** Whether the catalog and the local forwarder answer, checked every 15 s. */
export function StatusIndicator() {
  const health = useCatalogHealth();
  const stats = useCatalogStats();
  const [forwarder] = useForwarderUrl();
  const probe = useForwarderProbe(forwarder);

  const catalogLight: Light = health.isSuccess ? "ok" : health.isError ? "down" : "unknown";
  const catalogText =
    catalogLight === "ok"
      ? `Catalog reachable${stats.data ? ` · ${formatCount(stats.data.files)} files` : ""}`
      : catalogLight === "down"
        ? "Catalog unreachable"
        : "Catalog: checking…";
  const forwarderLight: Light = probe.data === true ? "ok" : probe.data === false ? "down" : "unknown";
  const forwarderText =
    forwarderLight === "ok" ? "Forwarder reachable" : forwarderLight === "down" ? "Forwarder unreachable" : "Forwarder: checking…";

  return (
    <div className="status-bar" role="status" aria-label="Service status">
      <Indicator
        light={catalogLight}
        text={catalogText}
        title={health.isError ? `The catalog API does not answer: ${(health.error as Error).message}` : "The catalog API at /api/v1"}
        onCheck={() => {
          void health.refetch();
          void stats.refetch();
        }}
      />
      <Indicator
        light={forwarderLight}
        text={forwarderText}
        title={
          forwarderLight === "down"
            ? `No NDN forwarder at ${forwarder}: in-browser fetch needs one (ndnsci forwarder start); manifests still work`
            : `NDN forwarder WebSocket face at ${forwarder}`
        }
        onCheck={() => void probe.refetch()}
      />
    </div>
  );
}
