"""What a fit returns and ``fit.json`` holds: the posterior summary per parameter, the statistics,
the distances, the simulation count and the provenance; and the figure of ``--plot``."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from flocksim.atomic import atomic_path
from flocksim.inference.priors import Prior
from flocksim.inference.smc import Posterior, weighted_quantile


@dataclass
class FitResult:
    """``parameters``: key -> {"mean", "median", "ci95": [lo, hi]} of the posterior [the
    parameter's unit]; ``priors``; ``statistics``: {"observed": name -> value, "dropped": names
    undefined in the tracks}; ``distances``: tolerances per generation and the final particles'
    distances; ``simulations``; ``provenance``: flocksim version, tracks file and its sha256, seed,
    how runs were made; ``posterior``: the final particles and weights (for plots)."""

    parameters: dict[str, dict[str, Any]]
    priors: list[Prior]
    statistics: dict[str, Any]
    distances: dict[str, Any]
    simulations: int
    generations: int
    provenance: dict[str, Any]
    posterior: Posterior = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``fit.json``."""
        return {
            "parameters": self.parameters,
            "priors": [p.to_dict() for p in self.priors],
            "statistics": self.statistics,
            "distances": self.distances,
            "simulations": self.simulations,
            "generations": self.generations,
            "posterior": {
                "keys": [p.key for p in self.priors],
                "samples": self.posterior.samples.tolist(),
                "weights": self.posterior.weights.tolist(),
            },
            "provenance": self.provenance,
        }

    def write(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` (atomically)."""
        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path


def summarize_posterior(posterior: Posterior, priors: list[Prior]) -> dict[str, dict[str, Any]]:
    """Per parameter: weighted mean, median and central 95 % interval of the final generation."""
    out: dict[str, dict[str, Any]] = {}
    for i, prior in enumerate(priors):
        x, w = posterior.samples[:, i], posterior.weights
        out[prior.key] = {
            "mean": float(np.sum(w * x)),
            "median": weighted_quantile(x, w, 0.5),
            "ci95": [weighted_quantile(x, w, 0.025), weighted_quantile(x, w, 0.975)],
        }
    return out


def plot_fit(result: FitResult, output: str | Path) -> Path:
    """The posterior of each parameter (weighted histogram of the final particles, the prior's range
    as the axis, the median and 95 % interval marked) into a .png/.svg/.pdf."""
    from flocksim._extras import require

    require("plot", "flocksim fit --plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    output = Path(output)
    n = len(result.priors)
    figure = Figure(figsize=(5.0 * n, 3.6), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, n, squeeze=False)[0]
    for i, (ax, prior) in enumerate(zip(axes, result.priors, strict=True)):
        summary = result.parameters[prior.key]
        bins = np.linspace(prior.low, prior.high, 31)
        ax.hist(
            result.posterior.samples[:, i],
            bins=bins,
            weights=result.posterior.weights,
            density=True,
            color="#1f5fa8",
            alpha=0.7,
            label="posterior",
        )
        ax.axhline(1.0 / (prior.high - prior.low), color="grey", linestyle=":", label="prior")
        ax.axvline(summary["median"], color="black", label=f"median {summary['median']:.3g}")
        lo, hi = summary["ci95"]
        ax.axvspan(lo, hi, color="#c0392b", alpha=0.15, label=f"95 % [{lo:.3g}, {hi:.3g}]")
        ax.set_xlim(prior.low, prior.high)
        ax.set_xlabel(prior.key)
        ax.set_ylabel("density")
        ax.legend(loc="upper right", fontsize=8)
    figure.suptitle(
        f"{Path(result.provenance['tracks']).name}: {result.simulations} simulations, {result.generations} generations"
    )
    with atomic_path(output) as tmp:
        figure.savefig(tmp, format=output.suffix.lower()[1:])
    return output


def finite(value: float) -> float | None:
    """JSON has no NaN: None for an undefined value."""
    return value if math.isfinite(value) else None
