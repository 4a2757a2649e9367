"""tests/support.py's wait_for: the one way the suite waits for something to happen."""

from __future__ import annotations

import itertools
import time

import pytest
from support import wait_for


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
