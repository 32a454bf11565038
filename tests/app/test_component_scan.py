"""apptest_helpers.scan_components_once: every AppTest of a test process reads one scan of the
installed distributions for Streamlit component manifests, and it is the scan Streamlit makes."""

from __future__ import annotations

from apptest_helpers import scan_components_once
from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

PAGE = "import streamlit as st\nst.write('hello')"


def test_two_apptests_share_one_scan_equal_to_streamlits_own():
    scan_components_once()  # idempotent: a second call keeps the first cache
    scan = manifest_scanner.scan_component_manifests
    before = scan.cache_info()
    for _ in range(2):
        at = AppTest.from_string(PAGE, default_timeout=30).run()
        assert at.markdown[0].value == "hello"
    after = scan.cache_info()
    assert after.misses == max(before.misses, 1), (before, after)  # scanned once in this process
    assert after.hits + after.misses == before.hits + before.misses + 2  # both AppTests asked
    assert scan() == scan.__wrapped__()  # the cached answer is Streamlit's scan, done now
    assert scan() is not scan()  # each caller gets its own list
