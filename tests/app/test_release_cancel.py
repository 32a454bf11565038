"""The Release page runs its release through the job controller (app.components.jobs): progress
in public words (no stage name; the elapsed time in whole minutes only: issue 34, G), the attempt
booked write-ahead at its full target before a row is read (B), a Cancel that takes effect at the
next stage boundary and marks it cancelled, nothing of a cancelled run shown or exported, and no
cross-session state on the rows (E): another session — a reload included, same data or not — sees
only "a release of this identity is running" and can neither attach to the run nor cancel it.

The real ``dpviz.registry.run`` runs; a wrapper holds its progress hook at the "budget plan"
stage until the test lets it go, so the test acts while the release is certainly running."""

from __future__ import annotations

import re
import threading

import pytest
from apptest_helpers import SMALL, TIMEOUT, fill_release_form, has_container, open_app, texts

import dpviz.registry
from dpviz.privacy.ledger_store import LedgerStore

ID = "cancel test"
EPS = 1.0
#: Every progress line the page may show: public words and the elapsed time in whole minutes.
PROGRESS = re.compile(r"^(Drawing the release|Cancelling at the next stage boundary…) · running for "
                      r"(under a minute|about 1 minute|about \d+ minutes)$")


class Held:
    """``dpviz.registry.run`` with its progress hook held at ``stage`` until :meth:`go`."""

    def __init__(self, stage: str = dpviz.registry.STAGE_PLAN) -> None:
        self.stage, self.reached, self.gate = stage, threading.Event(), threading.Event()
        self.heard: list[str] = []
        self.real = dpviz.registry.run

    def __call__(self, *args, progress=None, **kwargs):
        if kwargs.get("cancel") is None:  # not the release (e.g. the app's prefetch worker, which
            # may call dpviz.run while the patch is in place): passed through, never heard or held
            return self.real(*args, progress=progress, **kwargs)

        def hook(stage: str) -> None:
            self.heard.append(stage)
            progress(stage)
            if stage == self.stage:
                self.reached.set()
                assert self.gate.wait(TIMEOUT)

        return self.real(*args, progress=hook, **kwargs)

    def go(self) -> None:
        self.gate.set()


def _form(at, identity: str = ID):
    fill_release_form(at, algorithm="friendlycore", k=4, n=3000, eps=EPS, identity=identity)


def _start(at, held: Held):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpviz.registry, "run", held)
        at.button(key="release_button").click().run()
    assert held.reached.wait(TIMEOUT), "the release never reached its held stage"
    at.run()  # the page as the polling fragment shows it while the job runs
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["_job_release"]


