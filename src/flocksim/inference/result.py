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
    how runs were made; ``posterior``: the final particles and weights (for plots). :meth:`interval`
    says how many particles the intervals rest on, :meth:`identifiability` what the data narrowed,
    :meth:`stability` whether fits with other seeds (``replicates``) agree."""

    parameters: dict[str, dict[str, Any]]
    priors: list[Prior]
    statistics: dict[str, Any]
    distances: dict[str, Any]
    simulations: int
    generations: int
    provenance: dict[str, Any]
    posterior: Posterior = field(repr=False)
    replicates: list[dict[str, dict[str, Any]]] | None = None
    """With ``fit(replicates=R > 1)``: each replicate's posterior summary (the first is ``parameters``)."""
    replicate_seeds: list[int] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON document of ``fit.json``."""
        return {
            "parameters": self.parameters,
            "priors": [p.to_dict() for p in self.priors],
            "statistics": self.statistics,
            "distances": self.distances,
            "simulations": self.simulations,
            "generations": self.generations,
            "interval": self.interval(),
            "identifiability": self.identifiability(),
            "stability": self.stability(),
            "posterior": {
                "keys": [p.key for p in self.priors],
                "samples": self.posterior.samples.tolist(),
                "weights": self.posterior.weights.tolist(),
            },
            "provenance": self.provenance,
        }

    def interval(self) -> dict[str, Any]:
        """How the ``ci95`` intervals were made and whether the population can carry them:
        :func:`interval_support`."""
        return interval_support(self.posterior)

    def identifiability(self) -> dict[str, dict[str, Any]]:
        """Per parameter, what the data told about it: :func:`identifiability`."""
        return identifiability(self.posterior, self.priors, self.parameters)

    def stability(self) -> dict[str, dict[str, Any]] | None:
        """Per parameter, whether the replicates agree (:func:`flocksim.inference.stability.stability`);
        None for a fit of one replicate."""
        if not self.replicates or len(self.replicates) < 2:
            return None
        from flocksim.inference.stability import stability

        return stability(self.replicates, self.replicate_seeds or list(range(len(self.replicates))))

    def warnings(self) -> list[str]:
        """The lines a user must see: too few particles for a 95 % interval, each parameter the data
        cannot tell or that presses against its prior's bound, and each whose replicates disagree
        (one line each)."""
        lines = [self.interval()["warning"]] if self.interval()["warning"] else []
        for report in self.identifiability().values():
            lines.extend(report["warnings"])
        for report in (self.stability() or {}).values():
            lines.extend(report["warnings"])
        return lines

    def write(self, path: str | Path) -> Path:
        """Write :meth:`to_dict` as JSON to ``path`` (atomically)."""
        path = Path(path)
        with atomic_path(path) as tmp:
            Path(tmp).write_text(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")
        return path


INTERVAL_METHOD = (
    "weighted quantiles 2.5 % and 97.5 % of the last generation's particles (the weighted CDF "
    "interpolated between the particles' midpoints; equal weights give numpy's quantile, method hazen)"
)
MIN_INTERVAL_PARTICLES = 100
"""Effective particles (Kish: 1 / sum of the squared normalised weights) below which a 95 % interval
is not told as one: each 2.5 % tail then holds fewer than 2.5 particles, and an interval's ends are
(near) the outermost particles, whatever the posterior's tails."""
WIDTH_RATIO_WARNING = 0.8
"""A parameter whose 95 % interval is wider than this fraction of its prior's range: the data
barely narrowed the prior (a posterior equal to a uniform prior gives 0.95)."""
BOUND_ZONE = 0.05
"""The strip along each prior bound, as a fraction of the prior's range, whose weight is counted."""
BOUND_MASS_WARNING = 0.2
"""More of the posterior's weight than this within :data:`BOUND_ZONE` of a prior bound: the
posterior piles against the bound (a posterior equal to a uniform prior has 0.05 there)."""


def effective_particles(weights: np.ndarray) -> float:
    """Kish's effective sample size of ``weights``: 1 / sum(w^2) of the normalised weights (the
    number of particles for equal weights, 1 for all the weight on one)."""
    w = np.asarray(weights, dtype=np.float64)
    w = w / np.sum(w)
    return float(1.0 / np.sum(w * w))


def interval_support(posterior: Posterior) -> dict[str, Any]:
    """``method`` (:data:`INTERVAL_METHOD`); ``particles`` (of weight > 0) and ``effective_particles``
    of the last generation; ``enough``: at least :data:`MIN_INTERVAL_PARTICLES` effective
    particles; ``warning``: one line when not enough (None when enough)."""
    w = posterior.weights
    particles = int(np.count_nonzero(w > 0))
    effective = effective_particles(w)
    enough = effective >= MIN_INTERVAL_PARTICLES
    warning = None
    if not enough:
        warning = (
            f"warning: the 95 % intervals rest on {particles} particles ({effective:.0f} effective), too few for "
            f"95 % to mean 95 % (at least {MIN_INTERVAL_PARTICLES} effective): their ends are at or near the "
            "outermost particles; --final-effective 100 (the default) draws the last generation until it has enough"
        )
    return {
        "method": INTERVAL_METHOD,
        "particles": particles,
        "effective_particles": effective,
        "min_effective_particles": MIN_INTERVAL_PARTICLES,
        "enough": enough,
        "warning": warning,
    }


