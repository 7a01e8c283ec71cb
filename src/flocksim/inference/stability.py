"""Whether a fit is stable: the same tracks fitted again with other seeds (``flocksim fit
--replicates R``) should give the same answer within its own uncertainty.

Each replicate is a whole ABC-SMC run whose simulations are seeded from ``seed + r`` (r = 0 .. R-1),
so they differ only by Monte Carlo chance: the runs simulated, the particles kept. Per parameter,
the replicates' posterior summaries (:func:`flocksim.inference.result.summarize_posterior`) are
compared:

- ``spread``: the largest minus the smallest median, over the mean width of the 95 % intervals
  (0: the same median every time; 1: medians as far apart as an interval is wide);
- ``overlap``: whether one value lies inside every replicate's interval (the largest lower end is
  at most the smallest upper end);
- ``agree``: overlap and a spread of at most :data:`MAX_SPREAD`.

A parameter that does not agree gets one warning line: its answer depends on the seed more than on
the tracks, and a larger ``--simulations`` (or a narrower prior) is the remedy to try.
"""

from __future__ import annotations

from typing import Any

MAX_SPREAD = 0.5
"""Largest spread of the replicates' medians, in mean interval widths, for them to agree."""
MAX_REPLICATES = 10
"""Most replicates a fit runs."""


def stability(replicates: list[dict[str, dict[str, Any]]], seeds: list[int]) -> dict[str, dict[str, Any]]:
    """Per parameter: ``medians`` and ``ci95`` of each replicate (in ``seeds`` order), ``spread``,
    ``overlap``, ``agree`` and ``warnings`` (module docstring). ``replicates``: one posterior
    summary (key -> {"median", "ci95", ...}) per seed."""
    out: dict[str, dict[str, Any]] = {}
    for key in replicates[0]:
        medians = [float(r[key]["median"]) for r in replicates]
        intervals = [[float(v) for v in r[key]["ci95"]] for r in replicates]
        width = sum(hi - lo for lo, hi in intervals) / len(intervals)
        distance = max(medians) - min(medians)
        spread = distance / width if width > 0 else (0.0 if distance == 0 else float("inf"))
        overlap = max(lo for lo, _ in intervals) <= min(hi for _, hi in intervals)
        agree = overlap and spread <= MAX_SPREAD
        warnings = []
        if not agree:
            shown = ", ".join(f"{m:.4g}" for m in medians)
            why = "their intervals share no value" if not overlap else f"{spread:.2f} of an interval's width apart"
            warnings.append(
                f"warning: the fit of {key} is unstable: with seeds {', '.join(map(str, seeds))} its medians are "
                f"{shown}, {why} (allowed: at most {MAX_SPREAD} and a value common to all); try a larger "
                "--simulations or a narrower prior"
            )
        out[key] = {
            "seeds": list(seeds),
            "medians": medians,
            "ci95": intervals,
            "spread": spread if spread != float("inf") else None,
            "overlap": overlap,
            "agree": agree,
            "warnings": warnings,
        }
    return out
