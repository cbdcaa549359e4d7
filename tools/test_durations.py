"""Write tests/durations.json from the output of a run with ``--durations=0``.

tests/conftest.py orders the test files of `make test`'s parallel pass by it, longest first, so
no long file starts last and leaves a core idle. Regenerate it when files grow or slow down::

    PYTEST_ADDOPTS=--durations=0 make test 2>&1 | tee build/test.log
    .venv/bin/python tools/test_durations.py build/test.log

A test's time is its set-up, call and tear-down; tests under ``--min-s`` are left out (they
count as 0 s).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
# "12.34s call     tests/x.py::test_y[param]" (pytest's --durations lines)
LINE = re.compile(r"(\d+\.\d+)s (?:setup|call|teardown) +(tests/\S+::\S+)")


def durations(text: str) -> dict[str, float]:
    """Seconds per test id: set-up, call and tear-down summed over every pass in ``text``."""
    seconds: dict[str, float] = {}
    for match in LINE.finditer(text):
        seconds[match[2]] = seconds.get(match[2], 0.0) + float(match[1])
    return seconds


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("logs", nargs="+", type=Path, help="pytest output with --durations=0")
    p.add_argument("--min-s", type=float, default=1.0, help="leave out faster tests (1.0)")
    p.add_argument("--out", type=Path, default=TESTS / "durations.json")
    args = p.parse_args(argv)
    seconds = durations("\n".join(log.read_text() for log in args.logs))
    kept = {test: round(s) for test, s in sorted(seconds.items()) if s >= args.min_s}
    args.out.write_text(json.dumps(kept, indent=0) + "\n")
    print(f"{args.out}: {len(kept)} tests of {args.min_s} s or more ({len(seconds)} timed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
