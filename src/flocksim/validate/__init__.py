"""``flocksim validate``: checks against published results, with a markdown + PNG report.

Each check (:data:`CHECKS`) runs small simulations or synthetic configurations and
returns measured numbers beside expected ones (:class:`CheckResult`); ``quick`` runs
smaller, shorter versions of the same checks. See docs/validation.md.
"""

from __future__ import annotations

from flocksim.validate.checks import CheckResult, Measurement
from flocksim.validate.report import markdown, write_report
from flocksim.validate.suite import CHECKS, run_checks

__all__ = ["CHECKS", "CheckResult", "Measurement", "markdown", "run_checks", "write_report"]
