"""Shared fixtures. ``DPVIZ_SEEDS=0,1,2`` sweeps the seed fixture over several seeds."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

# ----------------------------------------------------------------- one native thread per worker ---
#: Under pytest-xdist the workers are the suite's parallelism (one per core). numpy's BLAS and
#: scikit-learn's OpenMP each start one thread per core in every process besides, so on 2 cores
#: two workers (and the app servers, dask workers and command lines they start, which inherit
#: this environment) ran several spinning native threads per core: 20 ``KMeans`` fits of
#: tests/unit/test_reference_unbalanced.py took 8.6 s on a loaded machine, 0.44 s with one thread
#: (issue 45 item 5). Set before numpy is imported here; a value already set is kept.
ONE_THREAD = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _var in ONE_THREAD:
        os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402  (after the thread limits above)

_SEEDS = [int(s) for s in os.environ.get("DPVIZ_SEEDS", "0").split(",") if s.strip()]


@pytest.fixture(params=_SEEDS)
def seed(request: pytest.FixtureRequest) -> int:
    return request.param


@pytest.fixture
def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------- collection order ---

#: Test modules whose one run costs the most (``--durations``, issue 38), heaviest first. xdist
#: hands whole modules to its workers (``--dist loadfile``) in collection order when the Makefile
#: passes ``--no-loadscope-reorder`` (its default orders modules by their number of tests): a
#: heavy module started last kept one core busy minutes after the other had nothing left. Modules
#: not listed keep their order after these. A stale list costs balance, never a test.
HEAVY_FIRST = (
    "tests/app/test_statement_everywhere.py",
    "tests/unit/test_no_data_refusals.py",
    "tests/unit/test_audit.py",
    "tests/unit/test_packaging_wheel.py",
    "tests/unit/test_dask_cluster.py",
    "tests/unit/test_clustering_verdict.py",
    "tests/app/test_two_sessions.py",
    "tests/app/test_app.py",
    # the two SAME_WORKER groups below (each handed out as one unit, where its first module is)
    "tests/e2e/test_e2e_readme_walk.py",
    "tests/e2e/test_e2e_journeys_second.py",
    "tests/e2e/test_e2e_compare_first_screen.py",
    "tests/e2e/test_e2e_compare_ranking.py",
    "tests/e2e/test_e2e_lesson.py",
    "tests/e2e/test_e2e_main_panel.py",
    "tests/e2e/test_e2e_explore.py",
    "tests/e2e/test_e2e_offline.py",
    "tests/e2e/test_e2e_a11y.py",
    "tests/e2e/test_e2e_journeys.py",
    "tests/e2e/test_e2e_release_cancel.py",
    "tests/e2e/test_e2e_clipping.py",
    "tests/e2e/test_e2e_compare.py",
    "tests/unit/test_metrics.py",
    "tests/unit/test_fc_lesson.py",
)

#: Modules whose tests share no module-scoped fixture and that cost minutes (statement_everywhere's
#: every-algorithm check is ~20 AppTest runs through every page): xdist may hand out their tests
#: one by one instead of the whole module to one worker, which alone outlasted the other worker.
SPLIT_BY_TEST = frozenset({
    "tests/app/test_statement_everywhere.py",
    "tests/unit/test_no_data_refusals.py",
    "tests/unit/test_audit.py",
})


#: Browser modules that open the default lesson (150,000 rows) on their worker's shared server
#: (tests/e2e/conftest.py: one per APP_SCRIPT and PRECOMPUTED), by group: a group runs on one
#: worker, so that server computes the lesson once and the group's later modules read it from its
#: server-wide public cache (app/components/cache.PUBLIC; a first open of / cost ~5 s of server
#: CPU, a second session's ~0.3 s), and the precomputed-sweeps server is started on one worker
#: only. Which module runs first in a group is fixed (collection order), so is which one pays the
#: cold lesson. (issue 45)
SAME_WORKER = {
    "tests/e2e/test_e2e_lesson.py": "group: the default lesson",
    "tests/e2e/test_e2e_main_panel.py": "group: the default lesson",
    "tests/e2e/test_e2e_readme_walk.py": "group: the default lesson, precomputed sweeps",
    "tests/e2e/test_e2e_journeys_second.py": "group: the default lesson, precomputed sweeps",
    "tests/e2e/test_e2e_compare_first_screen.py": "group: the default lesson, precomputed sweeps",
    "tests/e2e/test_e2e_compare_ranking.py": "group: the default lesson, precomputed sweeps",
}


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, except that the modules in SPLIT_BY_TEST are split by test and those in
    SAME_WORKER go to one worker by group."""
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class FilesAndSplitModules(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return nodeid if path in SPLIT_BY_TEST else SAME_WORKER.get(path, path)

    return FilesAndSplitModules(config, log)


#: Unit and app tests measured at seconds each (``tests/slow_tests.txt``, made by ``make slow-list``):
#: marked ``slow`` here, so ``make check`` stays a quick inner loop; ``make test`` runs them all.
SLOW_LIST = Path(__file__).resolve().parent / "slow_tests.txt"


def slow_listed() -> frozenset[str]:
    """The node ids in :data:`SLOW_LIST` (comments and blank lines skipped); none when
    ``DPVIZ_SLOW_LIST=0`` (``make slow-list`` measures every test not slow by decorator)."""
    if os.environ.get("DPVIZ_SLOW_LIST", "1") == "0" or not SLOW_LIST.is_file():
        return frozenset()
    lines = (ln.strip() for ln in SLOW_LIST.read_text().splitlines())
    return frozenset(ln for ln in lines if ln and not ln.startswith("#"))


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    listed = slow_listed()
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
    rank = {path: i for i, path in enumerate(HEAVY_FIRST)}
    root = config.rootpath

    def module_rank(item: pytest.Item) -> int:
        try:
            path = item.path.relative_to(root).as_posix()
        except ValueError:
            return len(rank)
        return rank.get(path, len(rank))

    items.sort(key=module_rank)  # stable: tests keep their order inside a module


#: A module marked as a whole (``pytestmark = pytest.mark.slow``) is not even imported when the
#: run's ``-m`` deselects that marker (make check): collecting it only to deselect every test cost
#: its imports on every xdist worker.
_MODULE_MARK = re.compile(r"^pytestmark\s*=\s*pytest\.mark\.(\w+)\s*$", re.MULTILINE)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    expr = config.getoption("markexpr", "") or ""
    if " or " in f" {expr} " or "(" in expr:  # only a plain conjunction ("not a and not b")
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_") or not expr:
        return None
    marks = _MODULE_MARK.findall(collection_path.read_text(errors="replace"))
    if any(re.search(rf"\bnot\s+{mark}\b", expr) for mark in marks):
        return True
    return None
