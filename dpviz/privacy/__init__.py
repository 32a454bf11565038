"""The language of privacy: budgets, the ledger, conversions, and noise mechanisms."""

from dpviz.privacy import deployments
from dpviz.privacy.accounting import (
    REPLACE_ONE,
    PrivacyStatement,
    approx_zcdp_to_dp,
    compose_dp,
    compose_zcdp,
    dp_to_zcdp,
    dp_total,
    group_privacy_dp,
    group_privacy_zcdp,
    odds_sentence,
    pure_rho_guarantee,
    rho_for_dp,
    row_level_statement,
    zcdp_delta,
    zcdp_to_dp,
)
from dpviz.privacy.budget import ZCDP, ApproxDP
from dpviz.privacy.ledger import Ledger, Spend
from dpviz.privacy.mechanisms import (
    exponential,
    gaussian,
    gaussian_dp,
    gaussian_sigma_dp,
    gaussian_sigma_zcdp,
    laplace,
)

__all__ = [
    "REPLACE_ONE",
    "ZCDP",
    "ApproxDP",
    "Ledger",
    "PrivacyStatement",
    "Spend",
    "approx_zcdp_to_dp",
    "compose_dp",
    "compose_zcdp",
    "deployments",
    "dp_to_zcdp",
    "dp_total",
    "exponential",
    "gaussian",
    "gaussian_dp",
    "gaussian_sigma_dp",
    "gaussian_sigma_zcdp",
    "group_privacy_dp",
    "group_privacy_zcdp",
    "laplace",
    "odds_sentence",
    "pure_rho_guarantee",
    "rho_for_dp",
    "row_level_statement",
    "zcdp_delta",
    "zcdp_to_dp",
]
