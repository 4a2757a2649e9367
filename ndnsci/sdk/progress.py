"""Progress displays: always on stderr, live bars only on a terminal or when asked for.

stdout carries results only (names, JSON, paths), so a script's output stays clean whatever
the progress does. :func:`make_progress` turns the ``progress=`` argument of the SDK and the
``--progress`` option of the command line into a display:

=====================  ====================================================================
``None`` / ``"auto"``  rich bars when stderr is a terminal, else nothing (the default)
``True`` / ``"bars"``  rich bars on stderr, even when it is not a terminal (asked for)
``"text"``             a line per finished file on stderr (logs, CI)
``False`` / ``"none"`` nothing
an object              yours: anything with the :class:`Progress` methods
=====================  ====================================================================

rich is imported only when bars are shown.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ndnsci.sdk.report import Outcome

PROGRESS_CHOICES = ("auto", "bars", "text", "none")


class Progress(Protocol):
    """What a download reports while it runs; pass your own to :func:`ndnsci.download`.

    ``update`` and ``waiting`` are called from worker threads (``update`` about ten times a
    second per file in flight).
    """

    def start(self, files: int, total_bytes: int | None) -> None: ...

    def update(self, name: str, done: int, total: int) -> None: ...

    def waiting(self, name: str, path: str) -> None:
        """Another fetch is writing ``path``: this one waits for it to finish."""
        ...

    def end(self, outcome: Outcome) -> None: ...

    def close(self) -> None: ...


class NoProgress:
    """Reports nothing."""

    def start(self, files: int, total_bytes: int | None) -> None:
        pass

    def update(self, name: str, done: int, total: int) -> None:
        pass

    def waiting(self, name: str, path: str) -> None:
        pass

    def end(self, outcome: Outcome) -> None:
        pass

    def close(self) -> None:
        pass


class LineProgress(NoProgress):
    """A line per finished file on stderr (logs, CI, notebooks that should stay short)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream
        self.count = 0
        self.files = 0

    def _print(self, line: str) -> None:
        print(line, file=self.stream or sys.stderr, flush=True)

    def start(self, files: int, total_bytes: int | None) -> None:
        self.files = files

    def waiting(self, name: str, path: str) -> None:
        self._print(f"waiting: another fetch is writing {path}")

    def end(self, outcome: Outcome) -> None:
        self.count += 1
        detail = f": {outcome.error}" if outcome.error else f" ({outcome.size:,} bytes)"
        self._print(f"[{self.count}/{self.files}] {outcome.status} {outcome.name}{detail}")


class RichProgress(NoProgress):
    """rich progress bars on stderr: the files, the bytes, and one bar per file in flight."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        from rich.progress import Progress as Bars

        self.console = Console(stderr=True)
        self.lock = threading.Lock()
        self.bars = Bars(
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.files = Bars(
            TextColumn("files"), BarColumn(), MofNCompleteColumn(), console=self.console
        )
        self.tasks: dict[str, Any] = {}
        self.done: dict[str, int] = {}
        self.total_task: Any = None
        self.files_task: Any = None
        self.live: Any = None

    def start(self, files: int, total_bytes: int | None) -> None:
        from rich.console import Group
        from rich.live import Live

        self.total_task = self.bars.add_task("total", total=total_bytes or None)
        self.files_task = self.files.add_task("files", total=files)
        shown = Group(self.files, self.bars) if files > 1 else self.bars
        self.live = Live(shown, console=self.console, refresh_per_second=8)
        self.live.start()

    def _task(self, name: str, total: int | None) -> Any:
        task = self.tasks.get(name)
        if task is None:
            short = name if len(name) <= 60 else "..." + name[-57:]
            task = self.tasks[name] = self.bars.add_task(short, total=total)
        return task

    def update(self, name: str, done: int, total: int) -> None:
        with self.lock:
            task = self._task(name, total)
            self.bars.update(task, completed=done, total=total)
            self.done[name] = done
            self.bars.update(self.total_task, completed=sum(self.done.values()))

    def waiting(self, name: str, path: str) -> None:
        with self.lock:
            self.bars.update(self._task(name, None), description=f"(waiting) {name[-50:]}")

    def end(self, outcome: Outcome) -> None:
        with self.lock:
            task = self.tasks.pop(outcome.name, None)
            if task is not None:
                self.bars.remove_task(task)
            self.done[outcome.name] = outcome.size if outcome.status == "done" else 0
            self.bars.update(self.total_task, completed=sum(self.done.values()))
            self.files.advance(self.files_task)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def make_progress(progress: bool | str | Progress | None) -> Progress:
    """The display for a ``progress=`` argument (see the module's table).

    Raises:
        ValueError: an unknown string.
    """
    if progress is None or progress == "auto":
        return _bars() if sys.stderr.isatty() else NoProgress()
    if progress is False or progress == "none":
        return NoProgress()
    if progress is True or progress in ("bars", "rich"):
        return _bars()
    if progress == "text":
        return LineProgress()
    if isinstance(progress, str):
        raise ValueError(
            f"progress must be one of {', '.join(PROGRESS_CHOICES)}, True, False or an object, "
            f"not {progress!r}"
        )
    return progress


def _bars() -> Progress:
    try:
        return RichProgress()
    except ImportError:
        return LineProgress()


@contextlib.contextmanager
def counter(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A bar counting ``total`` steps on stderr when it is a terminal; yields ``advance()``."""
    if not sys.stderr.isatty():
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import Progress as Bars

    with Bars(console=Console(stderr=True), transient=True) as bars:
        task = bars.add_task(label, total=total)
        yield lambda: bars.advance(task)
