"""Every `ndnsci` subcommand on a table of bad inputs (issue 29.3): bad paths, bad URLs, bad
numbers, files that do not exist or are not what they should be. None ends in a traceback, and
a refusal (a non-zero exit) says why on stderr. Cases that would start a service that runs on
(``up --data MISSING`` serves nothing until stopped) are left out.

Each case is ``python -m ndnsci ARGS`` in a child forked from one process that has imported
the command's modules (support.CliForkServer: its exit, traceback and shutdown a new
interpreter's, tests/test_support.py), not a new interpreter: 111 starts of ~0.1 to 2 s."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import CLI_COMMANDS, CliForkServer, run_cli

MISSING = "/nonexistent-ndnsci/folder/file"
NOWHERE = "http://127.0.0.1:9"  # nothing listens on the discard port
HUGE = "9" * 5000


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Real paths the table refers to: a text file, a truncated netCDF file, a folder of them."""
    root = tmp_path_factory.mktemp("bad")
    text = root / "notes.txt"
    text.write_text("not a database, not a key, not netCDF\n")
    good = next(
        (Path(__file__).parents[1] / "data" / "netcdf" / "edge").glob("cfchecker_bad_data_type.nc")
    )
    folder = root / "archive"
    folder.mkdir()
    (folder / "t.nc").write_bytes(good.read_bytes()[:12])
    (folder / "t13.nc").write_bytes(good.read_bytes()[:13])
    return {
        "TEXT": str(text),
        "TRUNCATED": str(folder / "t.nc"),
        "DIR": str(folder),
        "DB": f"sqlite:///{root / 'catalog.db'}",
        "NOFOLDER": str(root / "no" / "c.db"),
    }


@pytest.fixture(scope="module")
def cli(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Any]]:
    """``ndnsci ARGS`` forked from a server that has imported what the command needs: the
    catalog's libraries for ``catalog`` and ``publish``, the command line only for the others
    (their children end sooner)."""
    light = CliForkServer(tmp_path_factory.mktemp("forks"), preload=CLI_COMMANDS).start()
    heavy = CliForkServer(tmp_path_factory.mktemp("forks")).start()
    yield lambda *args, **kw: (heavy if args[0] in ("catalog", "publish") else light).run(
        *args, **kw
    )
    light.stop()
    heavy.stop()


