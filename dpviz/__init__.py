"""dpviz: differentially private clustering you can see.

The library is pure Python (numpy, scipy, scikit-learn, plotly); it never imports Streamlit.
"""

from dpviz.result import Result, TraceStep

__all__ = ["Result", "TraceStep"]
