"""gdb script (``gdb -x``, gdb's Python), for
``test_native_faults.py::test_the_forwarder_outlives_a_memif_peer_that_dies_under_a_burst``.

In non-stop mode, so every other thread of the forwarder keeps running: holds the first thread
that reaches ``eth_memif_rx`` past its CONNECTED check, where it reads the peer's ring, kills
the peers (their pids in NDNSCI_GDB_PEERS), waits NDNSCI_GDB_SETTLE seconds for the forwarder's
control thread to see the peers go and disconnect them, then lets the held thread go on with its
burst. Prints HELD, RESUMED and, if it comes, the signal that stopped a thread (SIGSEGV: the
ring was unmapped under the burst). Detaches after NDNSCI_GDB_SECONDS.
"""

import contextlib
import os
import signal
import threading
import time

import gdb  # type: ignore[import-not-found]

PID = int(os.environ["NDNSCI_GDB_PID"])
PEERS = [int(p) for p in os.environ["NDNSCI_GDB_PEERS"].split(",")]
SETTLE = float(os.environ.get("NDNSCI_GDB_SETTLE", "3"))
SECONDS = float(os.environ.get("NDNSCI_GDB_SECONDS", "20"))
# where eth_memif_rx reads the ring just after its CONNECTED check (the pinned DPDK's
# drivers/net/memif/rte_eth_memif.c; the test fails, saying so, if no thread stops there)
LOCATION = os.environ.get("NDNSCI_GDB_LOCATION", "rte_eth_memif.c:327")

held: list[int] = []


def on_stop(event: gdb.StopEvent) -> None:
    if not isinstance(event, gdb.BreakpointEvent):
        sig = getattr(event, "stop_signal", None)
        if sig is not None:
            print(f"SIGNAL {sig}", flush=True)
        return
    if held:
        return
    thread = gdb.selected_thread().num
    held.append(thread)
    print(f"HELD thread {thread} in {gdb.selected_frame().name()}", flush=True)
    for breakpoint in gdb.breakpoints():
        breakpoint.delete()

    def later() -> None:
        for pid in PEERS:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(SETTLE)
        gdb.post_event(resume)

    threading.Thread(target=later, daemon=True).start()


def resume() -> None:
    gdb.execute(f"thread {held[0]}")
    gdb.execute("continue &")
    print("RESUMED", flush=True)


def finish() -> None:
    gdb.execute("detach")
    gdb.execute("quit")


def arm() -> None:
    gdb.events.stop.connect(on_stop)
    gdb.execute(f"break {LOCATION}")
    gdb.execute("continue -a &")


gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set non-stop on")
gdb.execute("handle SIGURG SIGPIPE SIGUSR1 SIGUSR2 nostop noprint pass")
gdb.execute(f"attach {PID}")
# attach stops every thread, and gdb reports them one by one from its event loop, which runs
# once this script has ended: arm the breakpoint and let them all go once that is done
threading.Timer(3, lambda: gdb.post_event(arm)).start()
threading.Timer(SECONDS, lambda: gdb.post_event(finish)).start()
