"""LocalStack leaves nothing running behind, even when the process that started it is killed."""

from __future__ import annotations

import socket
import subprocess
import sys

from support import wait_for

from ndnsci.ndn import forwarder

CODE = """
import os, signal, sys, ndnsci
stack = ndnsci.LocalStack(sys.argv[1], port=0, workdir=sys.argv[2]).start()
print(stack.catalog_url.rsplit(":", 1)[1], flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no stop(): as a crashed kernel
"""


def test_a_killed_owner_takes_its_stack_along(fw, sample_dir, tmp_path):
    workdir = tmp_path / "w"
    out = subprocess.run(
        [sys.executable, "-c", CODE, str(sample_dir), str(workdir)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    port = int(out.stdout.split()[0])

    def all_gone() -> bool:
        with socket.socket() as s:
            return s.connect_ex(("127.0.0.1", port)) != 0 and not forwarder.is_running(
                workdir / "fw" / "nfd.sock", 0.5
            )

    wait_for(all_gone, 15, "the catalog and the forwarder to die with their owner", every=0.2)
