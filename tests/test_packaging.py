"""The built wheels: what each holds, what its extras pull, and that they install and run.

Three distributions: ``ndnsci`` (the SDK, the planes, the command line), ``ndnsci-translators``
(translators/) and ``ndnsci-catalog`` (catalog/: the catalog service, gateway, federation).
Each wheel is built from a copy of the sources (the working tree is not written to); installs go
to a fresh virtualenv with --no-deps, and the extras' dependency closures are resolved with
``pip install --dry-run --report`` (package metadata only, nothing installed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]

# what each extra may ask for directly, and nothing more
CORE = {"ndnsci-translators", "httpx", "platformdirs", "pycryptodomex", "rich"}
EXTRAS = {
    "netcdf": {"netcdf4", "cftime", "numpy"},
    "server": {"ndnsci-catalog"},
    "postgres": {"ndnsci-catalog"},
    "ndn": {"python-ndn"},
    "testbed": {"matplotlib"},
    "quicklook": {"ndnsci", "matplotlib", "basemap-data", "h5netcdf", "h5py"},
}
SERVER = {
    "ndnsci", "ndnsci-translators", "fastapi", "uvicorn", "sqlalchemy", "alembic", "pydantic",
    "pydantic-settings", "numpy", "msgspec", "prometheus-client",
}  # fmt: skip
HEAVY = {"netcdf4", "xarray", "fastapi", "sqlalchemy", "python-ndn", "pandas"}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """distribution name -> its wheel, all three in one folder (a --find-links for pip)."""
    tmp = tmp_path_factory.mktemp("wheels")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so")
    for name, where in (("ndnsci", REPO), ("catalog", REPO / "catalog"),
                        ("translators", REPO / "translators")):  # fmt: skip
        src = tmp / "src" / name
        src.mkdir(parents=True)
        for item in where.iterdir():
            if item.name in {"pyproject.toml", "README.md"}:
                shutil.copy(item, src / item.name)
            elif item.is_dir() and item.name.startswith("ndnsci"):
                shutil.copytree(item, src / item.name, ignore=ignore)
        subprocess.run(
            [*PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
             "-w", str(tmp / "dist"), str(src)],
            check=True, timeout=300,
        )  # fmt: skip
    found = {p.name.split("-")[0].replace("_", "-"): p for p in (tmp / "dist").glob("*.whl")}
    assert set(found) == {"ndnsci", "ndnsci-catalog", "ndnsci-translators"}
    return found


@pytest.fixture(scope="module")
def wheel(wheels: dict[str, Path]) -> Path:
    return wheels["ndnsci"]


def names_in(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as z:
        return set(z.namelist())


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


def test_wheel_contents(wheels):
    names = names_in(wheels["ndnsci"])
    assert "ndnsci/py.typed" in names and "ndnsci/errors.py" in names
    assert "ndnsci/sdk/client.py" in names and "ndnsci/cli/__init__.py" in names
    # the SDK's wheel carries neither the catalog's code nor the translators'
    assert not any(n.startswith(("ndnsci_catalog/", "ndnsci_translators/")) for n in names)
    # the consumer's compiled per-packet loop, and its types
    assert any(n.startswith("ndnsci/ndn/_hotloop.") and n.endswith(".so") for n in names)
    assert "ndnsci/ndn/_hotloop.pyi" in names and "ndnsci/ndn/_hotloop.c" not in names
    # the producer's, likewise
    assert any(n.startswith("ndnsci/ndn/_serveloop.") and n.endswith(".so") for n in names)
    assert "ndnsci/ndn/_serveloop.pyi" in names and "ndnsci/ndn/_tlv.h" not in names
    assert not any(n.startswith(("tests/", "notebooks/")) for n in names)

    names = names_in(wheels["ndnsci-translators"])
    assert {"ndnsci_translators/cmip5.py", "ndnsci_translators/py.typed"} <= names
    assert all(n.startswith(("ndnsci_translators/", "ndnsci_translators-")) for n in names)
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheels["ndnsci-translators"]) as z:
        assert "[ndnsci.translators]" in z.read(entry).decode()

    names = names_in(wheels["ndnsci-catalog"])
    assert {"ndnsci_catalog/main.py", "ndnsci_catalog/migrations/script.py.mako"} <= names
    assert {"ndnsci_catalog/gateway/app.py", "ndnsci_catalog/federation/service.py"} <= names
    assert any(n.startswith("ndnsci_catalog/_prepare.") and n.endswith(".so") for n in names)
    assert "ndnsci_catalog/_prepare.c" not in names
    # the portal's build (`make test` builds it first) travels in the catalog's package
    assert "ndnsci_catalog/portal/index.html" in names
    assert any(n.startswith("ndnsci_catalog/portal/assets/") and n.endswith(".js") for n in names)


def test_core_is_the_sdk_and_extras_only_theirs(wheel):
    assert requirements(wheel, None) == CORE
    for extra, allowed in EXTRAS.items():
        assert requirements(wheel, extra) == {canonicalize_name(a) for a in allowed}, extra


def resolved(wheel: Path, extra: str, tmp: Path) -> dict[str, list[str]]:
    """name -> requirements of every package ``pip install wheel[extra]`` would install."""
    report = tmp / f"{extra}.json"
    subprocess.run(
        [*PIP, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
         "--find-links", str(wheel.parent), f"{wheel}[{extra}]"],
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


@pytest.mark.parametrize("extra", ["netcdf", "server", "postgres"])
def test_an_extra_pulls_what_it_needs_and_nothing_else(wheel, tmp_path, extra):
    installed = resolved(wheel, extra, tmp_path)
    # the extra's own requirements, and the core's, which every install brings
    roots = [
        Requirement(line.split(":", 1)[1].strip())
        for line in metadata(wheel)
        if line.startswith("Requires-Dist:")
        and (f'extra == "{extra}"' in line or "extra ==" not in line)
    ]
    # (the catalog's distribution requires the SDK's: the closure comes back to ndnsci)
    assert set(installed) - {"ndnsci"} == closure(installed, roots) - {"ndnsci"}
    allowed = EXTRAS[extra] | (SERVER if extra in {"server", "postgres"} else set())
    assert HEAVY & set(installed) <= {canonicalize_name(n) for n in allowed}
    assert ("psycopg" in installed) == (extra == "postgres")


def test_the_sdk_installs_and_runs_without_the_catalog(wheels, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    sdk = [str(wheels["ndnsci"]), str(wheels["ndnsci-translators"])]
    install = ["install", "--quiet", "--no-deps", "--no-index", *sdk]
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
    # a command of the catalog's, without it: the one line that says what to install
    out = run(str(ndnsci), "catalog", "serve", "--db", str(tmp_path / "c.db"))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith("is not installed: pip install 'ndnsci[server]'")


def test_the_installed_package_serves_the_portal(wheels, tmp_path):
    """The catalog of an installed wheel serves the portal it carries (no source checkout).

    The wheel goes to a folder of its own; the interpreter starts without ``site`` (so the
    editable install of the checkout is not on the path; nor is the checkout, the current folder)
    and finds the server's dependencies
    in this virtualenv's site-packages, after the installed wheel."""
    target = tmp_path / "installed"
    install = ["install", "--quiet", "--no-deps", "--no-index", "--target", str(target)]
    subprocess.run([*PIP, *install, *map(str, wheels.values())], check=True, timeout=300)
    site_packages = next(p for p in sys.path if p.endswith("site-packages"))
    code = (
        "import ndnsci_catalog, starlette.testclient as t\n"
        "from ndnsci_catalog.main import create_app\n"
        "from ndnsci_catalog.config import Settings\n"
        "page = t.TestClient(create_app(Settings(db='sqlite://'))).get('/')\n"
        "print(ndnsci_catalog.__file__, page.status_code, '<div id=\"root\">' in page.text)"
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
