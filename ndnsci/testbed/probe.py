"""A link's rate, measured: UDP datagrams sent as fast as the link takes them, counted at the
far end (``python -m ndnsci.testbed.probe``, run inside the testbed's namespaces).

    python -m ndnsci.testbed.probe recv PORT SECONDS        # prints one JSON line
    python -m ndnsci.testbed.probe send HOST PORT SECONDS [PAYLOAD]

The sender's socket blocks while the link's tbf queue is full, so it sends at the link's rate;
the receiver counts what arrives after a warm-up (the bucket's first burst), timed by the
kernel's receive timestamps, and reports the rate of the bits on the wire (Ethernet, IPv4 and
UDP headers included: what tbf counts).
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import time

WIRE_OVERHEAD = 14 + 20 + 8  # Ethernet, IPv4, UDP headers
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)  # Linux; typeshed lacks it
WARM_UP = 0.5
IDLE_END = 1.0


def receive(port: int, seconds: float) -> dict[str, float]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        # arrival times from the kernel: a receiver that reads late must not bend the rate
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.bind(("0.0.0.0", port))
        print(json.dumps({"listening": port}), flush=True)
        sock.settimeout(seconds + 5)
        buf = bytearray(65536)
        _, first = _arrival(sock, buf)
        sock.settimeout(IDLE_END)
        counted = datagrams = 0
        start = last = 0.0
        while True:
            try:
                size, arrived = _arrival(sock, buf)
            except TimeoutError:
                break
            if arrived - first > seconds + 2:
                break
            if not start:
                if arrived - first >= WARM_UP:
                    start = last = arrived  # this datagram closes the warm-up
                continue
            counted += size + WIRE_OVERHEAD
            datagrams += 1
            last = arrived
    seconds_measured = last - start
    return {
        "datagrams": datagrams,
        "wire_bytes": counted,
        "seconds": round(seconds_measured, 4),
        "mbps": round(counted * 8 / seconds_measured / 1e6, 3) if seconds_measured > 0 else 0.0,
    }


def _arrival(sock: socket.socket, buf: bytearray) -> tuple[int, float]:
    """One datagram: its size and the kernel's receive time (seconds)."""
    size, ancillary, _, _ = sock.recvmsg_into([buf], 64)
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", data[:16])
            return size, sec + nsec / 1e9
    return size, time.time()


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
