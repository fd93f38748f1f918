"""``pyharness bench`` (also ``python -m tooling.bench``)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from . import FULL, SMOKE, SMOKE_FLAGS, run, snapshot_probe, table, to_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    parser.add_argument("--bundle", type=Path, default=Path("dist"),
                        help="the built bundle (default dist/; built if missing)")
    parser.add_argument("--smoke", action="store_true",
                        help="every step once at small sizes, in a browser with WebAssembly "
                             "on the baseline compiler only, to prove the bench runs "
                             "(make test's row); the figures mean nothing")
    parser.add_argument("--snapshot-probe", action="store_true",
                        help="only compare a boot from a memory snapshot of the runtime "
                             "with a normal one (docs/performance.md)")


def run_cli(args: argparse.Namespace) -> int:
    if not (args.bundle / "pyharness.mjs").exists():
        from ..build.bundle import build

        build(args.bundle.resolve())
    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.snapshot_probe:
        report = snapshot_probe(args.bundle.resolve(), max(1, args.reps), log=log)
        print(to_json(report) if args.json else table({**report, "detail": {}}))
    else:
        if args.smoke:
            log("smoke run: every step once at small sizes; its figures mean nothing")
        report = run(args.bundle.resolve(), 1 if args.smoke else max(1, args.reps), log=log,
                     sizes=SMOKE if args.smoke else FULL,
                     flags=SMOKE_FLAGS if args.smoke else ())
        print(to_json(report) if args.json else table(report))
    finite = all(math.isfinite(v) for k, v in report.items() if k != "detail")
    return 0 if finite else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyharness bench", description=__doc__)
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
