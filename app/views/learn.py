"""learn (placeholder)."""

import streamlit as st

st.title("Learn")
