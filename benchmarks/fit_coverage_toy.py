"""Coverage of flocksim fit's 95 % intervals on a model whose posterior is known: the fit's own ABC-SMC
(:func:`flocksim.inference.smc.run_abc`: pyabc, the seeded Dask sampler, the informative distance, the
last generation drawn until ``--final-effective`` effective particles), with a simulation that costs
nothing, so that hundreds of datasets fit in minutes where a flock's take hours.

The model: theta ~ Uniform(0, 3); two statistics, ``signal`` = theta + N(0, ``--noise``) and ``noise`` =
N(0, 1) (it tells nothing about theta, as many of a flock's statistics tell little). Each dataset draws
its truth from the prior and its observed statistics from the model, with its own NumPy generator (not
the fit's), and is fitted with ``--simulations`` (default 200, flocksim fit's) and fit seed = the
dataset's number. Per dataset: whether the 95 % interval holds the truth, its width, the effective
particles of the last generation and the simulations; and the exact posterior's 95 % interval (theta
given ``signal`` alone, a normal truncated to the prior) for comparison.

Usage: python benchmarks/fit_coverage_toy.py [--datasets 200] [--simulations 200] [--final-effective 100] [--workers 4]
Prints one JSON object (per-dataset rows with ``--rows``).
"""

from __future__ import annotations

import argparse
import json
import logging
import time

import numpy as np
from scipy.stats import truncnorm

from flocksim.inference import FINAL_EFFECTIVE
from flocksim.inference.priors import Prior
from flocksim.inference.result import interval_support
from flocksim.inference.smc import run_abc, weighted_quantile

LOW, HIGH = 0.0, 3.0


class Toy:
    """The model the fit runs: NumPy's global generator, which the fit's sampler seeds per job."""

    def __init__(self, seed: int, noise: float) -> None:
        self.seed, self.noise = seed, noise

    def __call__(self, pars) -> dict[str, float]:
        theta = float(pars["p0"])
        return {"signal": theta + self.noise * np.random.normal(), "noise": float(np.random.normal())}


def exact_interval(signal: float, noise: float) -> tuple[float, float]:
    """The 95 % central interval of theta given ``signal``: N(signal, noise) truncated to the prior."""
    a, b = (LOW - signal) / noise, (HIGH - signal) / noise
    return tuple(float(v) for v in truncnorm.ppf([0.025, 0.975], a, b, loc=signal, scale=noise))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--simulations", type=int, default=200)
    parser.add_argument("--final-effective", dest="final", type=int, default=FINAL_EFFECTIVE)
    parser.add_argument("--noise", type=float, default=0.2, help="sd of the signal statistic")
    parser.add_argument("--rows", action="store_true", help="print every dataset's row too")
    parser.add_argument("--workers", type=int, default=4, help="Dask worker processes (the fits are the same)")
    args = parser.parse_args()
    import distributed

    logging.getLogger("distributed").setLevel(logging.ERROR)
    rows = []
    started, cpu = time.perf_counter(), time.process_time()
    # worker processes, not threads: each job seeds its process's NumPy generator (the fit's sampler);
    # several, because a job that costs nothing is bound by the sampler's round trip, not by the CPU
    with distributed.Client(
        processes=True, n_workers=args.workers, threads_per_worker=1, dashboard_address=None
    ) as client:
        for d in range(args.datasets):
            rng = np.random.default_rng([12345, d])
            truth = float(rng.uniform(LOW, HIGH))
            observed = {"signal": truth + args.noise * float(rng.normal()), "noise": float(rng.normal())}
            post = run_abc(Toy(d, args.noise), [Prior("theta", LOW, HIGH)], observed, args.simulations, client,
                           final_effective=args.final)  # fmt: skip
            x, w = post.samples[:, 0], post.weights
            lo, hi = weighted_quantile(x, w, 0.025), weighted_quantile(x, w, 0.975)
            exact = exact_interval(observed["signal"], args.noise)
            support = interval_support(post)
            rows.append({
                "dataset": d, "truth": truth, "ci95": [lo, hi], "covered": lo <= truth <= hi, "width": hi - lo,
                "exact_ci95": list(exact), "exact_covered": exact[0] <= truth <= exact[1],
                "exact_width": exact[1] - exact[0], "particles": support["particles"],
                "effective_particles": support["effective_particles"], "simulations": post.simulations,
            })  # fmt: skip
    n = len(rows)
    covered = sum(r["covered"] for r in rows)
    report = {
        "benchmark": "fit coverage toy", "datasets": n, "simulations": args.simulations,
        "final_effective": args.final, "noise": args.noise,
        "covered": covered, "coverage": covered / n,
        "exact_covered": sum(r["exact_covered"] for r in rows),
        "mean_width": float(np.mean([r["width"] for r in rows])),
        "mean_exact_width": float(np.mean([r["exact_width"] for r in rows])),
        "below_100_effective": sum(r["effective_particles"] < 100 for r in rows),
        "mean_effective_particles": float(np.mean([r["effective_particles"] for r in rows])),
        "min_effective_particles": float(np.min([r["effective_particles"] for r in rows])),
        "mean_particles": float(np.mean([r["particles"] for r in rows])),
        "mean_simulations": float(np.mean([r["simulations"] for r in rows])),
        "workers": args.workers, "wall_s": time.perf_counter() - started,
        "main_process_cpu_s": time.process_time() - cpu,
    }  # fmt: skip
    if args.rows:
        report["rows"] = rows
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
