"""The validation suite: every check by name, run in order, quick or full."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from flocksim.validate.checks import CheckResult
from flocksim.validate.couzin import check_couzin_hysteresis, check_couzin_phases, check_couzin_reference
from flocksim.validate.identities import check_identities
from flocksim.validate.spin import check_spin_propagation
from flocksim.validate.starling_gamma import check_starling_gamma
from flocksim.validate.starlings import check_starling_flight, check_starling_roost, check_starling_step
from flocksim.validate.vicsek import check_vicsek


@dataclass(frozen=True)
class Check:
    """A check: ``run(quick, **options)`` returns its :class:`CheckResult`. ``model``: the model whose
    parameters ``--set`` may change for it (passed as ``overrides``; the number of flocksim seeds as
    ``seeds``); ``reference``: it compares with the stored reference curves (passed as ``reference``,
    a folder); ``seeded``: it takes ``seeds`` (a model check with no random numbers does not);
    ``guards``: what a mistake it catches, for ``validate --list``; ``full_only``: ``--quick`` leaves it out
    unless ``--only`` names it (it has one size, minutes long)."""

    run: Callable[..., CheckResult]
    model: str | None = None
    reference: bool = False
    seeded: bool = True
    guards: str = ""
    full_only: bool = False

    @property
    def summary(self) -> str:
        return (self.run.__doc__ or "").strip().splitlines()[0]


CHECKS: dict[str, Check] = {
    "identities": Check(
        check_identities, guards="the metrics every other check reads (polarization, milling, correlation, gamma(1))"
    ),
    "vicsek": Check(
        check_vicsek, "vicsek", reference=True, guards="the Vicsek model: its update order, noise and neighbourhood"
    ),
    "couzin-phases": Check(
        check_couzin_phases, "couzin", guards="the Couzin model's zones and turning: the four group states"
    ),
    "couzin-hysteresis": Check(
        check_couzin_hysteresis, "couzin", guards="the Couzin model's memory of its previous state"
    ),
    "couzin-reference": Check(
        check_couzin_reference,
        "couzin",
        reference=True,
        guards="the Couzin model, point by point: zones, blind angle, turning rate, noise",
    ),
    "spin-propagation": Check(
        check_spin_propagation, guards="inertial-spin alignment: the linear speed of an information wave"
    ),
    "starling-flight": Check(
        check_starling_flight,
        "starlings",
        seeded=False,
        guards="banked flight: lift, gravity, thrust minus drag, the bank's roll toward atan(a_lat/g)",
    ),
    "starling-roost": Check(
        check_starling_roost,
        "starlings",
        seeded=False,
        guards="the roost's horizontal pull: its size and its ramp from the radius to twice the radius",
    ),
    "starling-step": Check(
        check_starling_step,
        "starlings",
        seeded=False,
        guards="the whole starling step: the 7 nearest neighbours, the blind angle, separation, alignment, "
        "cohesion, steering limit, roost, banked flight",
    ),
    "starling-gamma": Check(
        check_starling_gamma,
        "starlings",
        seeded=False,
        guards="the blind angle's effect on the flock's structure: gamma(1) about 0.6 against its control (full "
        "suite only)",
        full_only=True,
    ),
}
"""Check name -> :class:`Check` (an explicit registry, run in this order)."""

MODELS = ("vicsek", "couzin", "starlings")
"""Models whose parameters ``--set`` may change (keys ``vicsek.*``, ``couzin.*``; ``starlings.KEY``
changes KEY of the ``starlings-3d`` preset, e.g. ``starlings.neighbors.k=6``)."""


def overrides_for(model: str | None, overrides: tuple[str, ...]) -> tuple[str, ...]:
    """The dotted overrides that belong to ``model`` (keys starting with ``model.``)."""
    if model is None:
        return ()
    return tuple(o for o in overrides if o.split("=", 1)[0].strip().startswith(model + "."))


def run_checks(
    quick: bool,
    only: list[str] | None = None,
    on_start: Callable[[str], None] | None = None,
    overrides: tuple[str, ...] = (),
    reference: Path | None = None,
    seeds: int | None = None,
) -> list[CheckResult]:
    """Run the named checks (default: all; with ``quick`` all but the full-only ones) in registry order;
    each result carries its run time.
    ``overrides`` ("vicsek.update=forward", ...) change the model of the checks of that model;
    ``reference`` is the folder of the stored reference curves (default: docs/results/validation);
    ``seeds`` replaces the number of flocksim seeds of the model checks (default: the protocol's)."""
    names = only if only else [name for name, check in CHECKS.items() if not (quick and check.full_only)]
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"--only: unknown check {unknown[0]!r}; allowed: {', '.join(CHECKS)}")
    results = []
    for name, check in CHECKS.items():
        if name not in names:
            continue
        if on_start is not None:
            on_start(name)
        options: dict[str, object] = {}
        if check.model is not None:
            options["overrides"] = overrides_for(check.model, overrides)
            if check.seeded:
                options["seeds"] = seeds
        if check.reference:
            options["reference"] = reference
        started = time.perf_counter()
        result = check.run(quick, **options)
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results
