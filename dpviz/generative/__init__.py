"""Private generative models (Acs et al., TKDE): DP-SGD, per-cluster VAEs, DPGM and its accountants."""

from dpviz.generative.accountant import (
    AcsAccount,
    AcsSetting,
    PaperAccount,
    acs_account,
    one_model_epsilon,
    paper_epsilon,
    pld_epsilon,
    rdp_epsilon,
)

__all__ = [
    "AcsAccount",
    "AcsSetting",
    "PaperAccount",
    "acs_account",
    "one_model_epsilon",
    "paper_epsilon",
    "pld_epsilon",
    "rdp_epsilon",
]
