"""``ndnsci site check|up|down|status|logs|render -c FILE``: a site in one TOML file (docs/site.md).

- ``check`` reads and validates the file (every error names the file, the line and the key,
  and says what to write instead; exit 2, nothing started); ``--json`` prints the
  configuration with its defaults filled in;
- ``up`` starts the parts in order and supervises them in the foreground until SIGTERM or
  Ctrl-C (``--detach``: in the background, returning once every part is up);
- ``status`` (``--json``) says what runs: each part's pid, state, up-since, restarts, health
  (exit 3 when the site is not running); ``down`` stops it from any process;
- ``logs [PART]`` prints the end of each part's log (``-n LINES``);
- ``render systemd`` writes the site's systemd unit (``-o DIR``, default: the current folder).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ndnsci.cli._common import fail


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "site",
        help="run a site described by one TOML file (check, up, down, status)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in (
        ("check", "validate the configuration, start nothing"),
        ("up", "start the site's parts and supervise them (foreground)"),
        ("down", "stop a site started by `up`"),
        ("status", "what runs: each part's pid, up-since, restarts, health"),
        ("logs", "the end of each part's log"),
        ("render", "write the site's service unit(s): render systemd"),
    ):
        a = actions.add_parser(name, help=text, description=text)
        if name == "render":
            a.add_argument("kind", choices=("systemd",), help="what to write")
            a.add_argument("-o", "--output", metavar="DIR", default=".", help="folder (.)")
        if name == "logs":
            a.add_argument("part", nargs="?", help="one part (default: all)")
            a.add_argument("-n", "--lines", type=int, default=20, help="lines a part (20)")
        a.add_argument("-c", "--config", metavar="FILE", required=True, help="the site's TOML")
        if name in ("check", "status"):
            a.add_argument("--json", action="store_true", help="JSON on stdout")
        if name == "up":
            a.add_argument(
                "--detach",
                action="store_true",
                help="run the supervisor in the background; return once all is up",
            )
        a.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ndnsci.errors import SiteConfigError, StackError
    from ndnsci.site import config as site_config

    command = f"site {args.action}"
    try:
        config = site_config.load(args.config, check_ports=args.action == "check")
        if args.action == "up":
            from ndnsci.site import supervisor

            other = supervisor.running(config)
            if other is not None:  # said before a port of its own is found in use
                return fail(command, supervisor.already(config, other), 1)
            config = site_config.load(args.config)
    except SiteConfigError as exc:
        return fail(command, exc)
    except StackError as exc:
        return fail(command, exc, 1)
    if args.action == "check":
        if args.json:
            print(json.dumps(site_config.to_dict(config), indent=1))
        else:
            print(f"{config.path}: site {config.name} ({config.prefix}): configuration OK")
        return 0
    if args.action == "render":
        from pathlib import Path

        from ndnsci.site import render

        for path in render.write_systemd(config, Path(args.output)):
            print(path)
        return 0
    from ndnsci.site import supervisor

    try:
        if args.action == "up" and args.detach:
            state = supervisor.detach(config)
            print(f"site {config.name}: up, supervisor pid {state.supervisor}, "
                  f"catalog {state.catalog_url}")  # fmt: skip
            return 0
        if args.action == "up":
            return supervisor.Supervisor(config, log=sys.stderr).run()
        if args.action == "logs":
            for part, text in supervisor.logs(config, args.part, args.lines).items():
                print(f"== {part} ==")
                print(text)
            return 0
        if args.action == "down":
            stopped = supervisor.down(config)
            print(f"site {config.name}: " + ("stopped" if stopped else "not running"))
            return 0
        status = supervisor.status(config)
    except StackError as exc:
        return fail(command, exc, 1)
    if args.json:
        print(json.dumps(status, indent=1))
    else:
        print(f"site {config.name}: " + ("running" if status["running"] else "not running"))
        for part, info in status["parts"].items():
            print(f"  {part:10} {info['state']:8} pid {info['pid']} since {info['since']} "
                  f"restarts {info['restarts']}")  # fmt: skip
        if status["running"]:
            print(f"  catalog at {status['catalog_url']}: {_catalog_health(status)}")
    return 0 if status["running"] else 3


def _catalog_health(status: dict[str, Any]) -> str:
    """The catalog's health in a few words: ok (and over verified TLS), or what failed."""
    health = status["parts"].get("catalog", {}).get("health")
    if not isinstance(health, dict):
        return "not asked (down)"
    if "error" in health:
        return f"does not answer: {health['error']}"
    said = str(health.get("status", "?"))
    if "tls" in health:
        said += f", https with the certificate {health['tls']['cert']} (verified)"
    return said
