import { useEffect, useState } from "react";
import { useDelayedFlag } from "@/lib/use-delayed-flag";

/** Shown while a request has been running for more than `afterMs`: the page is not frozen. */
export function SlowNotice({ active, what, afterMs = 1500 }: { active: boolean; what: string; afterMs?: number }) {
  const slow = useDelayedFlag(active, afterMs);
  const [seconds, setSeconds] = useState(0);
  useEffect(() => {
    if (!slow) return;
    const started = Date.now() - afterMs;
    setSeconds(Math.round(afterMs / 1000));
    const timer = setInterval(() => setSeconds(Math.round((Date.now() - started) / 1000)), 1000);
    return () => clearInterval(timer);
  }, [slow, afterMs]);
  if (!slow) return null;
  return (
    <p className="slow" role="status">
      <span className="spinner" aria-hidden="true" /> Still waiting for the catalog ({what}, {seconds} s)… a large
      catalog or a busy server can take a while; the page stays usable.
    </p>
  );
}
