"""Write ``tests/slow_tests.txt``: the unit and app tests that take ``--threshold`` seconds or more
in a JUnit report of the ``make check`` selection (measured with ``DPVIZ_SLOW_LIST=0``, so that
tests listed before are measured again), which ``tests/conftest.py`` marks ``slow`` so that
``make check`` (the inner loop, issue 38) leaves them to ``make test`` (which runs every test).

    make slow-list          # on a quiet machine: runs the check selection, then this script

Usage: ``python tests/slow_list.py REPORT.xml [--threshold 2.0]``. A test's time in the report is
its setup, call and teardown (a module fixture's setup counts in its first test).
"""

from __future__ import annotations

import argparse
import xml.etree.ElementTree as ET
from pathlib import Path

OUT = Path(__file__).resolve().parent / "slow_tests.txt"
HEADER = """\
# Unit and app tests measured at >= {threshold:g} s each on a 2-core machine (setup + call +
# teardown). tests/conftest.py marks them `slow`: `make check` skips them, `make test` runs them.
# Made by `make slow-list` (tests/slow_list.py); a listed test that no longer exists fails
# tests/unit/test_slow_list.py.
"""


def node_id(case: ET.Element) -> str:
    """pytest's node id of a JUnit test case (``tests/app/test_x.py::Class::test[param]``)."""
    parts = case.get("classname", "").split(".")
    path = [p for p in parts if not p[:1].isupper()]
    classes = [p for p in parts if p[:1].isupper()]
    return "::".join(["/".join(path) + ".py", *classes, case.get("name", "")])


def slow_ids(report: Path, threshold: float) -> list[str]:
    cases = ET.parse(report).getroot().iter("testcase")
    return sorted({node_id(c) for c in cases
                   if float(c.get("time", 0)) >= threshold and c.find("skipped") is None
                   and node_id(c).startswith(("tests/unit/", "tests/app/"))})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report", type=Path)
    ap.add_argument("--threshold", type=float, default=1.0)
    args = ap.parse_args()
    ids = slow_ids(args.report, args.threshold)
    OUT.write_text(HEADER.format(threshold=args.threshold) + "".join(f"{i}\n" for i in ids))
    print(f"{len(ids)} tests at >= {args.threshold:g} s -> {OUT}")


if __name__ == "__main__":
    main()
