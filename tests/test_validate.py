"""``flocksim validate``: the report, the checks' measurements, the CLI, and that a deliberately
changed model fails against the independent references.

The CLI test runs the whole ``--quick`` suite (about 30 s with numba's cache warm on 2 cores, more when
every kernel compiles first); the two failure tests run the quick vicsek and couzin-reference checks.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.validate import CHECKS, CheckResult, Measurement, curves, markdown
from flocksim.validate.compare import FLOOR, against_reference, allowed_errors, tolerance
from flocksim.validate.protocols import CouzinProtocol, VicsekProtocol
from flocksim.validate.reference import couzin_numpy, vicsek_numpy
from flocksim.validate.spin import COUPLING, PHI0, SPACING, arrival_times
from flocksim.validate.vicsek import _crossing

runner = CliRunner()


@pytest.mark.slow
def test_quick_validation_passes_and_writes_the_report(tmp_path):
    out = tmp_path / "report"
    result = runner.invoke(app, ["validate", "--quick", "-o", str(out)])
    assert result.exit_code == 0, result.output
    quick = sum(not check.full_only for check in CHECKS.values())
    assert f"{quick} of {quick} checks passed" in result.output
    text = (out / "validation.md").read_text()
    assert "| vicsek | pass |" in text and "| couzin-reference | pass |" in text
    for name in ("vicsek", "couzin-phases", "couzin-reference", "spin-propagation"):
        assert f"![{name}]({name}.png)" in text
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_a_terminal_each_check_says_when_it_starts(tmp_path):
    """Standard error not a terminal (nohup, | tee, a batch job): one line per check as it starts."""
    result = runner.invoke(app, ["validate", "--only", "identities", "-o", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == ["validate: identities ..."]


def test_bad_options_exit_2(tmp_path):
    result = runner.invoke(app, ["validate", "--only", "nope", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "allowed: identities" in result.output
    file = tmp_path / "f"
    file.write_text("")
    result = runner.invoke(app, ["validate", "--only", "identities", "-o", str(file)])
    assert result.exit_code == 2 and "--output" in result.output
    listing = runner.invoke(app, ["validate", "--list"])
    assert listing.exit_code == 0 and all(name in listing.output for name in CHECKS)
    for bad, says in (
        ("rules.alignment.weight=1", "vicsek.* or couzin.*"),
        ("vicsek.update", "KEY=VALUE"),
        ("vicsek.update=backward", "vicsek.update"),
        ("couzin.nope=1", "couzin.nope"),
    ):
        result = runner.invoke(app, ["validate", "--only", "vicsek", "--set", bad, "-o", str(tmp_path / "r")])
        assert result.exit_code == 2 and says in result.output, (bad, result.output)
    result = runner.invoke(app, ["validate", "--quick", "--reference", str(tmp_path / "none"), "-o", str(tmp_path)])
    assert result.exit_code == 2 and "reference curves not found" in result.output
    result = runner.invoke(app, ["validate", "--make-reference", "--only", "identities"])
    assert result.exit_code == 2 and "no check with a reference" in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_the_forward_update_fails_against_the_papers_curve(tmp_path):
    """The Vicsek check is able to fail: the forward update (move along the new heading) is held to the
    reference curve of the paper's update, and fails, with the CLI's exit status 1."""
    result = runner.invoke(
        app, ["validate", "--quick", "--only", "vicsek", "--set", "vicsek.update=forward", "-o", str(tmp_path)]
    )
    assert result.exit_code == 1, result.output
    assert "vicsek: FAIL (v_a at eta = 4)" in result.output
    assert "Model changed for this run: vicsek.update=forward" in (tmp_path / "validation.md").read_text()


def test_the_quick_vicsek_band_is_under_seven_percent_of_v_a():
    """The quick check's band at eta = 4, from the stored reference curve: under 7 % of v_a, so a model
    whose v_a is 10 % off falls outside it (the old protocol, 12 reference and 2 flocksim seeds, gave 18 %)."""
    from flocksim.validate.protocols import VICSEK

    p = VICSEK["quick"]
    ref = curves.vicsek_reference(p)[4.0]
    assert len(ref) == p.reference_seeds >= 20
    band = tolerance(ref, p.seeds, len(p.etas))
    assert band < 0.07 * np.mean(ref), band / np.mean(ref)
    assert tolerance(ref[:12], 2, 2) > 0.15 * np.mean(ref)  # the old protocol's band, for comparison


@pytest.mark.slow
def test_vicsek_noise_two_and_a_half_percent_too_strong_fails(monkeypatch):
    """A deliberately broken model: every noise value scaled by 1.025 lowers v_a at eta = 4 by about 10 %
    (the curve falls by about 0.26 per radian there); the quick check fails it at eta = 4."""
    from flocksim.validate import vicsek

    params = vicsek.vicsek_params
    monkeypatch.setattr(vicsek, "vicsek_params", lambda n, eta, overrides=(): params(n, 1.025 * eta, overrides))
    result = vicsek.check_vicsek(quick=True)
    (point,) = result.measurements
    assert not point.passed and point.value < point.low, point
    assert point.value < 0.95 * (point.low + point.high) / 2  # at least 5 % below the reference's mean


def test_a_perturbed_couzin_model_fails_against_the_reference(tmp_path):
    """The Couzin comparison is able to fail: a turning rate of 50 instead of 40 degrees/s."""
    result = runner.invoke(
        app,
        ["validate", "--quick", "--only", "couzin-reference", "--set", "couzin.max_turn_deg=50", "-o", str(tmp_path)],
    )
    assert result.exit_code == 1, result.output
    assert "couzin-reference: FAIL" in result.output


def test_point_by_point_tolerance_is_the_standard_error_of_the_difference():
    """t standard errors of the difference of the two seed means, t from Student's distribution with the
    reference's degrees of freedom and a 1 % family-wise risk (Bonferroni over the points)."""
    assert allowed_errors(1, 12) == pytest.approx(3.1058, abs=1e-4)  # t(11) at 0.995: 1 % two-sided
    assert allowed_errors(2, 11) == pytest.approx(3.5814, abs=1e-4)  # t(10) at 0.9975
    reference = [0.50, 0.52, 0.48, 0.51, 0.49, 0.50, 0.51, 0.49]
    s = np.std(reference, ddof=1)
    tol = tolerance(reference, 2, 12)
    assert tol == pytest.approx(allowed_errors(12, 8) * s * math.sqrt(1 / 8 + 1 / 2) + FLOOR)
    mean = np.mean(reference)
    inside = against_reference("x", [mean + 0.99 * tol] * 2, reference, 12, "r")
    outside = against_reference("x", [mean + 1.01 * tol] * 2, reference, 12, "r")
    assert inside.passed and not outside.passed


