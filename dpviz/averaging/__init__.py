"""Private averaging: FriendlyAvg, the diameter search, FC_Avg and the CoinPress baseline."""

from dpviz.averaging.coinpress import coinpress_mean
from dpviz.averaging.diameter import (
    DiamOutcome,
    Probe,
    check_diam,
    check_diam_core,
    find_diam,
    find_diam_core,
)
from dpviz.averaging.fc_avg import fc_avg, fc_avg_unknown_diam
from dpviz.averaging.friendly_avg import AvgOutcome, friendly_avg, friendly_avg_core

__all__ = [
    "AvgOutcome",
    "DiamOutcome",
    "Probe",
    "check_diam",
    "check_diam_core",
    "coinpress_mean",
    "fc_avg",
    "fc_avg_unknown_diam",
    "find_diam",
    "find_diam_core",
    "friendly_avg",
    "friendly_avg_core",
]
