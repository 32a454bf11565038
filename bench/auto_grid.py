"""Superseded (issue 24): ``auto``'s rule is measured by ``bench/auto_calibrate.py``.

This script gave the calibration data and the algorithms the same int seed (its DP-Lloyd runs
started at the true centers), so the rule it wrote was contaminated. It now forwards to
``bench/auto_calibrate.py`` (run through ``bench/harness.py``)::

    PYTHONPATH=. .venv/bin/python bench/auto_grid.py run ...   # = bench/auto_calibrate.py run ...
"""

from __future__ import annotations

import sys

from bench.auto_calibrate import main

if __name__ == "__main__":
    main(sys.argv[1:])
