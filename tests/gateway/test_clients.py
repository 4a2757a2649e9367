"""Tools nobody here wrote, unmodified, against the real stack (``ndnsci up``: forwarder,
producer, catalog with the gateway): esgf-pyclient, ESGF wget scripts run by bash with wget and
curl, curl, xarray (netCDF's byte-range mode) and intake-esm over HTTP, ``ndnsci gateway``."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import netCDF4
import numpy as np
import pytest
import xarray as xr
from pyesgf.search import SearchConnection
from support import free_port, wait_for

MODEL = "HadCM3"


def native(stack: Any, **params: Any) -> dict[str, Any]:
    response = httpx.get(
        f"{stack.catalog_url}/api/v1/search",
        params={"limit": 1000, "facet_limit": 1000, **params},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def dataset_of(name: str) -> str:
    return "cmip5." + ".".join(name.split("/")[2:11])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- esgf-pyclient --------------------------------------------------------------------------


@pytest.mark.parametrize("distrib", [False, True])
def test_pyesgf_datasets_and_their_files(stack, distrib, monkeypatch):
    monkeypatch.setenv("ESGF_PYCLIENT_NO_FACETS_STAR_WARNING", "1")
    conn = SearchConnection(stack.catalog_url + "/esg-search", distrib=distrib)
    ctx = conn.new_context(project="CMIP5", model=MODEL)
    files = native(stack, scheme="cmip5", model=MODEL)["results"]
    datasets: dict[str, list[dict[str, Any]]] = {}
    for f in files:
        datasets.setdefault(dataset_of(f["name"]), []).append(f)
    assert ctx.hit_count == len(datasets) > 1
    variables = Counter(
        variable for fs in datasets.values() for variable in {f["facets"]["variable"] for f in fs}
    )
    assert ctx.facet_counts["variable"] == dict(variables)
    found = ctx.search()
    assert len(found) == len(datasets)
    for result in found:
        instance, node = result.dataset_id.split("|")
        assert node == stack.catalog_url.removeprefix("http://")
        assert result.number_of_files == len(datasets[instance])
        in_dataset = {f["filename"]: f for f in datasets[instance]}
        listed = list(result.file_context().search())
        assert {f.filename for f in listed} == set(in_dataset)
        for file in listed:
            assert file.checksum == in_dataset[file.filename]["sha256"]
            assert file.checksum_type == "SHA256" and file.size == in_dataset[file.filename]["size"]
            assert file.tracking_id  # from the netCDF header
    one = listed[0]
    body = httpx.get(one.download_url, timeout=30).content
    assert hashlib.sha256(body).hexdigest() == one.checksum and len(body) == one.size


def test_pyesgf_file_counts_equal_the_native_search(stack):
    conn = SearchConnection(stack.catalog_url + "/esg-search", distrib=False)
    ctx = conn.new_context(search_type="File", facets="experiment,variable", variable=["tas", "pr"])
    mine = native(stack, variable=["tas", "pr"], facets="experiment,variable")
    assert ctx.hit_count == mine["total"] > 0
    assert ctx.facet_counts == {k: mine["facets"][k] for k in ("experiment", "variable")}
    negated = conn.new_context(
        search_type="File", facets="model", model=("not_equal", MODEL), variable="tas"
    )
    mine = native(stack, **{"model!": MODEL, "variable": "tas", "facets": "model"})
    assert negated.hit_count == mine["total"] > 0
    assert MODEL not in {f.json["model"][0] for f in negated.search()}


# --- ESGF wget scripts, run for real ----------------------------------------------------------


@pytest.fixture(scope="module")
def script(stack) -> str:
    conn = SearchConnection(stack.catalog_url + "/esg-search", distrib=False)
    text = conn.new_context(project="CMIP5", model=MODEL, variable="tas").get_download_script()
    assert "# ESG Federation download script" in text
    return str(text)


def entries(text: str) -> list[tuple[str, str, str]]:
    block = text.split("EOF--dataset.file.url.chksum_type.chksum")[1]
    found = re.findall(r"^'([^']+)' '([^']+)' 'SHA256' '([0-9a-f]{64})'$", block, re.MULTILINE)
    assert found
    return found


def run(text: str, where: Path, *flags: str, downloader: str = "wget") -> Any:
    path = where / "wget-test.sh"
    path.write_text(text)
    return subprocess.run(
        ["bash", str(path), *flags],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DOWNLOADER": downloader},
        check=False,
    )


@pytest.mark.parametrize("downloader", ["wget", "curl"])
def test_wget_script_downloads_verifies_and_skips_on_rerun(script, tmp_path, downloader):
    first = run(script, tmp_path, downloader=downloader)
    assert first.returncode == 0, first.stderr
    listed = entries(script)
    assert len(listed) == 3
    for name, _, checksum in listed:
        assert sha256(tmp_path / name) == checksum
    assert "done: 3 downloaded, 0 already complete, 0 replaced, 0 failed" in first.stdout
    stamps = {name: (tmp_path / name).stat().st_mtime_ns for name, _, _ in listed}
    again = run(script, tmp_path, downloader=downloader)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("Already downloaded and verified") == 3
    assert stamps == {name: (tmp_path / name).stat().st_mtime_ns for name, _, _ in listed}


def test_wget_script_fails_on_a_bad_checksum_and_keeps_the_rest(script, tmp_path):
    (bad_name, _, bad_sum), *rest = entries(script)
    tampered = script.replace(bad_sum, "0" * 64)
    result = run(tampered, tmp_path)
    assert result.returncode == 1
    assert f"{bad_name}: SHA-256 does not match" in result.stderr
    assert not (tmp_path / bad_name).exists() and not (tmp_path / f"{bad_name}.part").exists()
    assert all(sha256(tmp_path / name) == checksum for name, _, checksum in rest)
    kept = run(tampered, tmp_path / ".." / tmp_path.name, "-p")
    assert kept.returncode == 1 and (tmp_path / f"{bad_name}.bad").exists()


def test_wget_script_fails_when_a_file_cannot_be_downloaded(script, tmp_path):
    (name, url, _), *_ = entries(script)
    broken = script.replace(url, url.replace("/data/CMIP5/", "/data/CMIP5/nowhere/"))
    for downloader in ("wget", "curl"):
        result = run(broken, tmp_path, downloader=downloader)
        assert result.returncode == 1
        assert f"{name}: download failed" in result.stderr


@pytest.mark.parametrize("downloader", ["wget", "curl"])
def test_wget_script_replaces_a_changed_file_and_resumes_a_cut_one(script, tmp_path, downloader):
    assert run(script, tmp_path).returncode == 0
    (changed, _, changed_sum), (cut, _, cut_sum), _ = entries(script)
    (tmp_path / changed).write_bytes(b"changed locally")
    whole = (tmp_path / cut).read_bytes()
    (tmp_path / cut).unlink()
    (tmp_path / f"{cut}.part").write_bytes(whole[: len(whole) // 2])  # a run cut short
    result = run(script, tmp_path, downloader=downloader)
    assert result.returncode == 0, result.stderr
    assert f"{changed}: on disk but its SHA-256 does not match" in result.stderr
    assert "done: 2 downloaded, 1 already complete, 1 replaced, 0 failed" in result.stdout
    assert sha256(tmp_path / changed) == changed_sum and sha256(tmp_path / cut) == cut_sum
    assert not (tmp_path / f"{cut}.part").exists()


def test_wget_script_flags(script, tmp_path):
    usage = run(script, tmp_path, "-h")
    assert usage.returncode == 0 and "-s   skip the SHA-256 check" in usage.stdout
    dry = run(script, tmp_path, "-n")
    assert dry.returncode == 0 and dry.stdout.count("would download") == 3
    assert not any(tmp_path.glob("*.nc"))
    update = run(script, tmp_path, "-u", "-q")
    assert update.returncode == 0 and len(list(tmp_path.glob("*.nc"))) == 3
    unknown = run(script, tmp_path, "-Z")
    assert unknown.returncode == 1 and "unknown flag -Z" in unknown.stderr
    login = run(script, tmp_path, "-H", "-o", "https://openid.example/me")
    assert login.returncode == 0 and "no login is needed" in login.stdout


# --- plain HTTP tools ---------------------------------------------------------------------------


def _sample_file(stack: Any, sample_dir: Path, **facets: str) -> tuple[str, Path]:
    (record,) = native(stack, scheme="cmip5", **facets)["results"][:1]
    full = httpx.get(f"{stack.catalog_url}/api/v1/files{record['name']}", timeout=30).json()
    return record["name"], sample_dir / full["original_path"]


def test_curl_reads_whole_files_and_ranges(stack, sample_dir):
    name, path = _sample_file(stack, sample_dir, model=MODEL, variable="pr", experiment="rcp45")
    url = f"{stack.catalog_url}/data{name}"
    data = path.read_bytes()
    whole = subprocess.run(["curl", "-sSf", url], capture_output=True, timeout=60, check=True)
    assert whole.stdout == data
    part = subprocess.run(
        ["curl", "-sSf", "-r", "9000-20999", url], capture_output=True, timeout=60, check=True
    )
    assert part.stdout == data[9000:21000]
    missing = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url + "x"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert missing.stdout == "404"


def test_xarray_reads_a_slice_lazily_over_http(stack, sample_dir):
    name, path = _sample_file(stack, sample_dir, model=MODEL, variable="tas", experiment="rcp45")
    remote = xr.open_dataset(f"{stack.catalog_url}/data{name}#mode=bytes", engine="netcdf4")
    try:
        assert remote["tas"].shape[0] == 120
        piece = remote["tas"].isel(time=slice(10, 13), lat=slice(2, 5)).values
    finally:
        remote.close()
    with netCDF4.Dataset(path) as local:
        np.testing.assert_array_equal(piece, local["tas"][10:13, 2:5, :])


def test_intake_esm_opens_the_export_over_http(stack, sample_dir):
    import dask
    import intake

    url = f"{stack.catalog_url}/api/v1/export/intake-esm?scheme=cmip5&assets=url"
    esm = intake.open_esm_datastore(url, threaded=False)
    subset = esm.search(model=MODEL, experiment="historical", variable="tas")
    # one file at a time: netCDF-C's byte-range reads are not thread-safe (dask's threaded
    # scheduler opening two files at once crashed the process), as docs/esgf.md says
    with dask.config.set(scheduler="synchronous"):
        (dataset,) = subset.to_dataset_dict(progressbar=False).values()
    names = sorted(native(stack, model=MODEL, experiment="historical", variable="tas")["results"],
                   key=lambda r: r["name"])  # fmt: skip
    assert len(names) == 2
    values = dataset["tas"].isel(lat=0, lon=0).values.ravel()
    local = []
    for record in names:
        full = httpx.get(f"{stack.catalog_url}/api/v1/files{record['name']}", timeout=30).json()
        with netCDF4.Dataset(sample_dir / full["original_path"]) as nc:
            local.append(np.asarray(nc["tas"][:, 0, 0]))
    np.testing.assert_allclose(values, np.concatenate(local))


# --- the gateway on its own -----------------------------------------------------------------------


def test_ndnsci_gateway_serves_the_files_of_a_catalog_elsewhere(stack, sample_dir):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ndnsci", "gateway", "--catalog", stack.catalog_url,
         "--port", str(port)],
        env={**os.environ, "NDN_CLIENT_TRANSPORT": stack.transport},
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"

        def answering() -> bool:
            assert proc.poll() is None, "the gateway exited"
            httpx.get(base + "/data/x/y", timeout=2)
            return True

        wait_for(answering, 30, "the gateway", every=0.2, ignoring=httpx.TransportError)
        name, path = _sample_file(stack, sample_dir, model=MODEL, variable="psl")
        response = httpx.get(base + "/data" + name, headers={"Range": "bytes=100-"}, timeout=30)
        assert response.status_code == 206 and response.content == path.read_bytes()[100:]
        assert httpx.get(base + "/data/CMIP5/not/there.nc", timeout=30).status_code == 404
    finally:
        proc.terminate()
        proc.wait(10)
