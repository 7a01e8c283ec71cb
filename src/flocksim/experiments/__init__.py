"""Starling experiments, runnable headless: ``flocksim experiment NAME`` (docs/starlings.md).

They repeat the measurements that the web murmuration simulator whose model the starling
presets follow reports about itself (the "reference simulator" of docs/starlings.md), and add
the propagation of a turn through a flock (Attanasi et al. 2014).

Each experiment is a set of conditions (a dimension and a few parameter
overrides of the starlings presets) run over seeds; each run returns named
numbers, and the results are kept as tidy rows (experiment, dim, condition,
seed, metric, value). :func:`summarize` gives mean, standard deviation and
count per (dim, condition, metric). ``quick`` runs use few birds and a few
simulated seconds (for tests and smoke checks), not the numbers to report.

Definitions of the measures are in :mod:`flocksim.metrics.starlings`; the
choices made where the reference simulator does not say (durations, warm-up, which options
are on) are in each experiment's ``about`` text and in docs/starlings.md.

The package holds one module per experiment family, below the runner and the report:

- :mod:`.common`: the records (:class:`Condition`, :class:`RunSpec`, :class:`Experiment`) and the
  helpers that build, advance and sample a run;
- the families, each a module that defines ``EXPERIMENTS``, a tuple of :class:`Experiment`:
  :mod:`.predator`, :mod:`.cruise` (edge-deviation, shape, speed-fluctuation), :mod:`.turns`,
  :mod:`.hallmarks`, :mod:`.dynamics` (murmuration-dynamics), :mod:`.waves`, :mod:`.spontaneous`;
- :mod:`.registry`: :data:`EXPERIMENTS`, the experiments by name, gathered from the families listed
  in its ``FAMILIES``;
- :mod:`.runner` (the runs over seeds, in processes with ``jobs``, and the CSV) and :mod:`.report`
  (the summary and the table).

To add a family, write its module here (importing only :mod:`.common`, another family, and the
layers below: metrics, simulation, scenarios, config) and add the module to ``FAMILIES`` in
:mod:`.registry`; ``flocksim experiment NAME`` then runs it, ``--list`` shows it and the CSV and
table need nothing more. Two experiments with one name stop the import with an error naming both
modules.
"""

from flocksim.experiments.common import (
    BASIC,
    METRIC,
    PRESETS,
    SPIN,
    TOPO,
    Condition,
    Experiment,
    RunSpec,
    alive_pv,
    heading_angle,
    make_sim,
    nanmean,
    sample,
    seconds,
    steps_of,
    twin,
)
from flocksim.experiments.cruise import measure_edge, measure_shape, measure_speed
from flocksim.experiments.hallmarks import (
    CORRELATION_MAX_BIRDS,
    FLOCK_LINK_NND,
    HALLMARK_EVERY,
    TURNING_DEG_PER_S,
    measure_hallmarks,
    start_at_preset_density,
)
from flocksim.experiments.predator import PANIC, measure_predator
from flocksim.experiments.registry import EXPERIMENTS, FAMILIES
from flocksim.experiments.report import (
    format_value,
    mean_interval,
    metric_rows_table,
    summarize,
    summary_table,
    table_title,
)
from flocksim.experiments.runner import (
    CSV_COLUMNS,
    check_experiment_overrides,
    run_experiment,
    run_one,
    run_specs,
    write_csv,
)
from flocksim.experiments.spontaneous import measure_spontaneous
from flocksim.experiments.turns import TURN_DELAYS, measure_turn
from flocksim.experiments.waves import (
    CONTROL_SCALE,
    FIELD_SCALE,
    FRONT_FRACTIONS,
    WAVE,
    WAVE_ARRIVAL_DEG,
    WAVE_PRESET,
    angles_between,
    arrival_times,
    field_units,
    fit_power,
    front_agreement,
    linear_wave_speed,
    measure_wave,
    measure_wave_front,
    neighbour_second_moment,
    rotated,
)

__all__ = [
    "BASIC",
    "CONTROL_SCALE",
    "CORRELATION_MAX_BIRDS",
    "CSV_COLUMNS",
    "EXPERIMENTS",
    "FAMILIES",
    "FLOCK_LINK_NND",
    "FIELD_SCALE",
    "FRONT_FRACTIONS",
    "HALLMARK_EVERY",
    "METRIC",
    "PANIC",
    "PRESETS",
    "SPIN",
    "TOPO",
    "TURNING_DEG_PER_S",
    "TURN_DELAYS",
    "WAVE",
    "WAVE_ARRIVAL_DEG",
    "WAVE_PRESET",
    "Condition",
    "Experiment",
    "RunSpec",
    "alive_pv",
    "angles_between",
    "arrival_times",
    "check_experiment_overrides",
    "field_units",
    "fit_power",
    "front_agreement",
    "format_value",
    "heading_angle",
    "linear_wave_speed",
    "make_sim",
    "mean_interval",
    "measure_edge",
    "measure_hallmarks",
    "measure_predator",
    "measure_shape",
    "measure_speed",
    "measure_spontaneous",
    "measure_turn",
    "measure_wave",
    "measure_wave_front",
    "metric_rows_table",
    "nanmean",
    "neighbour_second_moment",
    "rotated",
    "run_experiment",
    "run_one",
    "run_specs",
    "sample",
    "seconds",
    "start_at_preset_density",
    "steps_of",
    "summarize",
    "summary_table",
    "table_title",
    "twin",
    "write_csv",
]
