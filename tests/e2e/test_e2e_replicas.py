"""docs/deploy.md's replica recipe, exercised as written (issue 46 item 2): two ``streamlit run``
replicas on one PostgreSQL ledger behind nginx with the recipe's own ``upstream`` block.

The nginx block is read from docs/deploy.md (so the documented recipe is the tested one); only its
addresses change: the replicas' loopback ports for ``server 10.0.0.1x:8501`` and a loopback
``listen`` without TLS for ``listen 443 ssl`` (no certificate in a test). chromium opens the app
through nginx (page, websocket upgrade, reruns) and makes a release there; the other replica,
opened directly on its own port, then shows that release in the identity's total. ``make nginx``
installs Debian's nginx (``make test`` runs it first); PostgreSQL is started by the test as
tests/unit/_postgres.py starts it for the ledger tests.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from st_e2e import (
    ROOT,
    assert_no_exception,
    click_button,
    fill_number,
    free_port,
    new_app_page,
    open_app,
    rerun_after,
    streamlit_server,
    widget,
)

sys.path.insert(0, str(ROOT / "tests" / "unit"))
import _postgres  # tests/unit/_postgres.py: a throwaway PostgreSQL server

from dpviz.privacy.ledger_store import DSN_ENV

pytestmark = pytest.mark.e2e

INSTALL = "make nginx (Debian's nginx package)"
DOC = ROOT / "docs" / "deploy.md"
IDENTITY = "replica recipe survey"


def recipe_block() -> str:
    """The nginx block of docs/deploy.md's "Several replicas" section, as written there."""
    text = DOC.read_text()
    section = text[text.index("## Several replicas behind one address"):]
    return re.search(r"```nginx\n(.*?)```", section, re.S).group(1)


def nginx_conf(block: str, replicas: list[int], listen: int, prefix: Path) -> str:
    """The recipe's block with the test's addresses, inside a minimal nginx.conf (one process in
    the foreground, every path under ``prefix``)."""
    servers = re.findall(r"^\s*server \d+\.\d+\.\d+\.\d+:\d+;\s*$", block, re.M)
    assert len(servers) == len(replicas), servers  # the recipe names one line per replica
    for line, port in zip(servers, replicas, strict=True):
        block = block.replace(line, f"    server 127.0.0.1:{port};", 1)
    assert "listen 443 ssl;" in block
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{listen};")
    temps = "\n".join(f"    {kind}_temp_path {prefix / kind};"
                      for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return (f"daemon off;\nmaster_process off;\npid {prefix / 'nginx.pid'};\n"
            f"error_log {prefix / 'error.log'};\nevents {{ worker_connections 256; }}\n"
            f"http {{\n    access_log {prefix / 'access.log'};\n{temps}\n{block}}}\n")


def _wait_ok(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing answered {url}/_stcore/health within {timeout:.0f} s")


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str]]]:
    """(the nginx address, [replica 1's address, replica 2's address])."""
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None:
        pytest.fail(f"nginx is not installed: run {INSTALL}", pytrace=False)
    tmp = tmp_path_factory.mktemp("replicas")
    with ExitStack() as stack:
        dsn = stack.enter_context(_postgres.running())
        env = {DSN_ENV: dsn, "DPVIZ_LEDGER_DIR": str(tmp / "no-file-ledger"), "DPVIZ_PREFETCH": "0"}
        urls = [stack.enter_context(streamlit_server(ROOT / "app" / "main.py", env=env, timeout=120,
                                                     log=tmp / f"replica{i}.log"))
                for i in (1, 2)]
        ports = [int(u.rsplit(":", 1)[1]) for u in urls]
        listen = free_port()
        prefix = tmp / "nginx"
        prefix.mkdir()
        conf = prefix / "nginx.conf"
        conf.write_text(nginx_conf(recipe_block(), ports, listen, prefix))
        proc = subprocess.Popen([nginx, "-p", str(prefix), "-c", str(conf)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        stack.callback(lambda: (proc.terminate(), proc.wait(timeout=10)))
        front = f"http://127.0.0.1:{listen}"
        _wait_ok(front)
        yield front, urls
        assert not (tmp / "no-file-ledger").exists(), "a replica wrote a local file ledger"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    page = new_app_page(browser)
    yield page
    page.context.close()


def _identity(page: Page, name: str) -> None:
    box = widget(page, "release_dataset_id").locator("input")
    box.fill(name)
    rerun_after(page, lambda: box.press("Enter"))


QUERY = "/release?src=generate&gen=fig6_blobs&n=3000&gk=4&k=4&seed=1&eps=1"


def test_a_release_through_the_proxy_counts_on_the_other_replica(page: Page, replicas) -> None:
    front, (first, second) = replicas
    open_app(page, front + QUERY)  # through nginx: the page, its websocket, its reruns
    _identity(page, IDENTITY)
    expect(widget(page, "release_preview")).to_contain_text("New dataset identity")
    fill_number(page, "release_n", 3000)
    for key in ("release_confirm_radius", "release_confirm_n", "release_confirm_budget"):
        rerun_after(page, widget(page, key).locator("label").click)
    click_button(page, "release_button")
    expect(widget(page, "release_output")).to_be_visible(timeout=120_000)
    expect(widget(page, "release_preview")).to_contain_text(re.compile(r"ε = 1, δ = \S+ now → ε = 2"))
    assert_no_exception(page)
    # ip_hash sends this browser (127.0.0.1) to one replica; each replica, opened directly, sees
    # the release in the identity's total: the one that made it and the one that did not.
    for url in (first, second):
        open_app(page, url + QUERY)
        _identity(page, IDENTITY)
        preview = widget(page, "release_preview")
        expect(preview).to_contain_text("Known dataset identity")
        expect(preview).to_contain_text(re.compile(r"ε = 1, δ = \S+ now → ε = 2"))
        assert_no_exception(page)
