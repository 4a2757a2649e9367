"""A typed client of NDN-DPDK's GraphQL management API (``ndndpdk-svc --gqlserver``).

Every operation ndnsci sends is one of the documents in :data:`DOCUMENTS`; the tests validate
each against the introspection of the running service (``tests/native/data/``), so a document
that NDN-DPDK would refuse fails the suite, not a user. Arguments NDN-DPDK takes as ``JSON``
(activation parameters, face locators) are plain dicts built by :mod:`ndnsci.native.layout`.

The API listens on loopback without authentication and its service runs as root: whoever can
reach it can make the fetcher write any file. Keep it on 127.0.0.1 (``layout.GQL_HOST``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ndnsci.errors import NativePlaneError

VERSION = """
query Version {
  version { version commit date dirty }
}
"""

ACTIVATE = """
mutation Activate($forwarder: JSON, $trafficgen: JSON, $fileserver: JSON) {
  activate(forwarder: $forwarder, trafficgen: $trafficgen, fileserver: $fileserver)
}
"""

SHUTDOWN = """
mutation Shutdown {
  shutdown(restart: false)
}
"""

CREATE_ETH_PORT = """
mutation CreateEthPort($driver: NetifDriverKind!, $netif: String, $mtu: Int) {
  createEthPort(driver: $driver, netif: $netif, mtu: $mtu) { id name macAddr mtu }
}
"""

CREATE_FACE = """
mutation CreateFace($locator: JSON!) {
  createFace(locator: $locator) { id nid locator }
}
"""

INSERT_FIB = """
mutation InsertFibEntry($name: Name!, $nexthops: [ID!]!) {
  insertFibEntry(name: $name, nexthops: $nexthops) { id }
}
"""

DELETE = """
mutation Delete($id: ID!) {
  delete(id: $id)
}
"""

FACES = """
query Faces {
  faces {
    id nid isDown locator
    counters { rxFrames rxInterests rxData rxNacks txFrames txInterests txData txNacks
               rxDecodeErrs rxReassDrops txDropped txAllocErrs }
    trafficgen {
      id
      fetcher { id }
      fileServer { id mounts counters { reqRead reqMetadata reqLs fdNew fdNotFound cqeFail } }
    }
  }
}
"""

FIB = """
query Fib {
  fib { id name nexthops { id } }
}
"""

WORKERS = """
query Workers {
  workers { id nid role numaSocket isBusy }
}
"""

START_FETCHER = """
mutation StartFetcher($face: JSON!, $fetcher: FetcherConfigInput) {
  startTrafficGen(face: $face, fetcher: $fetcher) { id fetcher { id } }
}
"""

FETCH = """
mutation Fetch($fetcher: ID!, $task: FetchTaskDefInput!) {
  fetch(fetcher: $fetcher, task: $task) { id }
}
"""

FETCH_COUNTERS = """
query FetchCounters($id: ID!) {
  node(id: $id) {
    ... on FetchTaskContext { counters }
  }
}
"""

# Every document the client sends: the tests validate them against the schema.
DOCUMENTS = {
    "Version": VERSION,
    "Activate": ACTIVATE,
    "Shutdown": SHUTDOWN,
    "CreateEthPort": CREATE_ETH_PORT,
    "CreateFace": CREATE_FACE,
    "InsertFibEntry": INSERT_FIB,
    "Delete": DELETE,
    "Faces": FACES,
    "Fib": FIB,
    "Workers": WORKERS,
    "StartFetcher": START_FETCHER,
    "Fetch": FETCH,
    "FetchCounters": FETCH_COUNTERS,
}


class GraphQLError(NativePlaneError):
    """NDN-DPDK refused an operation; the message carries its own explanation."""


@dataclass(frozen=True)
class Face:
    id: str
    nid: int
    locator: dict[str, Any]


@dataclass(frozen=True)
class EthPort:
    id: str
    name: str
    mac: str
    mtu: int


@dataclass(frozen=True)
class FetchCounters:
    """A fetch task's progress (NDN-DPDK ``app/fetch`` Counters)."""

    received: int  # Data satisfying pending Interests (segments)
    retransmitted: int
    in_flight: int
    cwnd: int
    finished: bool
    srtt_ms: float
    rto_s: float

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> FetchCounters:
        return cls(
            received=int(raw.get("nRxData", 0)),
            retransmitted=int(raw.get("nTxRetx", 0)),
            in_flight=int(raw.get("nInFlight", 0)),
            cwnd=int(raw.get("cwnd", 0)),
            finished=raw.get("finished") is not None,
            srtt_ms=float(raw.get("sRtt", 0)) / 1e6,
            rto_s=float(raw.get("rto", 0)) / 1e9,
        )


