"""The per-step metric row written by ``flocksim run --metrics`` and shown live."""

from __future__ import annotations

import numpy as np

from flocksim.metrics.neighbors import mean_neighbor_count, nearest_neighbor_stats
from flocksim.metrics.order import milling, polarization, speed_stats
from flocksim.space import Space

METRIC_NAMES = ("polarization", "milling", "mean_neighbors", "nnd_mean", "speed_mean", "speed_std", "n_alive")


def flock_summary(
    position: np.ndarray, velocity: np.ndarray, alive: np.ndarray, neighbor_counts: np.ndarray, space: Space
) -> dict[str, float]:
    """Every metric of :data:`METRIC_NAMES` over the alive agents."""
    p = position[alive]
    v = velocity[alive]
    speed_mean, speed_std = speed_stats(v)
    return {
        "polarization": polarization(v),
        "milling": milling(p, v),
        "mean_neighbors": mean_neighbor_count(neighbor_counts[alive]),
        "nnd_mean": nearest_neighbor_stats(p, space)["mean"],
        "speed_mean": speed_mean,
        "speed_std": speed_std,
        "n_alive": float(len(p)),
    }
