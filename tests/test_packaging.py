"""The built wheel: what it holds, what its extras pull, and that it installs and runs.

The wheel is built from a copy of the sources (the working tree is not written to); installs go
to a fresh virtualenv with --no-deps, and the extras' dependency closures are resolved with
``pip install --dry-run --report`` (package metadata only, nothing installed).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]

# what each extra may ask for directly, and nothing more
CORE = {"httpx", "platformdirs", "pycryptodomex", "rich"}
EXTRAS = {
    "netcdf": {"netcdf4", "cftime", "numpy"},
    "server": {
        "fastapi", "uvicorn", "sqlalchemy", "alembic", "pydantic", "pydantic-settings", "numpy",
        "msgspec",
    },
    "ndn": {"python-ndn"},
    "testbed": {"matplotlib"},
}  # fmt: skip


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "ndnsci", src / "ndnsci", ignore=ignore)
    subprocess.run(
        [*PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(tmp / "dist"), str(src)],
        check=True, timeout=300,
    )  # fmt: skip
    (built,) = (tmp / "dist").glob("ndnsci-*.whl")
    return built


def metadata(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return z.read(name).decode().splitlines()


def requirements(wheel: Path, extra: str | None) -> set[str]:
    wanted = set()
    for line in metadata(wheel):
        if line.startswith("Requires-Dist:"):
            req = Requirement(line.split(":", 1)[1].strip())
            marker_extra = req.marker.evaluate({"extra": extra or ""}) if req.marker else True
            if marker_extra and (extra is None) == (req.marker is None):
                wanted.add(canonicalize_name(req.name))
    return wanted


def test_wheel_contents(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert "ndnsci/py.typed" in names and "ndnsci/errors.py" in names
    assert "ndnsci/translators/cmip5.py" in names and "ndnsci/catalog/main.py" in names
    assert "ndnsci/catalog/migrations/script.py.mako" in names
    # the consumer's compiled per-packet loop, and its types
    assert any(n.startswith("ndnsci/ndn/_hotloop.") and n.endswith(".so") for n in names)
    assert "ndnsci/ndn/_hotloop.pyi" in names and "ndnsci/ndn/_hotloop.c" not in names
    # the producer's, likewise
    assert any(n.startswith("ndnsci/ndn/_serveloop.") and n.endswith(".so") for n in names)
    assert "ndnsci/ndn/_serveloop.pyi" in names and "ndnsci/ndn/_tlv.h" not in names
    # the portal's build (`make test` builds it first) travels in the package
    assert "ndnsci/catalog/portal/index.html" in names
    assert any(n.startswith("ndnsci/catalog/portal/assets/") and n.endswith(".js") for n in names)
    assert not any(n.startswith(("tests/", "notebooks/")) for n in names)


def test_core_is_the_sdk_and_extras_only_theirs(wheel):
    assert requirements(wheel, None) == CORE
    for extra, allowed in EXTRAS.items():
        assert requirements(wheel, extra) == {canonicalize_name(a) for a in allowed}, extra


def resolved(wheel: Path, extra: str, tmp: Path) -> dict[str, list[str]]:
    """name -> requirements of every package ``pip install wheel[extra]`` would install."""
    report = tmp / f"{extra}.json"
    subprocess.run(
        [*PIP, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
         f"{wheel}[{extra}]"],
        check=True, timeout=300,
    )  # fmt: skip
    found = {}
    for item in json.loads(report.read_text())["install"]:
        meta = item["metadata"]
        found[canonicalize_name(meta["name"])] = meta.get("requires_dist") or []
    return found


def closure(installed: dict[str, list[str]], roots: list[Requirement]) -> set[str]:
    """Names of the packages ``roots`` need, following requirements (and their extras)."""
    needed: set[str] = set()
    todo = list(roots)
    while todo:
        req = todo.pop()
        name = canonicalize_name(req.name)
        if name in needed:
            continue
        needed.add(name)
        extras = {""} | set(req.extras)
        for line in installed.get(name, []):
            sub = Requirement(line)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in extras):
                todo.append(sub)
    return needed


@pytest.mark.parametrize("extra", ["netcdf", "server"])
def test_an_extra_pulls_what_it_needs_and_nothing_else(wheel, tmp_path, extra):
    installed = resolved(wheel, extra, tmp_path)
    # the extra's own requirements, and the core's, which every install brings
    roots = [
        Requirement(line.split(":", 1)[1].strip())
        for line in metadata(wheel)
        if line.startswith("Requires-Dist:")
        and (f'extra == "{extra}"' in line or "extra ==" not in line)
    ]
    assert set(installed) - {"ndnsci"} == closure(installed, roots)
    heavy = {"netcdf4", "xarray", "fastapi", "sqlalchemy", "python-ndn", "pandas"}
    assert heavy & set(installed) <= {canonicalize_name(n) for n in EXTRAS[extra]}


def test_the_wheel_installs_and_runs_alone(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = ["install", "--quiet", "--no-deps", "--no-index", str(wheel)]
    subprocess.run([*PIP, "--python", str(python), *install], check=True, timeout=300)
    ndnsci = venv / "bin" / "ndnsci"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, capture_output=True, text=True, env=env, check=False)

    out = run(str(ndnsci), "--help")
    assert out.returncode == 0 and "fetch" in out.stdout and "search" in out.stdout
    out = run(str(ndnsci), "translate", "tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc")
    assert out.returncode == 0 and "/CMIP5/output1/MOHC/HadCM3/" in out.stdout
    # installed without its dependencies, the SDK says what to install (no ImportError traceback)
    code = (
        "import ndnsci\n"
        "try:\n    ndnsci.Catalog()\n"
        "except ndnsci.errors.MissingDependencyError as exc:\n    print(exc)"
    )
    assert "pip install httpx" in run(str(python), "-c", code).stdout
    # fast enough to type (bench/cli_startup.py measures it precisely; target < 0.3 s)
    times = []
    for _ in range(5):
        started = time.perf_counter()
        subprocess.run([str(ndnsci), "--help"], capture_output=True, check=True, env=env)
        times.append(time.perf_counter() - started)
    assert statistics.median(times) < 1.0


def test_the_installed_package_serves_the_portal(wheel, tmp_path):
    """The catalog of an installed wheel serves the portal it carries (no source checkout).

    The wheel goes to a folder of its own; the interpreter starts without ``site`` (so the
    editable install of the checkout is not on the path; nor is the checkout, the current folder)
    and finds the server's dependencies
    in this virtualenv's site-packages, after the installed wheel."""
    target = tmp_path / "installed"
    install = ["install", "--quiet", "--no-deps", "--no-index", "--target", str(target)]
    subprocess.run([*PIP, *install, str(wheel)], check=True, timeout=300)
    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    code = (
        "import ndnsci.catalog, starlette.testclient as t\n"
        "from ndnsci.catalog.main import create_app\n"
        "from ndnsci.catalog.config import Settings\n"
        "page = t.TestClient(create_app(Settings(db='sqlite://'))).get('/')\n"
        "print(ndnsci.catalog.__file__, page.status_code, '<div id=\"root\">' in page.text)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "NDNSCI_"))}
    env["PYTHONPATH"] = f"{target}{os.pathsep}{site_packages}"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    where, status, served = out.stdout.split()
    assert Path(where).is_relative_to(target)
    assert (status, served) == ("200", "True")
