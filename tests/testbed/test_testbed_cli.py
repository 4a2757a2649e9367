"""``ndnsci testbed`` without the network: root is required, bad input is refused before
anything is created, ``down`` and ``list`` work from the records."""

from __future__ import annotations

import json
import os

import pytest

from ndnsci.cli import main
from ndnsci.testbed import netns


@pytest.fixture
def state(tmp_path, monkeypatch):
    monkeypatch.setenv("NDNSCI_TESTBED_STATE", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.mark.parametrize(
    "argv",
    [
        ["testbed", "up"],
        ["testbed", "run", "link"],
        ["testbed", "down"],
    ],
)
def test_without_root_it_says_so_and_exits_2(argv, monkeypatch, capsys, state):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "needs root" in err and "sudo" in err
    assert not state.exists()  # nothing recorded, nothing made


def test_a_bad_topology_is_refused_before_anything_is_made(tmp_path, monkeypatch, capsys, state):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    bad = tmp_path / "bad.toml"
    bad.write_text("[nodes]\nx = { role = 'wizard' }\n")
    assert main(["testbed", "run", "link", "--topology", str(bad)]) == 2
    assert "role must be one of" in capsys.readouterr().err
    assert main(["testbed", "up", "--topology", "nosuch"]) == 2
    assert "no topology 'nosuch'" in capsys.readouterr().err
    assert not state.exists()


def test_unknown_experiment_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["testbed", "run", "teleport"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_down_of_an_unknown_testbed(monkeypatch, capsys, state):
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert main(["testbed", "down", "nsci-1"]) == 2
    assert "no testbed nsci-1" in capsys.readouterr().err


def test_list_and_down_of_a_stale_record(monkeypatch, capsys, state):
    """A record whose builder died and whose namespaces are already gone (a reboot)."""
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    record = netns.BedRecord(
        id="nsci-999999999",
        owner_pid=999999999,
        owner_start=None,
        topology="x",
        rundir=str(state / "nowhere"),
        namespaces=["nsci-999999999-a"],
    )
    record.save()
    assert main(["testbed", "list"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["id"] == "nsci-999999999" and listed["running"] is False
    assert main(["testbed", "down"]) == 0
    out = capsys.readouterr()
    assert "nsci-999999999 down" in out.err
    assert not record.path.exists()


def test_namespace_outside_the_testbed_is_refused(state):
    record = netns.BedRecord(id="nsci-5", owner_pid=5, owner_start=None, topology="x", rundir="")
    with pytest.raises(Exception, match="not named after testbed nsci-5"):
        netns.add_namespace(record, "someone-elses")
