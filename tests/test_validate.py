"""``flocksim validate``: the report, the checks' measurements, the CLI.

The CLI test runs the whole ``--quick`` suite (about 5 s with numba's cache warm, about 60 s on 2 busy
cores when every kernel compiles first).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.validate import CHECKS, CheckResult, Measurement, markdown
from flocksim.validate.spin import COUPLING, PHI0, SPACING, arrival_times
from flocksim.validate.vicsek import _crossing

runner = CliRunner()


def test_quick_validation_passes_and_writes_the_report(tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["validate", "--quick", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert f"{len(CHECKS)} of {len(CHECKS)} checks passed" in result.output
    text = (out / "validation.md").read_text()
    assert "| vicsek | pass |" in text and "| couzin-hysteresis | pass |" in text
    for name in ("vicsek", "couzin-phases", "spin-propagation"):
        assert f"![{name}]({name}.png)" in text
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_options_exit_2(tmp_path):
    result = runner.invoke(app, ["validate", "--only", "nope", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "allowed: identities" in result.output
    file = tmp_path / "f"
    file.write_text("")
    result = runner.invoke(app, ["validate", "--only", "identities", "-o", str(file)])
    assert result.exit_code == 2 and "--output" in result.output
    listing = runner.invoke(app, ["validate", "--list"])
    assert listing.exit_code == 0 and all(name in listing.output for name in CHECKS)


def test_a_failed_measurement_fails_its_check_and_shows_in_the_report():
    ok = Measurement("a", 1.0, 0.0, 2.0, "1")
    bad = Measurement("b", 3.0, 0.0, 2.0, "1")
    nan = Measurement("c", math.nan, -math.inf, math.inf)
    assert ok.passed and not bad.passed and not nan.passed
    r = CheckResult("x", "X", "ref", [ok, bad])
    assert not r.passed
    text = markdown([r], quick=True, figures={})
    assert "**0 of 1 checks passed**" in text and "| b | 3 | [0, 2] | 1 | **FAIL** |" in text


def test_crossing_interpolates():
    assert _crossing([0.0, 1.0, 2.0], [1.0, 0.8, 0.2], 0.5) == pytest.approx(1.5)
    assert math.isnan(_crossing([0.0, 1.0], [1.0, 0.9], 0.5))


def test_underdamped_turn_travels_at_the_linear_speed():
    """A short chain: the half turn reaches bird k at about k / sqrt(J/2) frames (linearised wave speed)."""
    t = arrival_times(25, 0.002, 130, seed=0)
    k = np.arange(25)
    reached = ~np.isnan(t) & (k >= 3)
    assert reached.sum() >= 15
    speed = np.polyfit(t[reached], k[reached] * SPACING, 1)[0]
    assert speed == pytest.approx(SPACING * math.sqrt(COUPLING / 2), rel=0.1)
    assert t[0] == 1 and PHI0 > 0  # the held bird counts as turned after the first step
