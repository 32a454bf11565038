"""``dpviz app``: serve the web app from the installed package (or from a checkout).

    dpviz app [--port N] [--address HOST] [--classroom] [-- STREAMLIT_OPTION ...]

The wheel installs the app next to the library as ``dpviz_app/`` (``app/`` and
``.streamlit/config.toml``, the repository's layout; see ``setup.py``). This command runs
``python -m app.launch`` (``streamlit run app/main.py`` with the app's imports done before the
server listens, ``app/launch.py``) with ``dpviz_app/`` as its working directory, exactly as
``make run`` does from the repository root: Streamlit reads the same ``.streamlit/config.toml``,
and ``app/main.py`` puts ``dpviz_app/`` on ``sys.path``. From a
checkout (``dpviz`` imported from the repository) it serves the checkout's ``app/``.

Classroom mode (``--classroom``, or ``DPVIZ_CLASSROOM=1`` in the environment) is a read-only
deployment for a class: no uploads (no upload widget, and ``server.maxUploadSize = 0`` so
Streamlit's upload endpoint refuses any file), no Release page, no server-path releases and no
persistent ledger, a banner saying so, and Explore's teaching lesson as the landing page
(``app/components/classroom.py``). docs/deploy.md has the container, a systemd unit and the
server settings that matter for a class.

This module never imports Streamlit (the library does not): it only starts it.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The environment variable that turns classroom mode on (read by the app itself, too).
CLASSROOM_ENV = "DPVIZ_CLASSROOM"
#: Values of :data:`CLASSROOM_ENV` that mean "on" (case-insensitive); anything else is off.
TRUE_VALUES = frozenset({"1", "true", "yes", "on"})
#: Environment variables naming a path: made absolute before the server's working directory
#: changes, so a relative value still means what it meant where ``dpviz app`` was typed.
PATH_ENV = ("DPVIZ_LEDGER_DIR", "DPVIZ_SERVER_DATA_DIR", "DPVIZ_TIMING")
#: Options always passed to Streamlit in classroom mode (after the packaged config, before the
#: user's own ``-- ...`` options): 0 MB refuses every upload at the HTTP endpoint.
CLASSROOM_OPTIONS = ("--server.maxUploadSize", "0")


def classroom_on(environ: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`CLASSROOM_ENV` turns classroom mode on in ``environ`` (default: os.environ)."""
    value = (os.environ if environ is None else environ).get(CLASSROOM_ENV, "")
    return value.strip().lower() in TRUE_VALUES


def app_root() -> Path:
    """The directory holding ``app/main.py`` and ``.streamlit/config.toml``: ``dpviz_app/`` next
    to an installed ``dpviz``, or the repository root when ``dpviz`` runs from a checkout."""
    import dpviz

    base = Path(dpviz.__file__).resolve().parents[1]
    for root in (base / "dpviz_app", base):
        if (root / "app" / "main.py").is_file():
            return root
    raise FileNotFoundError(
        f"The dpviz web app is not installed next to {base / 'dpviz'} (no dpviz_app/app/main.py). "
        "Install it with: pip install 'dpviz[app]'.")


def command(root: Path, port: int | None = None, address: str | None = None, classroom: bool = False,
            extra: Sequence[str] = (), python: str = sys.executable) -> list[str]:
    """The command line that serves the app under ``root`` (run with ``root`` as the working
    directory): ``python -m app.launch``, i.e. ``streamlit run app/main.py`` after its imports."""
    cmd = [python, "-m", "app.launch"]
    if port is not None:
        cmd += ["--server.port", str(port)]
    if address is not None:
        cmd += ["--server.address", address]
    if classroom:
        cmd += list(CLASSROOM_OPTIONS)
    return cmd + [a for a in extra if a != "--"]


def environment(classroom: bool, environ: Mapping[str, str] | None = None,
                cwd: Path | None = None) -> dict[str, str]:
    """The server's environment: ``environ`` with :data:`CLASSROOM_ENV` set to ``1`` when
    ``classroom`` (never cleared: the variable alone turns the mode on), the :data:`PATH_ENV`
    paths made absolute against ``cwd``, and ``MALLOC_ARENA_MAX=2`` unless set (as ``make run``:
    fewer glibc heap arenas, less memory held after sessions close; docs/hostile.md)."""
    env = dict(os.environ if environ is None else environ)
    here = Path.cwd() if cwd is None else cwd
    for name in PATH_ENV:
        value = env.get(name, "").strip()
        if value:
            env[name] = str(here / Path(value).expanduser())
    if classroom:
        env[CLASSROOM_ENV] = "1"
    env.setdefault("MALLOC_ARENA_MAX", "2")
    return env


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Register ``dpviz app`` on the command line's subparsers (:func:`dpviz.cli._parser`)."""
    a = sub.add_parser(
        "app", help="serve the web app (needs the [app] extra: pip install 'dpviz[app]')",
        description="Serve the dpviz web app with Streamlit. Options after -- go to `streamlit run` "
                    "(e.g. -- --server.disconnectedSessionTTL 60).")
    a.add_argument("--port", type=int, default=None, help="TCP port (default: Streamlit's, 8501)")
    a.add_argument("--address", default=None,
                   help="address to listen on (default: Streamlit's; 0.0.0.0 in a container)")
    a.add_argument("--classroom", action="store_true",
                   help=f"read-only class deployment: no uploads, no Release page, no persistent "
                        f"ledger (also: {CLASSROOM_ENV}=1)")
    a.add_argument("streamlit_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def main(args: argparse.Namespace) -> int:
    """Run the server until it stops; its exit code. Streamlit missing: one line, exit 2."""
    import importlib.util

    if importlib.util.find_spec("streamlit") is None:
        print("dpviz: error: the web app needs Streamlit: pip install 'dpviz[app]'", file=sys.stderr)
        return 2
    try:
        root = app_root()
    except FileNotFoundError as exc:
        print(f"dpviz: error: {exc}", file=sys.stderr)
        return 2
    classroom = args.classroom or classroom_on()
    cmd = command(root, args.port, args.address, classroom, args.streamlit_args)
    env = environment(classroom)
    if classroom:
        print("dpviz: classroom mode: no uploads, no Release page, no persistent ledger", file=sys.stderr)
    proc = subprocess.Popen(cmd, cwd=root, env=env)
    # A process manager or `docker stop` sends SIGTERM to this process (PID 1 in a container,
    # where an unhandled SIGTERM is ignored): pass it on, and exit when the server has stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signum))
    try:
        return proc.wait()
    except KeyboardInterrupt:  # Ctrl-C reached Streamlit too (same process group): let it stop
        try:
            return proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            return 130
