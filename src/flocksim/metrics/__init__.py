"""Metrics: plain arrays in, numbers out."""

from __future__ import annotations

from flocksim.metrics.correlation import correlation_function, correlation_length, correlation_sum_rule
from flocksim.metrics.groupstate import classify, group_state
from flocksim.metrics.neighbors import mean_neighbor_count, nearest_neighbor_distances, nearest_neighbor_stats
from flocksim.metrics.opacity import Opacity, projected_opacity
from flocksim.metrics.order import milling, polarization, speed_stats, unit_headings
from flocksim.metrics.shape import anisotropy_gamma, ellipsoid_axes
from flocksim.metrics.shape_dynamics import coefficient_of_variation, shape_series, shape_variation
from flocksim.metrics.speeds import speed_correlation, speed_correlation_series
from flocksim.metrics.splits import FlockEvents, flock_events, label_flocks
from flocksim.metrics.starlings import (
    catch_rate,
    edge_interior_deviation,
    flock_shape,
    fraction_below,
    heading_deviation,
    mean_heading,
    repetition_index,
    speed_fluctuation,
)
from flocksim.metrics.summary import METRIC_NAMES, flock_summary
from flocksim.metrics.turns import Turns, collective_turns, flock_headings

__all__ = [
    "anisotropy_gamma",
    "classify",
    "coefficient_of_variation",
    "collective_turns",
    "correlation_function",
    "correlation_length",
    "correlation_sum_rule",
    "ellipsoid_axes",
    "FlockEvents",
    "flock_events",
    "flock_headings",
    "group_state",
    "label_flocks",
    "METRIC_NAMES",
    "catch_rate",
    "edge_interior_deviation",
    "flock_shape",
    "fraction_below",
    "heading_deviation",
    "mean_heading",
    "repetition_index",
    "shape_series",
    "shape_variation",
    "speed_correlation",
    "speed_correlation_series",
    "speed_fluctuation",
    "flock_summary",
    "mean_neighbor_count",
    "milling",
    "nearest_neighbor_distances",
    "nearest_neighbor_stats",
    "Opacity",
    "polarization",
    "projected_opacity",
    "speed_stats",
    "Turns",
    "unit_headings",
]
