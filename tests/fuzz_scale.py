"""How big the adversarial suites run (docs/reliability.md).

Short mode (``make test``, CI): fixed seeds, counts sized for the time budget. Long
mode (``make fuzz``, ``PYHARNESS_FUZZ=long``): every count raised, random seeds (the
seed is printed, and ``PYHARNESS_FUZZ_SEED`` replays one). ``PYHARNESS_FUZZ_REPORT``
names a file each suite appends its figures to (one JSON object a line).
"""

import json
import os
import random
import sys

from hypothesis import HealthCheck, settings

LONG = os.environ.get("PYHARNESS_FUZZ") == "long"
SEED = int(os.environ.get("PYHARNESS_FUZZ_SEED") or (random.randrange(2**32) if LONG else 0))


def scale(short: int, long: int) -> int:
    return long if LONG else short


def fuzz_settings(short: int, long: int) -> settings:
    """Hypothesis settings: ``derandomize`` (a fixed seed) in short mode; no example
    database on disk either way (runs are reproducible from the seed instead)."""
    return settings(max_examples=scale(short, long), derandomize=not LONG, deadline=None,
                    database=None, suppress_health_check=list(HealthCheck), print_blob=LONG)


def rng(name: str) -> random.Random:
    """A seeded generator for one suite (the seed is part of the report)."""
    return random.Random(f"{SEED}:{name}")


def report(suite: str, **figures: object) -> None:
    """Print one suite's figures (visible with ``-s``) and append them to the report."""
    line = {"suite": suite, "mode": "long" if LONG else "short", "seed": SEED,
            "platform": sys.platform, **figures}
    print(f"\n[fuzz] {json.dumps(line)}")
    path = os.environ.get("PYHARNESS_FUZZ_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