def _finish(at, job) -> None:
    assert job.wait(TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_progress_is_public_and_a_release_still_completes(ledger_dir):
    at = open_app("release", **SMALL)
    _form(at)
    held = Held()
    job = _start(at, held)
    (bar,) = at.progress
    assert PROGRESS.match(bar.text), bar.text
    assert bar.text == "Drawing the release · running for under a minute"  # no stage, no seconds
    assert bar.proto.value == 0  # the bar's fill does not step with the stages either
    assert at.button(key="release_button").disabled  # one attempt at a time
    assert at.button(key="release_cancel").proto.help.startswith("Cancels at the next stage boundary")
    (e,) = LedgerStore(ledger_dir).entries(ID)  # booked write-ahead, before the run read a row
    assert (e["outcome"], e["state"], e["epsilon"], e["delta"]) == ("open", "running", EPS, 1e-6)
    held.go()
    _finish(at, job)
    assert held.heard == list(dpviz.registry.stages("friendlycore", n_declared=3000))
    assert "Released. Total on this dataset identity" in texts(at)
    assert has_container(at, "release_output") and not at.progress
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert (e["outcome"], e["surface"]) == ("release", "release-page") and e["epsilon"] <= EPS


def test_cancel_books_the_full_target_and_shows_nothing_of_the_run(ledger_dir):
    at = open_app("release", **SMALL)
    _form(at)
    store = LedgerStore(ledger_dir)
    before = store.total(ID)
    held = Held()
    job = _start(at, held)
    at.button(key="release_cancel").click().run()
    assert job.cancel.is_set()
    (bar,) = at.progress
    assert bar.text.startswith("Cancelling at the next stage boundary… · "), bar.text
    held.go()  # the run reaches the next boundary (before the non-private stage) and stops there
    _finish(at, job)
    assert held.heard == [dpviz.registry.STAGE_PLAN]  # no later stage ran
    (e,) = store.entries(ID)
    assert (e["outcome"], e["surface"], e["epsilon"], e["delta"]) == ("cancelled", "release-page", EPS, 1e-6)
    assert store.total(ID)[0] == pytest.approx(before[0] + EPS)
    page = texts(at)
    assert "Cancelled: the attempt was booked at ε = 1, δ = 1e-06, because the run had started reading " \
           "the data" in page
    assert not has_container(at, "release_output")
    assert all(b.key != "release_download" for b in at.get("download_button"))
    assert at.session_state["_releases"].get(f"id:{ID}", []) == []
    at.run()  # shown once: a rerun neither repeats the message nor books again
    assert "Cancelled" not in texts(at) and len(store.entries(ID)) == 1


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_run_interrupted_by_any_exception_is_booked_as_cancelled(ledger_dir):
    """A BaseException in the worker (not a failure the library raised) still books the attempt."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    def interrupted(*args, **kwargs):
        raise StopException()

    at = open_app("release", **SMALL)
    _form(at)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpviz.registry, "run", interrupted)
        at.button(key="release_button").click().run()
    _finish(at, at.session_state["_job_release"])
    (e,) = LedgerStore(ledger_dir).entries(ID)
    assert (e["outcome"], e["epsilon"]) == ("cancelled", EPS)


@pytest.mark.parametrize("same_data", [True, False])
def test_another_session_sees_only_that_a_release_of_the_identity_runs(ledger_dir, same_data):
    """Issue 34, E: a reload (a new session) on the same identity used to attach to the running job
    exactly when the data were byte-identical — an oracle on another person's data — with its
    Cancel. Now the other session shows the same one sentence whatever its data, no progress, no
    Cancel, and the attempt is booked once."""
    first = open_app("release", **SMALL)
    _form(first, identity="reload test")
    held = Held()
    job = _start(first, held)
    again = open_app("release", **(SMALL if same_data else dict(SMALL, seed="2")))
    again.text_input(key="release_dataset_id").input("reload test").run()
    assert not again.exception, [e.value for e in again.exception]
    assert "_job_release" not in again.session_state  # nothing attached to this session
    assert not again.progress and all(b.key != "release_cancel" for b in again.button)
    assert "A release of this dataset identity is running" in texts(again)
    assert has_container(again, "release_locked") and again.button(key="release_button").disabled
    held.go()
    _finish(first, job)
    again.button(key="release_check_again").click().run()  # the page looks again when asked
    assert not has_container(again, "release_locked") and not has_container(again, "release_output")
    (e,) = LedgerStore(ledger_dir).entries("reload test")
    assert e["outcome"] == "release"


def test_the_lock_notice_does_not_follow_the_other_sessions_run(ledger_dir, monkeypatch):
    """Issue 46, item 3: the notice was a fragment polled every second that redrew the page the
    moment the lock freed, so every other session learnt when the run started and ended, to the
    second. Now nothing on that page asks the browser to rerun on a timer, and the notice names no
    time."""
    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    timers: list[float] = []
    real = LocalScriptRunner.forward_msgs

    def spy(self):
        msgs = real(self)
        timers.extend(m.auto_rerun.interval for m in msgs if m.WhichOneof("type") == "auto_rerun")
        return msgs

    first = open_app("release", **SMALL)
    _form(first, identity="timing test")
    held = Held()
    job = _start(first, held)
    monkeypatch.setattr(LocalScriptRunner, "forward_msgs", spy)
    again = open_app("release", **SMALL)
    again.text_input(key="release_dataset_id").input("timing test").run()
    assert has_container(again, "release_locked")
    assert timers == []  # no polling: the page changes only when this session reruns
    notice = " ".join(str(i.value) for i in again.info)
    assert not re.search(r"\d\d?:\d\d|\d+ (s|sec|second|minute)", notice), notice
    monkeypatch.undo()
    held.go()
    _finish(first, job)


def test_two_sessions_clicking_at_once_start_one_release(ledger_dir):
    """Both pages were drawn (and accepted) before either clicked: the second click finds the
    first release running on the identity and starts nothing. (Sequential clicks; the atomicity
    of the check for truly simultaneous ones is the next test's.)"""
    first, second = open_app("release", **SMALL), open_app("release", **SMALL)
    _form(first, identity="twice")
    _form(second, identity="twice")
    held = Held()
    job = _start(first, held)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dpviz.registry, "run", held)
        second.button(key="release_button").click().run()  # drawn enabled before the first click
    assert not second.exception, [e.value for e in second.exception]
    assert "A release of this dataset identity is running: nothing new was started" in texts(second)
    held.go()
    _finish(first, job)
    (e,) = LedgerStore(ledger_dir).entries("twice")
    assert e["outcome"] == "release" and held.heard.count(dpviz.registry.STAGE_PRIVATE) == 1


def test_an_exclusive_registration_refuses_while_a_job_on_the_key_runs():
    """jobs._Shared.put(exclusive=True) checks and registers under one lock: while a job on the key
    runs it refuses (returns False, keeps the running one); once it ended, the next registers."""
    from app.components import jobs

    shared = jobs._Shared()
    gate = threading.Event()
    running = jobs.Job(("release", "k"))
    running.thread = threading.Thread(target=lambda: (gate.wait(TIMEOUT), running.done.set()), daemon=True)
    running.thread.start()
    assert shared.put(running, exclusive=True)
    second = jobs.Job(("release", "k"))
    assert not shared.put(second, exclusive=True) and shared.get(("release", "k")) is running
    racers = [jobs.Job(("release", "r")) for _ in range(8)]
    for r in racers:
        r.thread = running.thread  # "running" while the gate is closed
    wins = []
    threads = [threading.Thread(target=lambda r=r: wins.append(shared.put(r, exclusive=True)))
               for r in racers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(wins) == [False] * 7 + [True]  # simultaneous registrations: exactly one wins
    gate.set()
    running.thread.join(TIMEOUT)
    assert shared.put(second, exclusive=True) and shared.get(("release", "k")) is second
