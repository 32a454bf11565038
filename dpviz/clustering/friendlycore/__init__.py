"""FriendlyCore clustering (Tsfadia et al. 2022, §5: FC_Clustering), one module per part.

- :mod:`.pipeline`: the pipeline (non-private tuple stage, then the private stage, in memory or
  over any :class:`~.pipeline.RowAccess`), ``fc_clustering`` and ``fc_private_stage``.
- :mod:`.steps`: the paper's steps, FC_kTupleClustering and FC_AvgOrdTup.
- :mod:`.budget`: the budget split presets and their resolution (``FCBudget``).
- :mod:`.spec`: the registry entry (imported here, so discovery registers the family).

FriendlyCore's fallback when no core forms is :mod:`dpviz.clustering.grid_coreset` (registered on its
own as ``grid_coreset``); its sample-and-aggregate stage is :mod:`dpviz.clustering.tuples`.
"""

from dpviz.clustering.friendlycore import spec  # noqa: F401  (registers "friendlycore")
