"""Refresh the README screenshot: run the e2e test that takes it, then copy it to assets/.

    PYTHONPATH=. .venv/bin/python tests/e2e/update_screenshot.py

The test (test_e2e_explore.py::test_eps_slider_redraws_the_storyboard) opens Explore on the
Fig. 6 blobs at n = 20,000, ρ = 1, seed 0, checks that FriendlyCore completed, and saves the top
1500 px of the page (both storyboard rows) as tests/e2e/screenshots/explore.png.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHOT = ROOT / "tests" / "e2e" / "screenshots" / "explore.png"
TARGET = ROOT / "assets" / "screenshot.png"
TEST = "tests/e2e/test_e2e_explore.py::test_eps_slider_redraws_the_storyboard"


def main() -> int:
    SHOT.unlink(missing_ok=True)
    code = subprocess.call([sys.executable, "-m", "pytest", TEST, "-q", "-p", "no:cacheprovider"],
                           cwd=ROOT)
    if code != 0 or not SHOT.is_file():
        print(f"the screenshot test failed (exit {code}); {TARGET} left unchanged", file=sys.stderr)
        return code or 1
    shutil.copyfile(SHOT, TARGET)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
