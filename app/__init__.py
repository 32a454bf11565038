"""The dpviz Streamlit app (pages over the dpviz library)."""
