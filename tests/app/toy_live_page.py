"""A live page registered for a test (tests/app/test_one_path.py): Explore draws it through the hook."""

from __future__ import annotations

import streamlit as st


def render(ds, spec, radius: float) -> None:
    with st.container(key="toy_live_page"):
        st.markdown(f"Toy live page for {spec.name} (Λ = {radius:g}, n = {ds.n})")
