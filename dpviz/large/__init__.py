"""Beyond one machine's memory: tables on disk read in chunks, work on threads or Dask.

* :mod:`dpviz.large.source`: Parquet/CSV files or directories cut into chunks (pyarrow).
* :mod:`dpviz.large.pieces`: a row's piece as a keyed hash of its content.
* :mod:`dpviz.large.engine`: local threads or a Dask distributed cluster.
* :mod:`dpviz.large.fc_stream`: FC_Clustering in two passes, the noise on the driver.
* :mod:`dpviz.large.lloyd_stream`: DP-Lloyd, one pass per noisy iteration.
* :mod:`dpviz.large.run`: a streamed run at a row-level (ε, δ) (the registry's calibration).
"""

from dpviz.large.engine import DaskEngine, ThreadEngine, make_engine
from dpviz.large.fc_stream import fc_private_stream, fc_stream, stream_tuple_stage
from dpviz.large.lloyd_stream import dp_lloyd_stream
from dpviz.large.pieces import keyed_pieces
from dpviz.large.run import run_stream
from dpviz.large.source import TableSource

__all__ = ["DaskEngine", "TableSource", "ThreadEngine", "dp_lloyd_stream", "fc_private_stream", "fc_stream",
           "keyed_pieces", "make_engine", "run_stream", "stream_tuple_stage"]
