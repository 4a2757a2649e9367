"""Window control and RTT estimation for the segment pipeline.

The window counts Interests in flight. Loss signals are timeouts, Nack(Congestion) and NDNLPv2
congestion marks; like ndncatchunks, a window decreases at most once per RTT, so a burst of
losses from one congestion event counts once.
"""

from __future__ import annotations

import math

MIN_WINDOW = 2.0


class RttEstimator:
    """RFC 6298 smoothed RTT and retransmission timeout, with exponential backoff."""

    def __init__(self, min_rto: float = 0.2, max_rto: float = 4.0, initial: float = 1.0) -> None:
        self.srtt: float | None = None
        self.rttvar = 0.0
        self.min_rto = min_rto
        self.max_rto = max_rto
        self.rto = initial
        self.samples = 0

    def sample(self, rtt: float) -> None:
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt
        self.samples += 1
        self.rto = min(self.max_rto, max(self.min_rto, self.srtt + 4 * self.rttvar))

    def backoff(self) -> None:
        self.rto = min(self.max_rto, self.rto * 2)

    @property
    def smoothed(self) -> float:
        return self.srtt if self.srtt is not None else self.rto


class Fixed:
    """A constant window (``ndnd cat`` uses 100)."""

    name = "fixed"

    def __init__(self, window: float, max_window: float | None = None) -> None:
        self.window = float(window)

    def on_ack(self, now: float) -> None:
        pass

    def on_loss(self, now: float, rtt: float) -> bool:
        return False


class Aimd(Fixed):
    """Slow start, then +1 per window of acks; halve on a loss event."""

    name = "aimd"
    beta = 0.5

    def __init__(self, window: float, max_window: float | None = None) -> None:
        super().__init__(window)
        self.max_window = float(max_window or 4096)
        self.ssthresh = math.inf
        self._last_decrease = -math.inf

    def on_ack(self, now: float) -> None:
        if self.window < self.ssthresh:
            self.window += 1.0
        else:
            self.window += 1.0 / self.window
        self.window = min(self.window, self.max_window)

    def on_loss(self, now: float, rtt: float) -> bool:
        """Returns True when the window was decreased (once per RTT)."""
        if now - self._last_decrease < rtt:
            return False
        self._last_decrease = now
        self.ssthresh = max(MIN_WINDOW, self.window * self.beta)
        self.window = self.ssthresh
        return True


class Cubic(Aimd):
    """CUBIC (RFC 9438) window growth in Interests, time in seconds."""

    name = "cubic"
    beta = 0.7
    c = 0.4

    def __init__(self, window: float, max_window: float | None = None) -> None:
        super().__init__(window, max_window)
        self.w_max = 0.0
        self.k = 0.0
        self._epoch: float | None = None

    def on_ack(self, now: float) -> None:
        if self.window < self.ssthresh:
            super().on_ack(now)
            return
        if self._epoch is None:
            self._epoch = now
            self.w_max = max(self.w_max, self.window)
            self.k = ((self.w_max * (1 - self.beta)) / self.c) ** (1 / 3)
        t = now - self._epoch
        target = self.c * (t - self.k) ** 3 + self.w_max
        if target > self.window:
            self.window += min(target - self.window, self.window) / self.window
        else:
            self.window += 0.01 / self.window  # TCP-friendly floor: keep probing slowly
        self.window = min(self.window, self.max_window)

    def on_loss(self, now: float, rtt: float) -> bool:
        previous = self.window
        if not super().on_loss(now, rtt):
            return False
        self.w_max = previous
        self._epoch = None
        return True


CONTROLLERS: dict[str, type[Fixed]] = {"fixed": Fixed, "aimd": Aimd, "cubic": Cubic}


def make(name: str, window: int, max_window: int | None = None) -> Fixed:
    try:
        return CONTROLLERS[name](window, max_window)
    except KeyError:
        raise ValueError(f"unknown congestion control {name!r}: {', '.join(CONTROLLERS)}") from None
