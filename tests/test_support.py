"""tests/support.py's wait_for: the one way the suite waits for something to happen."""

from __future__ import annotations

import itertools
import subprocess
import time

import pytest
from support import CliForkServer, run_cli, wait_for


def test_wait_for_returns_the_first_true_value():
    calls = itertools.count()
    assert wait_for(lambda: next(calls) >= 2 and "ready", 5, "the third call", every=0) == "ready"
    assert next(calls) == 3


def test_wait_for_fails_naming_what_it_waited_for_and_the_last_value():
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        wait_for(lambda: [], 0.2, "a list of something", every=0.01, detail=lambda: "; the logs")
    assert 0.2 <= time.monotonic() - started < 5
    assert (
        str(failed.value)
        == "timed out after 0.2 s waiting for a list of something (last: []); the logs"
    )


def test_wait_for_retries_the_exceptions_it_ignores_and_says_the_last():
    with pytest.raises(AssertionError, match=r"\(last: ConnectionError: refused\)$") as failed:
        wait_for(_refuse, 0.1, "a server", every=0.01, ignoring=ConnectionError)
    assert isinstance(failed.value.__cause__, ConnectionError)
    answers = iter([ConnectionError("not yet"), "up"])
    assert wait_for(lambda: _answer(next(answers)), 5, "a server", ignoring=OSError) == "up"


def test_wait_for_lets_any_other_exception_through_at_once():
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the process exited"):
        wait_for(_fail, 30, "a process", ignoring=ConnectionError)
    assert time.monotonic() - started < 5


def _refuse() -> None:
    raise ConnectionError("refused")


def _answer(answer: str | Exception) -> str:
    if isinstance(answer, Exception):
        raise answer
    return answer


def _fail() -> None:
    raise RuntimeError("the process exited")


# A stand-in `ndnsci` package in the working folder, which `python -m ndnsci` runs from there
# (sys.path[0]) as the fork server's child does when nothing is preloaded: each way a process
# ends, compared between a new interpreter (run_cli) and a forked child.
FAKE_MAIN = """
import atexit, os, signal, sys, threading, time
how = sys.argv[1]
print("argv", sys.argv[1:], "cwd", os.getcwd() == sys.path[0], "stdin", repr(sys.stdin.read()))
if how == "raise":
    raise ValueError("an uncaught one")
if how == "words":
    sys.exit("exit in words")
if how == "code":
    sys.exit(3)
if how == "thread":  # a thread the interpreter waits for at exit, and an atexit hook
    atexit.register(lambda: print("atexit ran", flush=True))
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread done"))).start()
if how == "thread-raises":  # joined: its traceback comes before "end"
    failing = threading.Thread(target=lambda: 1 / 0)
    failing.start()
    failing.join()
if how == "signal":
    os.kill(os.getpid(), signal.SIGTERM)
if how == "hang":
    time.sleep(60)
print("end", file=sys.stderr)
"""


@pytest.fixture(scope="module")
def fake_package(tmp_path_factory):
    root = tmp_path_factory.mktemp("fake")
    (root / "ndnsci").mkdir()
    (root / "ndnsci" / "__init__.py").write_text("")
    (root / "ndnsci" / "__main__.py").write_text(FAKE_MAIN)
    server = CliForkServer(tmp_path_factory.mktemp("forks"), preload=[]).start()
    yield root, server
    server.stop()


@pytest.mark.parametrize(
    "how", ["plain", "raise", "words", "code", "thread", "thread-raises", "signal"]
)
def test_the_fork_server_ends_a_command_as_a_new_interpreter_does(fake_package, how):
    root, server = fake_package
    forked = server.run(how, "x y", cwd=root)
    fresh = run_cli(how, "x y", cwd=root)
    assert (forked.returncode, forked.stdout) == (fresh.returncode, fresh.stdout)
    assert forked.stdout.startswith(f"argv ['{how}', 'x y'] cwd True stdin ''")
    # the tracebacks' first frames differ (runpy called by -c, not -m); what they say does not
    assert ("Traceback" in forked.stderr) == ("Traceback" in fresh.stderr)
    assert forked.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:]


def test_the_fork_server_kills_a_command_past_its_timeout_and_serves_on(fake_package):
    root, server = fake_package
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        server.run("hang", timeout=0.5, cwd=root)
    assert time.monotonic() - started < 10
    assert server.run("code", cwd=root).returncode == 3
