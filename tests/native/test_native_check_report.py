"""``ndnsci native check``'s report as a function: a check that cannot read what it looks at
(an unprivileged user and root's build cache) is a finding, not a traceback. The real machine's
report, as root and as nobody: test_native_check."""

from __future__ import annotations

import pytest

from ndnsci.native import check


def test_a_folder_a_check_cannot_read_is_its_finding_and_the_rest_still_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable() -> check.Finding:
        raise PermissionError(13, "Permission denied", "/var/cache/ndnsci/native")

    monkeypatch.setattr(check, "_build", unreadable)
    report = check.run(pages=0)
    by_name = {finding.name: finding for finding in report.findings}
    assert list(by_name) == [
        "cpu", "kernel", "io_uring", "privileges", "hugepages", "memif", "veth", "build", "ndnc"
    ]  # fmt: skip
    build = by_name["build"]
    assert not build.ok and build.required
    assert build.detail == "could not be checked: Permission denied: /var/cache/ndnsci/native"
    assert not report.built
