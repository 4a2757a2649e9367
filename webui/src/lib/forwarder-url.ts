// Where the browser reaches the local NDN forwarder: its WebSocket face. Kept per browser.
import { useStoredString } from "./local-store";

export const DEFAULT_FORWARDER = "ws://127.0.0.1:9696";
const KEY = "ndnsci.forwarder";

export function isWebSocketUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "ws:" || url.protocol === "wss:";
  } catch {
    return false;
  }
}

export function useForwarderUrl(): [string, (url: string) => void] {
  const [stored, setStored] = useStoredString(KEY);
  const url = stored && isWebSocketUrl(stored) ? stored : DEFAULT_FORWARDER;
  return [url, (next) => setStored(next === DEFAULT_FORWARDER ? null : next)];
}
