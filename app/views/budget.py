"""budget (placeholder)."""

import streamlit as st

st.title("Budget")
