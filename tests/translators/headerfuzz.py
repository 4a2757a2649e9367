"""Damaged netCDF files for the header reader: cuts, bit flips in the header, random bytes.

Used by tests/translators/test_netcdf_fuzz.py (bounded and seeded) and by bench/fuzz_headers.py
(``--minutes M``: every cut of every file, then random cases until the time is up). A case is
``(label, bytes)``; :func:`outcome` reads one and says what became of it, raising
AssertionError on anything but a description or a :class:`MetadataError`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

from ndnsci_translators import netcdf

DATA = Path(__file__).parents[1] / "data" / "netcdf"
#: real files of each format: netCDF-3 classic (CDF-1) and netCDF-4/HDF5; a 64-bit offset
#: (CDF-2) copy of the classic ones is made by :func:`base_files`
CLASSIC = [DATA / "edge" / "no_attributes_ubyte.nc", DATA / "edge" / "cfchecker_bad_units.nc"]
HDF5 = [
    DATA / "edge" / "cfchecker_bad_data_type.nc",
    DATA / "cmip5/output1/MIROC/MIROC-ESM/esmHistorical/mon/ocnBgchem/Omon/r3i1p1/v20131008"
    / "fgco2/fgco2_Omon_MIROC-ESM_esmHistorical_r3i1p1_185001-200512.nc",
]  # fmt: skip
SIGNATURES = [b"CDF\x01", b"CDF\x02", b"CDF\x05", b"\x89HDF\r\n\x1a\n", b""]
#: bytes a bit flip lands in: the header (and the HDF5 superblock and first object headers)
HEADER_BYTES = 2048


def cdf2_copy(source: Path, target: Path) -> Path:
    """``source`` (classic) written again in the 64-bit offset format by netCDF-C."""
    import netCDF4

    with (
        netCDF4.Dataset(source) as a,
        netCDF4.Dataset(target, "w", format="NETCDF3_64BIT_OFFSET") as b,
    ):
        b.setncatts({k: a.getncattr(k) for k in a.ncattrs()})
        for name, dim in a.dimensions.items():
            b.createDimension(name, None if dim.isunlimited() else len(dim))
        for name, var in a.variables.items():
            fill = var.getncattr("_FillValue") if "_FillValue" in var.ncattrs() else None
            copy = b.createVariable(name, var.datatype, var.dimensions, fill_value=fill)
            copy.setncatts({k: var.getncattr(k) for k in var.ncattrs() if k != "_FillValue"})
            copy[:] = var[:]
    assert target.read_bytes()[:4] == b"CDF\x02"
    return target


def base_files(folder: Path) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of the real files, the CDF-2 copies included (made in ``folder``)."""
    bases = [(p.name, p.read_bytes()) for p in [*CLASSIC, *HDF5]]
    for p in CLASSIC:
        copy = cdf2_copy(p, folder / f"cdf2_{p.name}")
        bases.append((copy.name, copy.read_bytes()))
    return bases


def every_cut(
    bases: list[tuple[str, bytes]], up_to: int | None = None
) -> Iterator[tuple[str, bytes]]:
    """Each file cut at every length (below ``up_to`` only, when given)."""
    for name, data in bases:
        for n in range(min(len(data), up_to or len(data))):
            yield f"{name} cut at {n}", data[:n]


def random_cases(bases: list[tuple[str, bytes]], rng: random.Random) -> Iterator[tuple[str, bytes]]:
    """Endless: a random cut, one to three bit flips in the header, random bytes (after a
    netCDF signature or none), in turn."""
    while True:
        name, data = rng.choice(bases)
        n = rng.randrange(len(data))
        yield f"{name} cut at {n}", data[:n]
        name, data = rng.choice(bases)
        flipped = bytearray(data)
        flips = [
            (rng.randrange(min(len(data), HEADER_BYTES)), rng.randrange(8))
            for _ in range(rng.randint(1, 3))
        ]
        for at, bit in flips:
            flipped[at] ^= 1 << bit
        yield f"{name} flipped at {flips}", bytes(flipped)
        signature = rng.choice(SIGNATURES)
        noise = rng.randbytes(rng.randrange(1, 4096))
        yield f"{signature!r} + {len(noise)} random bytes", signature + noise


def outcome(path: Path, label: str) -> str:
    """``described`` or the MetadataError's code (its message must say why); AssertionError
    on any other exception."""
    try:
        netcdf.extract(path)
    except netcdf.MetadataError as exc:
        assert exc.code and exc.message, f"{label}: a MetadataError without a reason"
        return exc.code
    except Exception as exc:  # what the test looks for
        raise AssertionError(f"{label}: {type(exc).__name__}: {exc}") from exc
    return "described"
