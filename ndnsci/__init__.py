"""ndnsci: find climate and high-energy-physics files by what they are, fetch them over NDN.

The package import is light: heavy parts (netCDF4, xarray, the catalog service) are imported by
the code that needs them.

>>> import ndnsci
>>> ndnsci.translate("tas_Amon_HadCM3_historical_r1i1p1_185001-200512.nc").ok
True
"""

from .translators import Translation, reverse, translate

__version__ = "0.1.0"

__all__ = ["Translation", "__version__", "reverse", "translate"]
