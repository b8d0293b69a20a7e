"""``payconform run | check | profile check | profile suggest | serve | receiver | baseline update | report diff |
report matrix`` and ``payconform --version``.

``parser`` holds the command line, ``exit_codes`` what each exit code means; ``run``, ``check``, ``gate``,
``profile``, ``serve`` and ``reports`` one command each (``pytest_proc`` and ``outcome``: the pytest run of
``payconform run`` and its exit code); ``payconform receiver`` is the webhook-receiver kit
(``payconform.receiver``). The commands are imported when one runs, so that ``exit_codes`` imports alone.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: arguments after ``--`` go to pytest unchanged."""
    from ..receiver import cli as receiver_cli
    from .check import cmd_check
    from .exit_codes import ExitCode
    from .parser import build_parser
    from .profile import cmd_profile
    from .reports import cmd_baseline, cmd_report
    from .run import cmd_run
    from .serve import cmd_serve

    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args:
        i = args.index("--")
        args, extra = args[:i], args[i + 1:]
    parser = build_parser()
    ns = parser.parse_args(args)
    if ns.command == "run":
        extra = list(ns.pytest_args) + extra
        return cmd_run(ns, extra)
    if ns.command == "check":
        return cmd_check(ns)
    if ns.command == "profile":
        return cmd_profile(ns)
    if ns.command == "receiver":
        return receiver_cli.run(ns)
    if ns.command == "serve":
        return cmd_serve(ns)
    if ns.command == "baseline":
        return cmd_baseline(ns)
    if ns.command == "report":
        return cmd_report(ns)
    parser.print_help(sys.stderr)
    return ExitCode.USAGE
