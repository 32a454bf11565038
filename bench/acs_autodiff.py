"""numpy vs JAX for DPGM's DP-SGD step (issue 14: "justify the choice with numbers").

The step DP-SGD needs (Acs et al., Alg. 4 lines 2–5) is: per-example gradients of the VAE's
negative ELBO, their norms, and the sum of the clipped gradients. dpviz computes it in numpy with
the layer-factor identity (a dense layer's per-example gradient is aᵢᵀδᵢ, so norms and the clipped
sum need no per-example gradient tensor: ``dpviz.generative.models.PerExample``). The JAX version
is the textbook one: ``jit(vmap(grad(loss)))``, then norms and the clipped sum. Both run in float64
on the same rows and the same reparametrisation draws; the table reports the largest difference
of the clipped sums (a correctness check) and the time per step and per epoch of digits.

JAX is not a dependency of dpviz. To run this bench, put an installed JAX on the path, e.g.::

    python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax
    mkdir -p /tmp/jaxonly && for p in jax jaxlib ml_dtypes opt_einsum; do \\
        ln -sf /tmp/jaxvenv/lib/python3.11/site-packages/$p /tmp/jaxonly/; done
    PYTHONPATH=.:/tmp/jaxonly .venv/bin/python bench/acs_autodiff.py
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from dpviz.generative.models import LAYERS, VAE

N_DIGITS_PRIVATE = 1527  # the app's digits split: 1,797 rows less 15% public


def numpy_step(model: VAE, X: np.ndarray, eps: np.ndarray, C: float) -> dict[str, np.ndarray]:
    per = model.forward_backward(X, eps)
    c = 1.0 / np.maximum(1.0, per.grad_norms() / C)
    return per.weighted_sum(c)


def jax_step_fn(C: float):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(p, x, e):
        h1 = jax.nn.relu(x @ p["W1"] + p["b1"])
        mu = h1 @ p["Wm"] + p["bm"]
        lv = jnp.clip(h1 @ p["Wv"] + p["bv"], -20.0, 20.0)
        z = mu + jnp.exp(0.5 * lv) * e
        h2 = jax.nn.relu(z @ p["W2"] + p["b2"])
        logits = h2 @ p["W3"] + p["b3"]
        rec = (jax.nn.softplus(logits) - x * logits).sum()
        kl = 0.5 * (jnp.exp(lv) + mu * mu - 1.0 - lv).sum()
        return rec + kl

    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))

    @jax.jit
    def step(p, X, E):
        g = per_example(p, X, E)
        sq = sum(jnp.sum(v.reshape(v.shape[0], -1) ** 2, axis=1) for v in g.values())
        c = 1.0 / jnp.maximum(1.0, jnp.sqrt(sq) / C)
        return {k: jnp.tensordot(c, v, axes=1) for k, v in g.items()}

    return step


def _median_time(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _site_size(module: str) -> float:
    import importlib

    total = 0
    for name in (module, f"{module}lib"):
        try:
            path = Path(importlib.import_module(name).__file__).resolve().parent
        except ImportError:
            continue
        total += sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    return total / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batches", type=int, nargs="+", default=[8, 32, 128, 512])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--clip", type=float, default=5.0)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    model = VAE.init(64, rng=rng)
    t0 = time.perf_counter()
    try:
        import jax
        import jax.numpy as jnp

        jax_step = jax_step_fn(args.clip)
        jax_import = time.perf_counter() - t0
    except ImportError:
        jax_step = None
        print("JAX is not installed: timing numpy only (see the module docstring).")
    print(f"VAE 64–200–2, float64, clip C = {args.clip:g}; epoch = {N_DIGITS_PRIVATE} rows / batch steps; "
          f"{os.cpu_count()} cores; median of {args.reps} steps")
    if jax_step is not None:
        size = _site_size("jax")
        print(f"JAX {jax.__version__}: import {jax_import:.2f} s; jax+jaxlib on disk {size:.0f} MB")
    print("| batch | numpy ms/step | numpy s/epoch | JAX compile s | JAX ms/step | JAX s/epoch "
          "| max |Δ sum| |")
    print("|---|---|---|---|---|---|---|")
    for B in args.batches:
        X = (rng.random((B, 64)) < 0.3).astype(np.float64)
        E = rng.normal(size=(B, 2))
        t_np = _median_time(lambda X=X, E=E: numpy_step(model, X, E, args.clip), args.reps)
        steps = N_DIGITS_PRIVATE / B
        row = f"| {B} | {1e3 * t_np:.2f} | {steps * t_np:.3f} |"
        if jax_step is None:
            print(row + " — | — | — | — |")
            continue
        p = {k: jnp.asarray(v) for k, v in model.params.items()}
        t0 = time.perf_counter()
        out = jax_step(p, jnp.asarray(X), jnp.asarray(E))
        jax.block_until_ready(out)
        compile_s = time.perf_counter() - t0
        t_jx = _median_time(lambda p=p, X=X, E=E: jax.block_until_ready(
            jax_step(p, jnp.asarray(X), jnp.asarray(E))), args.reps)
        ref = numpy_step(model, X, E, args.clip)
        diff = max(float(np.max(np.abs(np.asarray(out[k]) - ref[k]))) for pair in LAYERS for k in pair)
        print(f"{row} {compile_s:.2f} | {1e3 * t_jx:.2f} | {steps * t_jx:.3f} | {diff:.1e} |")


if __name__ == "__main__":
    main()
