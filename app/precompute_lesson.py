"""Ship the default lesson's non-private reference k-means (issue 33 item 2).

    PYTHONPATH=. .venv/bin/python -m app.precompute_lesson [--check]

Writes ``app/precomputed/lesson_reference.json`` (:mod:`app.components.shipped`): for each lesson
of :data:`app.components.shipped.LESSONS` (the default lesson: Fig. 6 blobs, n = 150,000, k = 8),
the reference Explore computes on its first screen (``dpviz.metrics.reference_kmeans(X, k,
rng=0)``), keyed by the dataset's content hash and k, with the hash of the code that computes it.
The app uses an entry only while that hash matches the running code, and says so on screen.
A non-private diagnostic of public synthetic data (a recipe, never an upload).

``--check`` recomputes every entry and compares it with the file (exit 1 on a difference or a
stale code hash). ``make precompute`` runs this script.
"""

from __future__ import annotations

import argparse
import json
import sys

import dpviz.data
from app.components import shipped, state
from app.components.data_source import generator_kwargs


def lesson_dataset(lesson: dict):
    """The lesson's generated dataset, built as the app builds it (``data_source.generate``: the
    generator's knobs at the app's defaults, the lesson's gen, n and data seed)."""
    p = {**state.defaults(), **lesson}
    spec = dpviz.data.GENERATORS[p["gen"]]
    return spec(int(p["n"]), rng=int(p["dseed"]), **dict(sorted(generator_kwargs(p).items())))


def build() -> dict:
    entries = []
    for lesson in shipped.LESSONS:
        ds = lesson_dataset(lesson)
        entry = shipped.compute(ds.X, int(lesson["k"]))
        entries.append({"lesson": lesson, "content_hash": ds.content_hash, **entry})
        print(f"{lesson}: cost {entry['cost']:.6g} in {entry['seconds']:.1f} s", flush=True)
    return {"what": "the non-private reference k-means of the app's default lesson(s): a seeded "
                    "diagnostic of public synthetic data, never a release",
            "command": shipped.COMMAND, "code_hash": shipped.code_hash(),
            "package_versions": list(shipped.package_versions()), "entries": entries}


def check() -> int:
    doc = json.loads(shipped.PATH.read_text())
    if doc.get("code_hash") != shipped.code_hash():
        print(f"stale: made under code hash {doc.get('code_hash')}, the code is now "
              f"{shipped.code_hash()}; run `{shipped.COMMAND}`")
        return 1
    bad = 0
    for e in doc["entries"]:
        ds = lesson_dataset(e["lesson"])
        again = shipped.compute(ds.X, int(e["k"]))
        same = (ds.content_hash == e["content_hash"] and again["centers"] == e["centers"]
                and again["cost"] == e["cost"] and again["recipe"] == e["recipe"])
        bad += not same
        print(f"{e['lesson']}: {'same' if same else 'DIFFERENT'}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="recompute and compare with the file")
    args = ap.parse_args(argv)
    if args.check:
        return check()
    doc = build()
    shipped.PATH.parent.mkdir(parents=True, exist_ok=True)
    shipped.PATH.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {shipped.PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
