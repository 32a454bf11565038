"""The one job controller for every long page task (Budget's and Compare's sweeps, Generate's
training, the Release page's release): a background thread, a progress bar, a Stop button,
partial results, reload-safe.

A job runs ``work(job)`` in a daemon thread. The worker reports through the :class:`Job` only
(``step``/``total``/``message``, finished pieces appended to ``parts``, its return value in
``result``, an exception's text in ``error``) and never calls Streamlit. It polls
``job.cancel`` (a ``threading.Event``) between pieces; Stop sets it, and the pieces finished so
far stay. The page shows the job with :func:`panel`, a fragment that polls every half second and
reruns the page when a piece lands (partial curves are drawn as they come) and when the job ends.

Each page has a *slot* (``"budget"``, ``"compare"``, ``"generate"``, ``"release"``): one job per slot and
session. A job is keyed on what it computes (a sweep's spec); a page shows the job whose key is
its current settings. Jobs on PUBLIC data (``shared=True``: generated from a recipe or a built-in
table, never an upload) are also registered server-wide by key, so a reloaded page (a new
session) finds the job still running, or its finished pieces, instead of starting again.

A job on private rows (the Release page's) is never shared: it lives in its session only, and
nothing about it is keyed on the rows. What other sessions may learn is one bit per NAME through
:func:`lock`: "a job holding this name is running", whatever its data (issue 34, finding E: the
Release page used to attach a session to another session's job when their content hashes were
equal — an oracle for "is your data byte-identical to mine" — and let it cancel that run).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from app.components.keys import Key

# Session keys this module owns (declared here, issue 45 item 4; keys that more than one module
# uses are in app/components/keys.py).
JOB: Key[object] = Key("_job_", object, "prefix: the session's job (a jobs.Job) in a slot, _job_<slot>")
JOB_SEEN: Key[tuple] = Key(
    "_job_seen_", tuple, "prefix: (job id, pieces, done) the poll last saw, _job_seen_<slot>")


@dataclass
class Job:
    """One long task: its thread, cancel event and what the worker reports."""

    key: Hashable
    #: What the page needs to show the result (e.g. Generate's configuration); travels with the
    #: job, so a ``shared=True`` job's info must hold nothing another session may not see.
    info: dict[str, Any] = field(default_factory=dict)
    cancel: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    step: int = 0
    total: int = 0
    message: str = ""
    parts: list[Any] = field(default_factory=list)
    result: Any = None
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    #: ``time.monotonic()`` when the job was made (a page may show the elapsed time).
    started: float = field(default_factory=time.monotonic)

    @property
    def elapsed(self) -> float:
        """Seconds since the job was made."""
        return time.monotonic() - self.started

    @property
    def running(self) -> bool:
        return self.thread is not None and not self.done.is_set()

    @property
    def stopped(self) -> bool:
        """Stop was pressed (the job may still be finishing its current piece)."""
        return self.cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the worker ends (tests and scripts; a page polls with :func:`panel`)."""
        return self.done.wait(timeout)


class _Shared:
    """Jobs on public data by key, server-wide (bounded, thread-safe)."""

    def __init__(self, size: int = 16) -> None:
        self._lock = threading.Lock()
        self._size = size
        self._jobs: dict[Hashable, Job] = {}

    def get(self, key: Hashable) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def put(self, job: Job, *, exclusive: bool = False) -> bool:
        """Register ``job`` under its key; with ``exclusive``, only when no job on that key is
        running (checked and registered under one lock). Returns whether it was registered."""
        with self._lock:
            old = self._jobs.get(job.key)
            if exclusive and old is not None and old.running:
                return False
            self._jobs[job.key] = job
            for old in list(self._jobs)[:-self._size] if len(self._jobs) > self._size else []:
                if not self._jobs[old].running:
                    del self._jobs[old]
        return True


@st.cache_resource(show_spinner=False)
def _shared() -> _Shared:
    return _Shared()


