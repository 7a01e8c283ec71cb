"""The validation suite: every check by name, run in order, quick or full."""

from __future__ import annotations

import time
from collections.abc import Callable

from flocksim.validate.checks import CheckResult
from flocksim.validate.couzin import check_couzin_hysteresis, check_couzin_phases
from flocksim.validate.identities import check_identities
from flocksim.validate.spin import check_spin_propagation
from flocksim.validate.vicsek import check_vicsek

CHECKS: dict[str, Callable[[bool], CheckResult]] = {
    "identities": check_identities,
    "vicsek": check_vicsek,
    "couzin-phases": check_couzin_phases,
    "couzin-hysteresis": check_couzin_hysteresis,
    "spin-propagation": check_spin_propagation,
}
"""Check name -> function(quick) returning its :class:`CheckResult` (an explicit registry)."""


def run_checks(
    quick: bool, only: list[str] | None = None, on_start: Callable[[str], None] | None = None
) -> list[CheckResult]:
    """Run the named checks (default: all) in registry order; each result carries its run time."""
    names = only if only else list(CHECKS)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"--only: unknown check {unknown[0]!r}; allowed: {', '.join(CHECKS)}")
    results = []
    for name in CHECKS:
        if name not in names:
            continue
        if on_start is not None:
            on_start(name)
        started = time.perf_counter()
        result = CHECKS[name](quick)
        result.seconds = time.perf_counter() - started
        results.append(result)
    return results
