"""Private generative models (Acs et al., TKDE): DP-SGD, per-cluster VAEs, DPGM and its accountants."""

from dpviz.generative.accountant import (
    AcsAccount,
    AcsSetting,
    PaperAccount,
    acs_account,
    calibrate_sigma_g,
    one_model_epsilon,
    paper_epsilon,
    pld_epsilon,
    rdp_epsilon,
)
from dpviz.generative.data import PublicSplit, binary_digits
from dpviz.generative.dpgm import DPGMParams, DPGMResult, TrainProgress, dpgm
from dpviz.generative.dpnorm import DPNormResult, dp_norm
from dpviz.generative.models import VAE

__all__ = [
    "VAE",
    "AcsAccount",
    "AcsSetting",
    "DPGMParams",
    "DPGMResult",
    "DPNormResult",
    "PaperAccount",
    "PublicSplit",
    "TrainProgress",
    "acs_account",
    "binary_digits",
    "calibrate_sigma_g",
    "dp_norm",
    "dpgm",
    "one_model_epsilon",
    "paper_epsilon",
    "pld_epsilon",
    "rdp_epsilon",
]