class Client:
    """One ``ndndpdk-svc`` instance's GraphQL endpoint (``http://127.0.0.1:PORT/``)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        import httpx

        self.url = url
        self._http = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one of :data:`DOCUMENTS`; the ``data`` of the answer.

        Raises:
            NativePlaneError: nothing answers at the URL.
            GraphQLError: NDN-DPDK answered with errors.
        """
        import httpx

        try:
            reply = self._http.post(
                self.url, json={"query": document, "variables": variables or {}}
            )
        except httpx.HTTPError as exc:
            raise NativePlaneError(f"NDN-DPDK at {self.url} does not answer: {exc}") from exc
        try:
            body = reply.json()
        except ValueError as exc:
            raise NativePlaneError(
                f"NDN-DPDK at {self.url} answered HTTP {reply.status_code} without JSON"
            ) from exc
        if body.get("errors"):
            messages = "; ".join(str(e.get("message", e)) for e in body["errors"])
            raise GraphQLError(f"NDN-DPDK at {self.url}: {messages}")
        data: dict[str, Any] = body.get("data") or {}
        return data

    def wait_ready(self, timeout: float, alive: Any = None) -> None:
        """Wait until the service answers (``alive()`` False: it died, stop waiting)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.version()
                return
            except NativePlaneError:
                if time.monotonic() > deadline or (alive is not None and not alive()):
                    raise
            time.sleep(0.1)

    def version(self) -> dict[str, Any]:
        version: dict[str, Any] = self.request(VERSION)["version"]
        return version

    def activate(self, role: str, args: dict[str, Any]) -> None:
        """Activate the service as ``forwarder``, ``trafficgen`` or ``fileserver``."""
        if role not in ("forwarder", "trafficgen", "fileserver"):
            raise ValueError(f"unknown NDN-DPDK role {role!r}")
        if not self.request(ACTIVATE, {role: args})["activate"]:
            raise GraphQLError(f"NDN-DPDK at {self.url} did not activate as {role}")

    def shutdown(self) -> None:
        self.request(SHUTDOWN)

    def create_eth_port(self, driver: str, netif: str, mtu: int) -> EthPort:
        port = self.request(CREATE_ETH_PORT, {"driver": driver, "netif": netif, "mtu": mtu})
        raw = port["createEthPort"]
        if raw is None:
            raise GraphQLError(f"NDN-DPDK could not create an {driver} port on {netif}")
        return EthPort(raw["id"], raw["name"], raw["macAddr"], int(raw["mtu"]))

    def create_face(self, locator: dict[str, Any]) -> Face:
        raw = self.request(CREATE_FACE, {"locator": locator})["createFace"]
        return Face(raw["id"], int(raw["nid"]), dict(raw["locator"]))

    def insert_fib(self, name: str, nexthops: list[str]) -> str:
        entry: str = self.request(INSERT_FIB, {"name": name, "nexthops": nexthops})[
            "insertFibEntry"
        ]["id"]
        return entry

    def delete(self, id_: str) -> bool:
        return bool(self.request(DELETE, {"id": id_})["delete"])

    def faces(self) -> list[dict[str, Any]]:
        faces: list[dict[str, Any]] = self.request(FACES)["faces"]
        return faces

    def fib(self) -> list[dict[str, Any]]:
        fib: list[dict[str, Any]] = self.request(FIB)["fib"]
        return fib

    def workers(self) -> list[dict[str, Any]]:
        workers: list[dict[str, Any]] = self.request(WORKERS)["workers"]
        return workers

    def start_fetcher(self, face: dict[str, Any], config: dict[str, Any]) -> tuple[str, str]:
        """Start a traffic generator with a fetcher on ``face``: (traffic generator id, fetcher
        id). Delete the traffic generator before shutting the instance down: NDN-DPDK panics
        when its face closes under an active traffic generator."""
        tg = self.request(START_FETCHER, {"face": face, "fetcher": config})["startTrafficGen"]
        return str(tg["id"]), str(tg["fetcher"]["id"])

    def fetch(self, fetcher: str, task: dict[str, Any]) -> str:
        """Start a fetch task; its id (delete it when done, finished or not)."""
        task_id: str = self.request(FETCH, {"fetcher": fetcher, "task": task})["fetch"]["id"]
        return task_id

    def fetch_counters(self, task: str) -> FetchCounters | None:
        """The task's counters; None once the task is gone."""
        node = self.request(FETCH_COUNTERS, {"id": task})["node"]
        if not node or "counters" not in node:
            return None
        return FetchCounters.parse(node["counters"])
