// The catalog token that submitting, cancelling and retrying a transfer need: kept in
// sessionStorage (this tab, until it closes), never in localStorage, never in the URL.
import { useSessionString } from "@/lib/session-store";

export const TOKEN_KEY = "ndnsci.token";

export function useToken(): [string, (token: string) => void] {
  const [token, setToken] = useSessionString(TOKEN_KEY);
  return [token ?? "", (next: string) => setToken(next.trim() ? next.trim() : null)];
}

export function bearer(token: string): Record<string, string> {
  return { Authorization: `Bearer ${token}` };
}
