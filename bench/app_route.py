"""Count the source files on the call stack whenever an ε-slider step draws noise (issue 45).

    PYTHONPATH=. .venv/bin/python bench/app_route.py friendlycore | tree_coreset | <registered name>

A profile hook on every thread records, at each call into dpviz/privacy/mechanisms.py, the files
(under app/ and dpviz/) of every frame on that stack; the union over one ε step of Explore (after
a first open, with DPVIZ_PREFETCH=0 so the step computes its own run on the script thread) is the
route "from the ε slider to the noise"."""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

os.environ["DPVIZ_PREFETCH"] = "0"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "app"))
from apptest_helpers import SMALL, open_app  # noqa: E402

alg = sys.argv[1]
seen: set[str] = set()
on = [False]
MECH = str(ROOT / "dpviz" / "privacy" / "mechanisms.py")


def hook(frame, event, arg):
    if not on[0] or event != "call" or frame.f_code.co_filename != MECH:
        return
    f = frame
    while f is not None:
        fn = f.f_code.co_filename
        if fn.startswith(str(ROOT / "app")) or fn.startswith(str(ROOT / "dpviz")):
            seen.add(os.path.relpath(fn, ROOT))
        f = f.f_back


q = dict(SMALL, eps="3.0")
if alg != "friendlycore":
    q["alg"] = alg
at = open_app(**q)
assert not at.exception, at.exception
sys.setprofile(hook)
threading.setprofile(hook)
on[0] = True
at.select_slider(key="eps_slider").set_value(2.0).run()
on[0] = False
assert not at.exception, at.exception
print(alg, len(seen))
for s in sorted(seen):
    print("  ", s)
