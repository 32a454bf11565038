"""One DP-SGD step with adaptive clipping (Acs et al., TKDE, §4.3, Algorithm 4), for k models at once.

Algorithm 4 on a Poisson batch S (each row included independently with probability q): the
per-example gradients g(x) are computed, the clipping bound C_s is chosen by DPNorm on their norms
(Alg. 3; or fixed), each g is clipped to ‖ĝ‖ ≤ C_s, and the update uses
g̃ = (Σ ĝ + N(0, (√2σ_G·C_s)²·I)) / L, with L the EXPECTED batch size (never the realised |S|).
The descent step is Adam on g̃ (post-processing; the paper's VAE uses Adam).

With k models on disjoint clusters (DPGM's "parallel" schedule), one batch of all rows is drawn,
each row's gradient is taken under its own cluster's model, DPNorm runs once over all batch norms
(per-model sub-batches are too small for a noisy mode), and every model gets its own clipped sum
plus independent noise. A row touches one model's sum, so the step is one subsampled Gaussian: the
histogram (multiplier √2σ_C) and the gradient sums (multiplier √2σ_G) compose into one Gaussian
(see ``dpviz.generative.accountant.sgd_noise_multiplier``).

References: Acs et al., TKDE, Alg. 4; Abadi et al. 2016 (DP-SGD).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpviz.generative.dpnorm import add_gaussian_noise, dp_norm
from dpviz.generative.models import RBM, SGD, VAE, Adam


@dataclass(frozen=True)
class StepReport:
    """What one step released (``C_s``, ``noise_std``) and internal diagnostics (never publish).

    ``batch_size`` (realised |S|), ``clipped_fraction`` and ``mean_norm`` read the private batch.
    """

    C_s: float
    noise_std: float
    batch_size: int
    clipped_fraction: float
    mean_norm: float


def dp_sgd_step(
    models: list[VAE] | list[RBM],
    optimizers: list[Adam] | list[SGD],
    batches: list[np.ndarray],
    expected_sizes: list[float],
    *,
    sigma_C: float,
    sigma_G: float,
    rng: np.random.Generator,
    C_max: float = 10.0,
    w: int = 100,
    fixed_clip: float | None = None,
) -> StepReport:
    """Alg. 4 lines 2–7 for every model i on its rows ``batches[i]`` of one Poisson batch.

    ``fixed_clip`` skips DPNorm (non-adaptive clipping, as in Abadi et al.); otherwise
    C_s = DPNorm(all per-example norms, σ_C). ``expected_sizes[i]`` is model i's expected
    sub-batch size (a public number: q times its public cluster size).
    """
    per = [m.per_example(B, rng) for m, B in zip(models, batches, strict=True)]
    norms = [p.grad_norms() for p in per]
    all_norms = np.concatenate(norms) if norms else np.zeros(0)
    if fixed_clip is None:
        C_s = dp_norm(all_norms, sigma_C=sigma_C, rng=rng, C_max=C_max, w=w).C_s  # Alg. 4, line 4
    else:
        C_s = float(fixed_clip)
    noise_std = math.sqrt(2.0) * sigma_G * C_s  # Alg. 4, line 6: N(0, √2σ_G·C_s·I)
    for model, opt, p, nrm, L in zip(models, optimizers, per, norms, expected_sizes, strict=True):
        c = 1.0 / np.maximum(1.0, nrm / C_s)  # line 5: ĝ = g / max(1, ‖g‖/C_s)
        sums = p.weighted_sum(c)
        noisy = {k: add_gaussian_noise(g, noise_std, rng) / L for k, g in sums.items()}
        model.apply(noisy, opt)  # line 7 (Adam)
    n = all_norms.size
    return StepReport(C_s, noise_std, n, float(np.mean(all_norms > C_s)) if n else 0.0,
                      float(all_norms.mean()) if n else 0.0)
