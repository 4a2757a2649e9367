"""Write the quick look's end-to-end file: a sample CMIP5 file with a second variable.

    python quicklook_file.py SOURCE.nc DEST.nc

DEST keeps SOURCE's attributes and name (so `ndnsci publish` names it by the CMIP5 DRS) and
gains ``tasmin`` = tasmax - 10 K: the metadata panel then has two variables to switch between.
"""

import sys

import xarray as xr

source, dest = sys.argv[1], sys.argv[2]
with xr.open_dataset(source, decode_times=False) as ds:
    ds = ds.load()
tasmin = ds["tasmax"] - 10.0
tasmin.attrs = {**ds["tasmax"].attrs, "long_name": "Daily Minimum Near-Surface Air Temperature"}
ds["tasmin"] = tasmin
ds.to_netcdf(dest)
