"""The notebooks (notebooks/*.ipynb) run from top to bottom, as ``jupyter execute`` runs them.

Each starts its own local stack (forwarder, catalog, producer, sample archive) and stops it.
"""

from __future__ import annotations

from pathlib import Path

import nbclient
import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
CELL_TIMEOUT = 120


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, ndnd_binary, tmp_path, monkeypatch):
    # the kernel inherits the environment: keys and digests in the test's folder, not $HOME
    monkeypatch.setenv("NDNSCI_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("NDNSCI_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NDND", str(ndnd_binary))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    errors = [
        output
        for cell in notebook.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors
