"""The start-up budget of ``ndnsci fetch NAME`` (DEVELOPERS.md, "Start-up budget").

A fetch by name must not import what it does not need before its first byte: the catalog client,
pycryptodome, asyncio, ssl, the thread pool, the translators' registry, json. Checked on a real
fetch: the modules the process holds when the transfer starts (``Transfer.run``, before its
first segment is written: "before the first byte") and when it exits. Nothing in
OFF_THE_FETCH_PATH may be imported at all, nothing but AFTER_THE_FIRST_BYTE after the transfer
started. ORDINARY is what the path may import because it is written as ordinary Python (issue
24: the goal became < 60 ms for it). The time itself is measured by ``bench/transfer.py`` (time
to first byte), and the instructions by callgrind, not here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import Serve

# what the fetch path may not import, with the reason it is kept off
OFF_THE_FETCH_PATH = {
    "ndnsci.sdk.client": "the catalog client (~18 ms): a search result is recognised without it",
    "ndnsci.sdk.publish": "the publish batches, imported by the catalog client",
    "Cryptodome": "pycryptodome (~17 ms): ndnsci/ndn/ed25519.py verifies the metadata",
    "concurrent.futures": "the thread pool (and logging): one file runs in one thread",
    "logging": "imported by concurrent.futures",
    "queue": "imported by concurrent.futures",
    "asyncio": "the asyncio API of the SDK",
    "ssl": "the catalog's HTTPS",
    "httpx": "the catalog client's HTTP library",
    "rich": "progress bars: none with -q or when stderr is not a terminal",
    "importlib.metadata": "entry points: the built-in transport and translators are known",
    "platformdirs": "the settings' folders: a fetch reads its three values alone",
    "shutil": "argparse's terminal width (with zlib, bz2, lzma): cli._common.formatter",
    "hashlib": "OpenSSL (~11 M instructions): a small file's digests are ndnsci.base.hashes's",
    "socket": "its enums and selectors (~12 M instructions): the face uses _socket's socket",
    "selectors": "imported by socket",
    "pathlib": "the engine's paths are strings spelled as pathlib would (_fetch._joined)",
    "urllib.parse": "with ipaddress (~10 M instructions): names and unix:// URIs parsed alone",
    "ipaddress": "imported by urllib.parse",
    "argparse": "with gettext and locale (~16 M instructions): cli.fetch.parse_plain reads it",
    "locale": "imported by argparse's gettext",
    "ndnsci_translators._core": "the translators' types: the data plane needs translators.names",
    "ndnsci_translators.registry": "the translators' registry (entry points)",
    "json": "the journal's lines are written by sdk.fetch._line, the journal read only when a "
    "file is already there, the report's JSON only with --json/--report",
}
# what the fetch path may import, though it could do without, with the reason it is allowed
ORDINARY = {
    "typing": "the records are NamedTuples, the contracts (Transport, Progress) Protocols",
    "dataclasses": "the mutable records: Outcome, FetchReport, Received, the consumer's Target",
    "inspect": "imported by dataclasses",
    "re": "imported by typing",
    "enum": "imported by re (RegexFlag)",
    "copyreg": "imported by re",
}
# what the fetch may import only once its transfer is under way (after its first byte)
AFTER_THE_FIRST_BYTE = {
    "_json": "json's C part (built in): the journal's line, once the file is verified",
}

# run the command as `python -m ndnsci` does, then write the modules the process held when the
# transfer started (before any segment is written) and the ones it imported afterwards
PROBE = """
import atexit, runpy, sys
out = sys.argv.pop(1)
before = []
from ndnsci.ndn import consumer
run = consumer.Transfer.run
def starting(self, *args, **kwargs):
    before.extend([] if before else sys.modules)
    return run(self, *args, **kwargs)
consumer.Transfer.run = starting
def write():
    after = [m for m in sys.modules if m not in before]
    open(out, "w").write(" ".join(before) + "\\n" + " ".join(after))
atexit.register(write)
sys.argv[0] = "ndnsci"
runpy.run_module("ndnsci", run_name="__main__", alter_sys=True)
"""


def test_a_fetch_by_name_stays_within_its_import_budget(serve: Serve, tmp_path: Path) -> None:
    (serve.root / "small.nc").write_bytes(b"netCDF-ish " * 3000)
    serve.start()
    listing = tmp_path / "modules.txt"
    out = tmp_path / "out"
    # no catalog known (a stack of this session may have set one): with one, a name is looked
    # up there first (ndnsci/sdk/fetch.py looked_up), and the catalog client is its cost
    env = {k: v for k, v in os.environ.items() if k != "NDNSCI_CATALOG"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(listing), "fetch", f"{serve.prefix}/small.nc",
         "-o", str(out), "-q"],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (out / "small.nc").read_bytes() == (serve.root / "small.nc").read_bytes()
    assert "signer ed25519:" in done.stdout  # the metadata's signature was checked
    before_text, after_text = listing.read_text().split("\n")
    before, after = set(before_text.split()), set(after_text.split())
    assert "ndnsci.ndn.consumer" in before and "ndnsci.ndn.ed25519" in before
    loaded = before | after
    imported = {
        module: why
        for module, why in OFF_THE_FETCH_PATH.items()
        if module in loaded or any(m.startswith(module + ".") for m in loaded)
    }
    assert imported == {}
    assert not set(ORDINARY) & set(OFF_THE_FETCH_PATH)
    # once the transfer is under way, only what is listed (the probe itself imported the
    # consumer before the command did: the order differs, not the modules)
    assert after - set(AFTER_THE_FIRST_BYTE) == set()
