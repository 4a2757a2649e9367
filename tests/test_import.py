"""`import ndnsci` stays light: heavy libraries load only in the code that needs them."""

import subprocess
import sys

HEAVY = ("netCDF4", "cftime", "numpy", "xarray", "fastapi", "sqlalchemy", "pydantic", "rich")


def _modules_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    return set(out.split())


def test_import_ndnsci_loads_no_heavy_library():
    loaded = _modules_after("import ndnsci")
    assert not loaded & set(HEAVY)


def test_translating_a_name_loads_no_heavy_library():
    loaded = _modules_after(
        "import ndnsci; ndnsci.translate('tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc')"
    )
    assert not loaded & set(HEAVY)


def test_cli_parser_loads_no_heavy_library():
    loaded = _modules_after("from ndnsci.cli import build_parser; build_parser()")
    assert not loaded & set(HEAVY)
