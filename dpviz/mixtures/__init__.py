"""Private learning of Gaussian mixtures in total variation (Ashtiani, Majid, Narayanan, NeurIPS 2024).

Density estimation is not clustering: the learner outputs a mixture close to the data's
distribution in TV; it promises nothing about recovering components or labels.
"""

from dpviz.mixtures.crude import calibrate_crude, crude_stage, gap_histogram, group_candidates
from dpviz.mixtures.inverse_sensitivity import inverse_sensitivity_2d
from dpviz.mixtures.learner import GMM1DParams, mixture_of, private_gmm_1d
from dpviz.mixtures.mixture import GaussianMixture1D, tv_distance
from dpviz.mixtures.selection import min_distance_scores
from dpviz.mixtures.tlap import tlap_bound, tlap_noise

__all__ = [
    "GMM1DParams",
    "GaussianMixture1D",
    "calibrate_crude",
    "crude_stage",
    "gap_histogram",
    "group_candidates",
    "inverse_sensitivity_2d",
    "min_distance_scores",
    "mixture_of",
    "private_gmm_1d",
    "tlap_bound",
    "tlap_noise",
    "tv_distance",
]
