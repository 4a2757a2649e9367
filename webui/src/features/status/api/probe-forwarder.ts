// Is the forwarder's WebSocket face accepting connections? (opened, then closed at once)
import { useQuery } from "@tanstack/react-query";

const POLL_MS = 15_000;

export function probeForwarder(url: string, timeoutMs = 3000): Promise<boolean> {
  return new Promise((resolve) => {
    let socket: WebSocket;
    try {
      socket = new WebSocket(url);
    } catch {
      resolve(false);
      return;
    }
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.onopen = socket.onerror = socket.onclose = null;
      if (ok) socket.close();
      resolve(ok);
    };
    const timer = setTimeout(() => {
      socket.close();
      done(false);
    }, timeoutMs);
    socket.onopen = () => done(true);
    socket.onerror = () => done(false);
    socket.onclose = () => done(false);
  });
}

export function useForwarderProbe(url: string) {
  return useQuery({
    queryKey: ["forwarder", url],
    queryFn: () => probeForwarder(url),
    refetchInterval: POLL_MS,
    retry: false,
    staleTime: 0,
  });
}