def identifiability(
    posterior: Posterior, priors: list[Prior], parameters: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Per parameter: ``width_ratio``, the 95 % interval's width (``parameters[key]["ci95"]``) over
    the prior's; ``mass_near_low`` / ``mass_near_high``, the posterior weight within
    :data:`BOUND_ZONE` of the prior's range from each bound; ``warnings``: a line when the ratio is
    above :data:`WIDTH_RATIO_WARNING` (the data cannot tell the parameter) and one per bound holding
    more than :data:`BOUND_MASS_WARNING` of the weight (the posterior piles against it);
    ``sensitivity``: statistic -> how far it moves across the prior in units of its scatter
    (:func:`sensitivity`; None when it cannot be told), with a warning when none moves more than
    :data:`SENSITIVITY_WARNING`."""
    w = posterior.weights / np.sum(posterior.weights)
    seen = sensitivity(posterior, priors)
    out: dict[str, dict[str, Any]] = {}
    for i, prior in enumerate(priors):
        x = posterior.samples[:, i]
        span = prior.high - prior.low
        lo, hi = parameters[prior.key]["ci95"]
        ratio = float((hi - lo) / span)
        near_low = float(np.sum(w[x <= prior.low + BOUND_ZONE * span]))
        near_high = float(np.sum(w[x >= prior.high - BOUND_ZONE * span]))
        warnings = []
        if ratio > WIDTH_RATIO_WARNING:
            warnings.append(
                f"warning: the data cannot tell {prior.key}: its 95 % interval [{lo:.4g}, {hi:.4g}] is {ratio:.2f} "
                f"of the prior's width [{prior.low:g}, {prior.high:g}] (the posterior is about the prior)"
            )
        for mass, side, bound in ((near_low, "lower", prior.low), (near_high, "upper", prior.high)):
            if mass > BOUND_MASS_WARNING:
                warnings.append(
                    f"warning: {prior.key} piles against the prior's {side} bound {bound:g}: {mass:.0%} of the "
                    f"posterior's weight is within {BOUND_ZONE:.0%} of the prior's range of it (the truth may lie "
                    "beyond the prior, or the model may not reach the tracks there)"
                )
        moves = seen.get(prior.key, {}) if seen else {}
        if moves and max(moves.values()) < SENSITIVITY_WARNING:
            best = max(moves, key=moves.__getitem__)
            warnings.append(
                f"warning: no statistic sees {prior.key}: across its prior [{prior.low:g}, {prior.high:g}] the one "
                f"that moves most, {best}, moves {moves[best]:.2f} of its run-to-run scatter (first generation's runs)"
            )
        out[prior.key] = {
            "width_ratio": ratio,
            "mass_near_low": near_low,
            "mass_near_high": near_high,
            "sensitivity": moves or None,
            "warnings": warnings,
        }
    return out


SENSITIVITY_WARNING = 1.0
"""A parameter across whose prior range no statistic moves by more than this many of its own
scatters (:func:`sensitivity`): the statistics hardly see it."""


def sensitivity(posterior: Posterior, priors: list[Prior]) -> dict[str, dict[str, float]] | None:
    """Per parameter and statistic, how far the statistic moves across the parameter's whole prior
    range in units of its scatter: the first generation's runs (parameters drawn from the prior
    and kept within the first tolerance) are fitted by least squares with a line in every parameter,
    each scaled to its prior's range (0 to 1); a statistic's value is |its slope on the parameter| over
    the standard deviation of its residuals (run-to-run noise plus what a line misses). None when
    the runs are too few (fewer than parameters + 3) or no statistic varies."""
    if posterior.first_generation is None:
        return None
    values, stats, names = posterior.first_generation
    runs, count = values.shape
    if runs < count + 3 or len(priors) != count:
        return None
    low = np.array([p.low for p in priors])
    span = np.array([p.high - p.low for p in priors])
    design = np.column_stack([np.ones(runs), (values - low) / span])
    out: dict[str, dict[str, float]] = {p.key: {} for p in priors}
    for j, name in enumerate(names):
        y = stats[:, j]
        if not np.all(np.isfinite(y)):
            continue
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        residual = y - design @ coef
        scatter = math.sqrt(float(residual @ residual) / (runs - count - 1))
        if scatter <= 0.0:
            continue
        for k, prior in enumerate(priors):
            out[prior.key][name] = float(abs(coef[k + 1]) / scatter)
    return out if any(out.values()) else None


def summarize_posterior(posterior: Posterior, priors: list[Prior]) -> dict[str, dict[str, Any]]:
    """Per parameter: weighted mean, median and central 95 % interval (the 2.5 % and 97.5 %
    :func:`~flocksim.inference.smc.weighted_quantile`) of the final generation."""
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
        ax.axvspan(lo, hi, color="#c0392b", alpha=0.15, label=band_label(result.interval(), lo, hi))
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


def band_label(support: dict[str, Any], lo: float, hi: float) -> str:
    """The legend of the plot's interval band: "95 % [lo, hi]" only when :func:`interval_support`
    finds enough particles to carry it, else the quantiles and the few particles they rest on."""
    if support["enough"]:
        return f"95 % [{lo:.3g}, {hi:.3g}]"
    effective = support["effective_particles"]
    return f"2.5-97.5 % quantiles [{lo:.3g}, {hi:.3g}] of {effective:.0f} effective particles: too few for 95 %"


def finite(value: float) -> float | None:
    """JSON has no NaN: None for an undefined value."""
    return value if math.isfinite(value) else None
