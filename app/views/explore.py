"""explore (placeholder)."""

import streamlit as st

st.title("Explore")