CASES: list[str] = [
    # translate, inspect, scan
    "translate --scheme nonsense x.nc",
    "translate --metadata MISSING",
    "translate --metadata DIR",
    "translate --reverse not-a-name",
    "inspect MISSING",
    "inspect TRUNCATED",
    "inspect DIR",
    "inspect TEXT",
    "scan MISSING",
    "scan --metadata DIR",
    "scan --metadata --scheme nonsense DIR",
    # catalog: the database
    "catalog serve --db nonsense://",
    "catalog serve --db NOFOLDER",
    "catalog serve --db TEXT",
    "catalog serve --db DB --port abc",
    "catalog serve --db DB --port 99999",
    "catalog serve --db DB --port -1",
    "catalog serve --db DB --port HUGE",
    "catalog migrate --db nonsense://",
    "catalog migrate --db ::::://x",
    "catalog migrate --db NOFOLDER",
    "catalog migrate --db DIR",
    "catalog migrate --db TEXT",
    "catalog migrate --db postgresql://nobody@127.0.0.1:9/x",
    "catalog token create x --db nonsense://",
    "catalog token create x --expires abc --db DB",
    "catalog token create x --expires 99999999999d --db DB",
    "catalog token create x --expires HUGEd --db DB",
    "catalog token list --db NOFOLDER",
    "catalog token list --db TEXT",
    "catalog token revoke x --db nonsense://",
    "catalog site init x --db nonsense://",
    "catalog site init x --key MISSING --db DB",
    "catalog site init x --key TEXT --db DB",
    "catalog site init x --prefix nonsense --db DB",
    "catalog site show --db TEXT",
    "catalog trust add x notakey --db DB",
    "catalog trust add x MISSING --db DB",
    "catalog trust remove x --db nonsense://",
    "catalog federate --db nonsense://",
    "catalog federate --interval abc --db DB",
    "catalog federate --interval -1 --db DB",
    "catalog federate --link nonsense --db DB",
    "catalog federate --key MISSING --db DB",
    "catalog mirror --from nonsense:// --db DB",
    "catalog mirror --from NOWHERE --db DB",
    "catalog mirror --from NOWHERE --db nonsense://",
    "catalog mirror --from NOWHERE --interval -5 --follow --db DB",
    "catalog seal --key MISSING --db DB",
    "catalog seal --batch-changes 0 --db DB",
    "catalog seal --batch-changes HUGE --db DB",
    "catalog conflicts --limit abc --db DB",
    "catalog conflicts --limit -1 --db DB",
    "catalog conflicts --limit HUGE --db DB",
    # gateway, publish
    "gateway --catalog nonsense://",
    "gateway --port 99999",
    "gateway --port abc",
    "publish MISSING --db DB",
    "publish DIR --db nonsense://",
    "publish DIR --db NOFOLDER",
    "publish DIR --db TEXT",
    "publish DIR --catalog NOWHERE --token t",
    "publish DIR --catalog nonsense:// --token t",
    "publish DIR --jobs -1 --db DB",
    "publish DIR --jobs HUGE --db DB",
    "publish DIR --batch 0 --db DB",
    "publish --records MISSING --db DB",
    "publish --records TEXT --db DB",
    # the data plane
    "forwarder nonsense",
    "forwarder status --socket MISSING",
    "forwarder start --cs-capacity -1 --socket MISSING",
    "serve MISSING",
    "serve DIR --segment-size -1",
    "serve DIR --segment-size HUGE",
    "serve DIR --key MISSING",
    "serve DIR --refresh -1 --catalog NOWHERE",
    "search --catalog NOWHERE",
    "search --catalog nonsense://",
    "search --limit -1 --catalog NOWHERE",
    "search --limit HUGE --catalog NOWHERE",
    "search --start notatime --catalog NOWHERE",
    "fetch",
    "fetch not-a-name",
    "fetch --manifest MISSING",
    "fetch --manifest TEXT",
    "fetch --window -1 /a/b",
    "fetch --window HUGE /a/b",
    "fetch --parallel 0 /a/b",
    "fetch --lifetime abc /a/b",
    "fetch --retries -1 /a/b",
    "fetch --query model=x --catalog nonsense://",
    "fetch --query model=x --catalog NOWHERE",
    "fetch --trust nothex /a/b",
    "fetch --engine nonsense /a/b",
    "keys show --name MISSING",
    "keys create --name ../../escape",
    "sample TEXT/deeper",
    "sample TEXT",
    "sample DIR --big-mib -1",
    "sample DIR --big-mib HUGE",
    "up --port 99999",
    "up --port abc",
    "testbed up --topology MISSING",
    "testbed run nonsense --topology MISSING",
    "testbed run --repeats -1",
    "testbed down nonsense",
    "native nonsense",
    "native status --port 99999",
    "xrootd nonsense",
    "xrootd up --port 99999",
    "xrootd up --local-root MISSING",
]


def _argv(case: str, files: dict[str, str]) -> list[str]:
    words = {"MISSING": MISSING, "NOWHERE": NOWHERE, "HUGE": HUGE, **files}
    out = []
    for word in case.split():
        arg = word
        for key, value in sorted(words.items(), key=lambda kv: -len(kv[0])):
            arg = arg.replace(key, value)
        out.append(arg)
    return out


@pytest.mark.parametrize("case", CASES)
def test_a_bad_input_is_refused_in_words_not_a_traceback(cli, files, case):
    done = cli(*_argv(case, files), timeout=60)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if done.returncode != 0:
        # on stderr, or the report that is the command's result (`scan`: what cannot be named)
        assert (done.stderr + done.stdout).strip(), f"exit {done.returncode} without a word"


@pytest.mark.parametrize(
    "case",
    [
        "catalog conflicts --limit -1 --db DB",
        "catalog conflicts --limit HUGE --db DB",
        "sample DIR --big-mib -1",
        "search --limit -5 model=X --catalog NOWHERE",
    ],
)
def test_a_count_that_is_not_one_is_refused_before_any_work(cli, files, case):
    done = cli(*_argv(case, files), timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not a count (0 to 1000000000)" in done.stderr


@pytest.mark.parametrize(
    "case",
    [
        "catalog migrate --db TEXT",  # the catalog's libraries, from the larger server
        "publish DIR --jobs -1 --db DB",
        "inspect TRUNCATED",  # netCDF, from the smaller one
        "fetch --window HUGE /a/b",  # argparse's own exit
    ],
)
def test_a_forked_case_ends_as_a_new_interpreter_does(cli, files, case):
    """What the table above relies on, for a few of its cases (all 112 compared alike on
    2026-12-02, DEVELOPERS.md): the same exit status, stdout and stderr as ``run_cli``'s."""
    argv = _argv(case, files)
    forked, fresh = cli(*argv, timeout=60), run_cli(*argv, timeout=60)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode, fresh.stdout, fresh.stderr
    )  # fmt: skip
