"""The server side of ``support.CliForkServer``: a Python process that imports the ``ndnsci``
command's modules once, then forks one child per request, in which ``python -m ndnsci ARGS``
runs as it would in a fresh interpreter: ``ndnsci/__main__.py`` by runpy, its exit (a
``SystemExit``, an uncaught exception's traceback, the interpreter's shutdown: threads, atexit)
the interpreter's own, on the request's files as stdin, stdout and stderr. What a child saves
is the imports (~1.5 s for a catalog command on this machine), nothing else.

Protocol, one request at a time: a JSON line on stdin (argv, cwd, the three paths); on stdout
the child's pid, then its wait status (each a line). Started by ``python -c`` (so ``sys.path``
is as a command's), this file's folder is taken off ``sys.path`` once imported."""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
import threading


def _read_line(fd: int) -> bytes:
    line = b""
    while not line.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            raise SystemExit(0)  # the test process closed the pipe: done
        line += chunk
    return line


def serve(preload: list[str]) -> dict[str, object]:
    """Import ``preload``, then answer requests; returns (in a child only) its request."""
    for name in preload:
        importlib.import_module(name)
    # fork() copies one thread: a module that started one would leave its children broken
    assert threading.active_count() == 1, threading.enumerate()
    # out of the collector's sight, as ``ndnsci.cli.main`` puts what is loaded when it starts:
    # a child's collections do not walk (and copy, page by page) the imported modules
    gc.freeze()
    os.write(1, b"ready\n")
    while True:
        request = json.loads(_read_line(0))
        pid = os.fork()
        if pid == 0:
            _become(request)
            return dict(request)
        os.write(1, f"{pid}\n".encode())
        _, status = os.waitpid(pid, 0)
        os.write(1, f"{status}\n".encode())


def _become(request: dict[str, str]) -> None:
    """In the child: the request's files on fds 0, 1 and 2 (the pipes to the test process
    go), its folder, ``sys.argv`` and ``sys.path[0]`` as ``python -m ndnsci`` has them."""
    for fd, path, flags in (
        (0, request["stdin"], os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    sys.path[0] = os.getcwd()
    sys.argv = ["-m", *request["argv"]]
