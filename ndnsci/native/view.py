"""The archive under its catalog names: a tree of symlinks the NDN-DPDK file server mounts.

NDN-DPDK's file server maps a name to a path one component per directory level below a mount
(``csrc/fileserver/naming.c``: a generic component is a file name; empty, ``.``, ``..``, ``/``
and NUL are refused), and opens it with ``openat2(RESOLVE_NO_MAGICLINKS)``: symlinks are
followed, absolute ones included, unless the mount is activated with ``resolveBeneath``
(``RESOLVE_BENEATH`` refuses any link leading out of the mount). So the catalog's names become
``VIEW/CMIP5/output1/.../file.nc -> /archive/real/path.nc``, one mount per top-level component
(``/CMIP5 -> VIEW/CMIP5``), ``resolveBeneath`` off; the view holds nothing but these links, so
nothing outside the published files is reachable.

:func:`sync` brings the view in step with a :class:`~ndnsci.ndn.producer.NameTable`: links are
added, re-pointed and removed one by one (each replaced atomically), so the file server keeps
serving during an update. The mount tops stay (the file server holds them open).
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ndnsci.ndn import name as ndnname
from ndnsci.ndn import tlv
from ndnsci.ndn.producer import NameTable, NotServed, plain_parts

MAX_MOUNTS = 8  # NDN-DPDK app/fileserver MaxMounts


@dataclass
class Change:
    """What one :func:`sync` did; ``refused`` are names that cannot be a path (with why)."""

    added: int = 0
    repointed: int = 0
    removed: int = 0
    kept: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"view: {self.added} added, {self.repointed} re-pointed, {self.removed} removed, "
            f"{self.kept} unchanged, {len(self.refused)} refused"
        )


def link_path(view: Path, key: tuple[bytes, ...]) -> Path:
    """Where the link of the name ``key`` lives (NotServed when a component is no file name)."""
    return view.joinpath(*(os.fsdecode(part) for part in plain_parts(list(key))))


def mounts(view: Path, table: NameTable) -> list[dict[str, str]]:
    """NDN-DPDK mount entries: each top-level component of the names -> its view folder."""
    tops = sorted({key[0] for key in table.files}, key=tlv.component_value)
    if len(tops) > MAX_MOUNTS:
        raise ValueError(
            f"{len(tops)} top-level name components; NDN-DPDK's file server mounts at most "
            f"{MAX_MOUNTS}"
        )
    return [
        {"prefix": ndnname.to_uri([top]), "path": str(view / os.fsdecode(tlv.component_value(top)))}
        for top in tops
    ]


def sync(view: Path, table: NameTable) -> Change:
    """Make ``view`` hold exactly one link per name of ``table``, pointing at its file."""
    change = Change()
    view.mkdir(parents=True, exist_ok=True)
    wanted: dict[Path, str] = {}
    for key, path in table.files.items():
        try:
            link = link_path(view, key)
        except NotServed as exc:
            change.refused.append((ndnname.to_uri(list(key)), str(exc)))
            continue
        wanted[link] = os.path.realpath(os.fsdecode(path))
    for link, target in wanted.items():
        _place(link, target, change)
    _prune(view, wanted, change)
    return change


def _place(link: Path, target: str, change: Change) -> None:
    try:
        current = os.readlink(link)
    except FileNotFoundError:
        current = None
    except OSError:  # a directory where a file's name should be: a name conflict
        change.refused.append((str(link), "another name uses this path as a folder"))
        return
    if current == target:
        change.kept += 1
        return
    try:
        link.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        change.refused.append((str(link), "another name uses a parent of this path as a file"))
        return
    temporary = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    os.symlink(target, temporary)
    os.replace(temporary, link)  # atomic: a reader sees the old link or the new one
    if current is None:
        change.added += 1
    else:
        change.repointed += 1


def _prune(view: Path, wanted: dict[Path, str], change: Change) -> None:
    """Remove the links no name wants, and the folders left empty (mount tops excepted: the
    file server holds them open)."""
    for dirpath, dirnames, filenames in os.walk(view, topdown=False):
        here = Path(dirpath)
        for entry in filenames + dirnames:
            path = here / entry
            if path.is_symlink() and path not in wanted:
                path.unlink()
                change.removed += 1
        if view not in (here.parent, here) and not any(here.iterdir()):
            here.rmdir()