def test_reference_curves_round_trip_and_refuse_another_protocol(tmp_path, monkeypatch):
    """make_reference writes every protocol's runs; reading them back gives the reference's own numbers,
    and a protocol with other settings is refused."""
    tiny_v = VicsekProtocol("quick", 100, (1.0, 4.0), 20, 30, 10, reference_seeds=2, seeds=1)
    tiny_c = CouzinProtocol("quick", 10, (0.0, 2.0), 20, 10, 5, reference_seeds=2, seeds=1)
    monkeypatch.setattr(curves, "VICSEK", {"quick": tiny_v})
    monkeypatch.setattr(curves, "COUZIN", {"quick": tiny_c})
    paths = curves.make_reference(tmp_path, ["vicsek", "couzin"], jobs=1)
    assert [p.name for p in paths] == ["vicsek.csv", "couzin.csv"]
    v = curves.vicsek_reference(tiny_v, tmp_path)
    assert v[4.0][1] == vicsek_numpy.time_averaged_order(100, 4.0, 1, 20, 30, 10)
    c = curves.couzin_reference(tiny_c, tmp_path)
    direct = couzin_numpy.ramp(10, 1, (0.0, 2.0), 20, 10, 5)
    assert c["m_down"][1, 1] == direct["m_down"][1] and c["p_up"][1, 0] == direct["p_up"][0]
    with pytest.raises(curves.ReferenceError, match="another protocol"):
        curves.vicsek_reference(VicsekProtocol("quick", 100, (1.0, 4.0), 20, 40, 10, 2, 1), tmp_path)
    with pytest.raises(curves.ReferenceError, match="another protocol"):
        curves.couzin_reference(CouzinProtocol("quick", 10, (0.0, 2.0), 20, 10, 5, 3, 1), tmp_path)


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
