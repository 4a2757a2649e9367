"""A link's rate, measured: UDP datagrams sent as fast as the link takes them, counted at the
far end (``python -m ndnsci.testbed.probe``, run inside the testbed's namespaces).

    python -m ndnsci.testbed.probe recv PORT SECONDS        # prints one JSON line
    python -m ndnsci.testbed.probe send HOST PORT SECONDS [PAYLOAD]

The sender's socket blocks while the link's tbf queue is full, so it sends at the link's rate;
the receiver counts what arrives after a warm-up (the bucket's first burst) and reports the
rate of the bits on the wire (Ethernet, IPv4 and UDP headers included: what tbf counts).
"""

from __future__ import annotations

import json
import socket
import sys
import time

WIRE_OVERHEAD = 14 + 20 + 8  # Ethernet, IPv4, UDP headers
WARM_UP = 0.5
IDLE_END = 1.0


def receive(port: int, seconds: float) -> dict[str, float]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        sock.bind(("0.0.0.0", port))
        print(json.dumps({"listening": port}), flush=True)
        sock.settimeout(seconds + 5)
        buf = bytearray(65536)
        size = sock.recv_into(buf)
        first = time.monotonic()
        sock.settimeout(IDLE_END)
        counted = datagrams = 0
        start = last = first
        measuring = False
        while time.monotonic() - first < seconds + 2:
            try:
                size = sock.recv_into(buf)
            except TimeoutError:
                break
            now = time.monotonic()
            if not measuring and now - first >= WARM_UP:
                measuring, start = True, now  # this datagram closes the warm-up
                continue
            if measuring:
                counted += size + WIRE_OVERHEAD
                datagrams += 1
                last = now
    seconds_measured = last - start
    return {
        "datagrams": datagrams,
        "wire_bytes": counted,
        "seconds": round(seconds_measured, 4),
        "mbps": round(counted * 8 / seconds_measured / 1e6, 3) if seconds_measured > 0 else 0.0,
    }


def send(host: str, port: int, seconds: float, payload: int = 8000) -> None:
    data = bytes(payload)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                sock.sendto(data, (host, port))
            except OSError:  # ENOBUFS: the queue is full for a moment
                time.sleep(0.0005)


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "recv":
        print(json.dumps(receive(int(argv[1]), float(argv[2]))), flush=True)
        return 0
    if len(argv) >= 4 and argv[0] == "send":
        send(argv[1], int(argv[2]), float(argv[3]), int(argv[4]) if len(argv) > 4 else 8000)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
