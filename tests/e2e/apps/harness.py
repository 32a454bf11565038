"""Tiny app that exercises every helper of tests/e2e/st_e2e.py (see test_e2e_harness.py).

A log-scale ρ select-slider, an integer slider, a selectbox, a file uploader and a plotly figure
whose data depends on ρ; the query string is read on the first run and rewritten on every run,
like the real app does.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

RHOS = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0]

if "init" not in st.session_state:
    st.session_state.init = True
    q = st.query_params
    if "rho" in q and float(q["rho"]) in RHOS:
        st.session_state.rho = float(q["rho"])
    if "k" in q:
        st.session_state.k = int(q["k"])
    if "oracle" in q:
        st.session_state.oracle = q["oracle"]

rho = st.select_slider("ρ", options=RHOS, value=0.1, key="rho")
k = st.slider("k", min_value=1, max_value=20, value=5, key="k")
oracle = st.selectbox("oracle", ["kmeans++", "pca"], key="oracle")
st.query_params.update({"rho": str(rho), "k": str(k), "oracle": oracle})

rng = np.random.default_rng(k)
noise = rng.normal(size=(k, 2)) / np.sqrt(2 * rho)
st.plotly_chart(go.Figure(go.Scatter(x=noise[:, 0], y=noise[:, 1], mode="markers")), key="fig")
st.dataframe(pd.DataFrame(noise, columns=["x", "y"]).round(4), key="centers")

upload = st.file_uploader("CSV", type=["csv"], key="csv")
if upload is not None:
    try:
        frame = pd.read_csv(io.BytesIO(upload.getvalue()))
        numeric = frame.select_dtypes("number")
        if numeric.shape[1] == 0:
            raise ValueError("no numeric columns")
        st.success(f"Loaded {len(numeric)} rows", icon="✅")
    except (ValueError, pd.errors.ParserError) as err:
        st.error(f"Could not read this CSV: {err}")