class _Locks:
    """Names held by running jobs, server-wide: the only cross-session state of a private job.

    A name maps to its holder's opaque token; nobody but the holder can release it, and a
    holder's identity, data or progress is never exposed: :meth:`held` says only yes or no."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Hashable, str] = {}

    def acquire(self, name: Hashable, owner: str) -> bool:
        with self._lock:
            if name in self._held:
                return False
            self._held[name] = owner
            return True

    def release(self, name: Hashable, owner: str) -> None:
        with self._lock:
            if self._held.get(name) == owner:
                del self._held[name]

    def held(self, name: Hashable) -> bool:
        with self._lock:
            return name in self._held


@st.cache_resource(show_spinner=False)
def _locks() -> _Locks:
    return _Locks()


def lock(name: Hashable, owner: str) -> bool:
    """Hold ``name`` for ``owner`` (a token only the caller knows) unless someone holds it;
    returns whether it is now held by ``owner``. Release it with :func:`unlock` (the worker's
    ``finally``)."""
    return _locks().acquire(name, owner)


def unlock(name: Hashable, owner: str) -> None:
    """Release ``name`` if ``owner`` holds it (anyone else's call changes nothing)."""
    _locks().release(name, owner)


def unlocker(name: Hashable, owner: str) -> Callable[[], None]:
    """``unlock(name, owner)`` as a callable bound on the page's thread, for a worker thread
    (which has no Streamlit context to reach the server-wide registry from)."""
    locks = _locks()
    return lambda: locks.release(name, owner)


def locked(name: Hashable) -> bool:
    """Whether a job holds ``name`` on this server — the one bit other sessions may see."""
    return _locks().held(name)


def _slot(slot: str) -> str:
    return f"{JOB}{slot}"


def current(slot: str) -> Job | None:
    """This session's job in ``slot`` (running or finished), if any."""
    return st.session_state.get(_slot(slot))


def find(slot: str, key: Hashable) -> Job | None:
    """The job computing ``key``: this session's, else one a reloaded or other session started on
    public data (then attached to this session, so Stop and the progress bar work here)."""
    job = current(slot)
    if job is not None and job.key == key:
        return job
    shared = _shared().get(key)
    if shared is not None and (job is None or not job.running):
        st.session_state[_slot(slot)] = shared
    return shared


def peek(key: Hashable) -> Job | None:
    """The server-wide job computing ``key`` (started with ``shared=True``), without attaching it
    to this session: the caller decides whether this session may see it (see :func:`attach`)."""
    return _shared().get(key)


def attach(slot: str, job: Job) -> None:
    """Make ``job`` this session's job in ``slot`` (its progress and Stop then show here)."""
    st.session_state[_slot(slot)] = job


def running(slot: str) -> Job | None:
    job = current(slot)
    return job if job is not None and job.running else None


def _work(job: Job, work: Callable[[Job], Any]) -> None:
    threading.current_thread().dpviz_job = job  # type: ignore[attr-defined]  # see this_job()
    try:
        job.result = work(job)
    except Exception as exc:  # reported on the page, not raised in a thread
        job.error = f"{type(exc).__name__}: {exc}"
    finally:
        job.done.set()


def this_job() -> Job | None:
    """The job whose worker is the calling thread (None elsewhere): lets code deep in a worker
    ask to stop, as a Stop click would."""
    return getattr(threading.current_thread(), "dpviz_job", None)


def start(slot: str, key: Hashable, work: Callable[[Job], Any], *, shared: bool = False,
          cancel: threading.Event | None = None, total: int = 0,
          info: dict[str, Any] | None = None, exclusive: bool = False) -> Job | None:
    """Start ``work(job)`` in a thread as ``slot``'s job (a running one is stopped first).

    ``exclusive`` (with ``shared``): start only if no job on ``key`` is running on this server,
    checked and registered atomically (two sessions clicking at once start one job); returns
    None, starting nothing, otherwise."""
    job = Job(key, dict(info or {}), cancel=cancel if cancel is not None else threading.Event(),
              total=total)
    job.thread = threading.Thread(target=_work, args=(job, work), name=f"dpviz-{slot}", daemon=True)
    if shared and not _shared().put(job, exclusive=exclusive):
        return None
    stop(slot)
    st.session_state[_slot(slot)] = job
    job.thread.start()
    return job


def stop(slot: str) -> None:
    """Stop ``slot``'s running job (its finished pieces stay)."""
    job = current(slot)
    if job is not None and job.running:
        job.cancel.set()


def forget(slot: str) -> None:
    """Drop ``slot``'s job from this session (e.g. when its inputs changed)."""
    stop(slot)
    st.session_state.pop(_slot(slot), None)


def _mark(job: Job) -> tuple[int, int, bool]:
    """What the poller compares between polls: which job, how many pieces, whether it ended."""
    return id(job), len(job.parts), job.done.is_set()


def panel(slot: str, *, key: str, stop_key: str, unit: str = "step", stop_label: str = "Stop",
          text: Callable[[Job], str] | None = None, stop_help: str | None = None) -> None:
    """Progress bar (its container keyed ``key``) and Stop button (``stop_key``; both the page's
    own, declared in :mod:`app.components.keys`) of ``slot``'s running job, polled every half
    second; the page reruns when a new piece lands or the job ends. Nothing when no job runs.

    ``text(job)`` replaces the bar's default text ("3 of 8 steps · message"): for a job whose
    counts must not be shown (the Release page shows public stage names and the elapsed time).
    ``stop_help`` is the Stop button's tooltip."""
    job = current(slot)
    if job is None or job.done.is_set():
        # No poller unless a job runs. A ``run_every`` fragment left on a page whose job had
        # ended kept its browser timer; when it fired during a page switch (Compare's chart
        # click → Explore) Streamlit's frontend pruned the new page's elements with the stale
        # fragment run's cleanup and Explore stayed blank (the click test's flake, issue 38;
        # streamlit#9617, #16708). The last poll of a running job reruns the page, which then
        # draws no fragment.
        if job is not None:
            st.session_state[f"{JOB_SEEN}{slot}"] = _mark(job)
        return

    @st.fragment(run_every=0.5)
    def _poll() -> None:
        job = current(slot)
        if job is None:
            return
        seen = st.session_state.get(f"{JOB_SEEN}{slot}")
        now = _mark(job)
        if seen is not None and seen != now:
            st.session_state[f"{JOB_SEEN}{slot}"] = now
            st.rerun()  # a piece landed or the job ended: redraw the page with it
        st.session_state[f"{JOB_SEEN}{slot}"] = now
        if job.done.is_set():
            return
        with st.container(key=key):
            total = job.total or 1
            if text is not None:
                words = text(job)
            else:
                words = f"{job.step} of {job.total or '?'} {unit}s"
                if job.message:
                    words += f" · {job.message}"
                if job.cancel.is_set():
                    words += " (stopping after the current one)"
            st.progress(min(job.step / total, 1.0), text=words)
            st.button(stop_label, key=stop_key, icon=":material/stop:",
                      on_click=stop, args=(slot,), disabled=job.cancel.is_set(), help=stop_help)

    _poll()
