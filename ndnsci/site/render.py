"""``ndnsci site render systemd -c FILE``: the site as a systemd unit.

One unit, ``ndnsci-site-<name>.service``, runs ``ndnsci site up -c FILE`` (the supervisor) in
the foreground. One unit rather than one a part: the supervisor already starts the parts in
order, waits for each to be ready, restarts a part that dies with back-off and stops them in
reverse order; a unit a part would say the same again in ``After=``/``Requires=`` and
``Restart=`` lines, and the ports, sockets and catalog URL each part is given at start (free
ports, the forwarder's socket) would have to be fixed in the units. systemd restarts the
supervisor if it dies (``Restart=on-failure``); ``KillMode=mixed`` sends SIGTERM to the
supervisor alone (it stops the parts in order), then SIGKILL to whatever is left after
``TimeoutStopSec``.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from ndnsci.site.config import SiteConfig

STOP_SECONDS = 90


def unit_name(config: SiteConfig) -> str:
    return f"ndnsci-site-{config.name}.service"


def systemd_unit(config: SiteConfig, python: str = sys.executable) -> str:
    """The text of the site's unit file."""
    command = shlex.join([python, "-m", "ndnsci", "site", "up", "-c", str(config.path.resolve())])
    roots = " ".join(str(root.path) for root in config.data)
    return f"""\
# written by `ndnsci site render systemd -c {config.path.resolve()}`
# edit the TOML, then render again
[Unit]
Description=ndnsci site {config.name} ({config.prefix}): forwarder, catalog, producers, gateway
After=network-online.target
Wants=network-online.target
{f"RequiresMountsFor={roots}" if roots else ""}

[Service]
Type=simple
ExecStart={command}
Environment=PYTHONUNBUFFERED=1
KillMode=mixed
KillSignal=SIGTERM
TimeoutStopSec={STOP_SECONDS}
Restart=on-failure
RestartSec=5

[Install]
WantedBy=multi-user.target
"""


def write_systemd(config: SiteConfig, folder: Path) -> list[Path]:
    """Write the unit into ``folder``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / unit_name(config)
    path.write_text(systemd_unit(config))
    return [path]
