"""The app's server-path release on a large table (issue 17: "the app opens a 1e7-row Parquet file
and produces a release within the targets").

Drives the Data page's server-path panel (`app/components/server_path.py`) headlessly with
Streamlit's AppTest, in this process: type the path, declare n, Λ, k, ε, confirm that they are
public, press Release, and wait for the streamed release. Prints the wall time of the release,
this process's peak RSS and the release's guarantee. Make the files first with
`bench/scale.py` (they land in bench/out/), e.g.::

    PYTHONPATH=. .venv/bin/python bench/app_server_path.py --dir bench/out \\
        --path blobs_10000000.parquet --n 10000000 --k 16 --algorithm auto
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="the server data directory (DPVIZ_SERVER_DATA_DIR)")
    ap.add_argument("--path", required=True, help="the table, relative to --dir")
    ap.add_argument("--n", type=int, required=True, help="the declared number of rows")
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--eps", type=float, default=3.0)
    ap.add_argument("--radius", type=float, default=1.0)
    ap.add_argument("--algorithm", default="auto")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args()
    os.environ["DPVIZ_SERVER_DATA_DIR"] = str(Path(args.dir).resolve())
    import tempfile

    os.environ.setdefault("DPVIZ_LEDGER_DIR", tempfile.mkdtemp(prefix="dpviz_bench_ledgers_"))
    sys.path.insert(0, str(ROOT / "tests" / "app"))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app" / "main.py"), default_timeout=args.timeout)
    at.run()
    at.switch_page("views/data.py").run()
    at.text_input(key="srv_path").input(args.path).run()
    at.text_input(key="srv_dataset_id").input(f"bench {args.path}")
    at.selectbox(key="srv_algorithm").set_value(args.algorithm)
    at.number_input(key="srv_k").set_value(args.k)
    at.number_input(key="srv_eps").set_value(args.eps)
    at.number_input(key="srv_n").set_value(args.n)
    at.number_input(key="srv_radius").set_value(args.radius)
    at.run()
    at.checkbox(key="srv_confirm").check().run()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    at.button(key="srv_run").click().run()
    wall = time.perf_counter() - t0
    if at.exception:
        raise SystemExit(f"the page raised: {[e.value for e in at.exception]}")
    if "_srv_result" not in at.session_state:
        errors = [e.value for e in at.error]
        raise SystemExit(f"no release: {errors}")
    res = at.session_state["_srv_result"][0]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("| table | algorithm (ran) | wall (s) | peak RSS (MB) | RSS before Release (MB) | guarantee "
          "| failure |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.path} (n = {args.n:,}) | {args.algorithm} ({res.algorithm}) | {wall:.1f} | {peak:.0f} | "
          f"{before:.0f} | (ε = {res.guarantee.eps:.3g}, δ = {res.guarantee.delta:.2g}) | {res.failure} |")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
