"""The starling checks of ``flocksim validate``: the NumPy reference's rules against hand-computed
values, the checks passing on the real model, and each check failing on a deliberately broken one
(the blind angle ignored, no banking, the roost's pull doubled, 6 neighbours instead of 7).

The broken models are the real preset with one setting changed, as ``validate --set starlings.KEY``
changes it; each run takes a few seconds once the reynolds 3D kernel is compiled (about 30 s cold).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.validate.reference import starling_numpy as ref
from flocksim.validate.starlings import (
    check_starling_flight,
    check_starling_roost,
    check_starling_step,
    roost_return,
    turn_figures,
)

G = 9.81
DT = 1.0 / 60.0
QUIET = replace(ref.PRESET, roost_weight=0.0)  # the flock's rules alone


def test_the_k_nearest_are_nearest_first_with_ties_to_the_lower_index():
    pos = np.array([[0.0, 0, 0], [2.0, 0, 0], [-2.0, 0, 0], [1.0, 0, 0], [5.0, 0, 0]])
    near = ref.neighbours(pos, 3)
    assert near[0].tolist() == [3, 1, 2]  # 1 and 2 both at 2: the lower index first
    assert near[4].tolist() == [1, 3, 0]
    assert ref.neighbours(pos, 7).shape == (5, 4)  # at most the others


def test_the_blind_angle_hides_a_cone_about_the_tail():
    h = np.array([1.0, 0.0, 0.0])
    # 90 degrees: hidden within 45 degrees of straight behind
    offsets = np.array([[-1.0, 0, 0], [-1.0, 0.99, 0], [-1.0, 1.01, 0], [0.0, 1.0, 0], [1.0, 0, 0], [0.0, 0, 0]])
    assert ref.seen(offsets, h, 90.0).tolist() == [False, False, True, True, True, True]
    assert ref.seen(offsets, h, 0.0).all()
    assert ref.seen(offsets, np.zeros(3), 90.0).all()  # no heading: nothing behind
    # 180 degrees: the whole half-space behind
    assert ref.seen(np.array([[-1.0, 5.0, 0], [0.01, 5.0, 0]]), h, 180.0).tolist() == [False, True]


def test_the_bank_rolls_in_fast_and_out_slowly_toward_atan_lateral_over_g():
    bank = ref.rolled(np.array([0.0]), np.array([G]), ref.PRESET)  # target 45 degrees, growing
    assert bank[0] == pytest.approx(math.pi / 4 * 10 * DT)
    bank = ref.rolled(np.array([0.5]), np.array([0.0]), ref.PRESET)  # target 0: shrinking at roll_out 3 /s
    assert bank[0] == pytest.approx(0.5 - 0.5 * 3 * DT)
    bank = ref.rolled(np.array([0.2]), np.array([-G]), ref.PRESET)  # a change of side rolls out
    assert bank[0] == pytest.approx(0.2 + (-math.pi / 4 - 0.2) * 3 * DT)
    bank = ref.rolled(np.array([1.0]), np.array([100 * G]), ref.PRESET)  # target clipped to 60 degrees
    assert bank[0] == pytest.approx(1.0 + (math.pi / 3 - 1.0) * 10 * DT)
    slow = replace(ref.PRESET, dt=1.0)  # rate x dt above 1: the whole way, no overshoot
    assert ref.rolled(np.array([0.0]), np.array([G]), slow)[0] == pytest.approx(math.pi / 4)


def test_thrust_minus_drag_is_linear_or_cubic_in_the_speed_deficit():
    assert ref.thrust(np.array([7.0]), ref.LINEAR)[0] == pytest.approx(3.0)
    assert ref.thrust(np.array([7.0]), ref.PRESET)[0] == pytest.approx(3.0 * (3.0 / 1.5) ** 2)
    assert ref.thrust(np.array([11.5]), ref.PRESET)[0] == pytest.approx(-1.5)
    # a stiff law is capped at rate 1/dt: 7 m/s with a band of 0.01 m/s reaches cruise in one step
    stiff = replace(ref.PRESET, speed_band=0.01)
    assert ref.thrust(np.array([7.0]), stiff)[0] == pytest.approx(3.0 / DT)


def test_level_flight_at_cruise_is_steady_and_a_banked_bird_turns_by_its_lift():
    v = np.array([[10.0, 0.0, 0.0]])
    same, bank = ref.fly(v, np.array([0.0]), np.zeros((1, 3)), ref.PRESET)
    assert same.tolist() == v.tolist() and bank[0] == 0.0  # lift g balances gravity exactly
    # a sideways steering of g along the side h x up = +z banks the bird; lift g turns it toward +z
    moved, bank = ref.fly(v, np.array([0.0]), np.array([[0.0, 0.0, G]]), ref.PRESET)
    b = math.pi / 4 * 10 * DT
    assert bank[0] == pytest.approx(b)
    assert moved[0] == pytest.approx([10.0, G * (math.cos(b) - 1.0) * DT, G * math.sin(b) * DT])
    # the steering's forward part acts along the heading; thrust is zero at cruise
    faster, _ = ref.fly(v, np.array([0.0]), np.array([[2.0, 0.0, 0.0]]), ref.PRESET)
    assert faster[0] == pytest.approx([10.0 + 2.0 * DT, 0.0, 0.0])
    # the speed is clamped to [min_speed, max_speed] (linear thrust: 1 + 9 dt is still below 5 m/s)
    slow, _ = ref.fly(np.array([[1.0, 0.0, 0.0]]), np.array([0.0]), np.zeros((1, 3)), ref.LINEAR)
    assert np.linalg.norm(slow[0]) == pytest.approx(ref.PRESET.min_speed)


def test_the_rules_of_two_birds_by_hand():
    pos = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    vel = np.array([[10.0, 0.0, 0.0], [10.0, 0.0, 1.0]])
    a = ref.steering(pos, vel, QUIET)
    # bird 0: separation -(1, 0, 0)/1^2, alignment 3 x (0, 0, 1)/1 s, cohesion (1, 0, 0)
    assert a[0] == pytest.approx([-1.0 + 1.0, 0.0, 3.0])
    # bird 1: bird 0 is straight behind it, in the blind cone: separation only, (1, 0, 0)
    assert a[1] == pytest.approx([1.0, 0.0, 0.0])
    blind_off = ref.steering(pos, vel, replace(QUIET, blind_angle_deg=0.0))
    assert blind_off[1] == pytest.approx([1.0 - 1.0, 0.0, -3.0])
    far = ref.steering(np.array([[0.0, 0, 0], [100.0, 0, 0]]), vel, QUIET)
    assert np.linalg.norm(far[0]) == pytest.approx(QUIET.max_force)  # clamped: cohesion 100 m/s^2


def test_the_roost_turns_a_bird_and_holds_its_altitude():
    p = ref.PRESET
    # 250 m out flying straight away (centre behind): the full pull, 3 m/s^2, toward h x up = +z
    a = ref.roost_pull(np.array([[250.0, 0.0, 0.0]]), np.array([[10.0, 0.0, 0.0]]), p)
    assert a[0] == pytest.approx([0.0, 0.0, 3.0])
    # 150 m out, flying along +z, the centre on its side h x up = -x: half the pull
    a = ref.roost_pull(np.array([[150.0, 0.0, 0.0]]), np.array([[0.0, 0.0, 10.0]]), p)
    assert a[0] == pytest.approx([-1.5, 0.0, 0.0])
    # inside the radius: no horizontal pull; vertically 0.1 x 10 m - 2 sqrt(0.1) x 1 m/s
    a = ref.roost_pull(np.array([[10.0, -10.0, 0.0]]), np.array([[10.0, 1.0, 0.0]]), p)
    assert a[0] == pytest.approx([0.0, 1.0 - 2.0 * math.sqrt(0.1), 0.0])
    a = ref.roost_pull(np.array([[10.0, -100.0, 0.0]]), np.array([[10.0, 0.0, 0.0]]), p)
    assert a[0][1] == pytest.approx(p.max_climb)


def test_a_level_circle_gives_its_radius_and_the_bank_of_a_level_turn():
    """Velocities along a circle of radius 50 m at 10 m/s, banked at atan(v^2/(g r)): the measured
    radius is 50 m and tan(bank) / (v^2/(g r)) is 1; a straight path has no radius."""
    t = np.arange(121) * DT
    angle = 10.0 / 50.0 * t
    vel = np.stack([10.0 * np.cos(angle), 0.0 * t, 10.0 * np.sin(angle)], axis=1)[:, None, :]
    bank = np.full((121, 1), math.atan(100.0 / (G * 50.0)))
    turn = turn_figures(vel, bank, DT, slice(0, 120))
    assert turn["radius"] == pytest.approx(50.0) and turn["speed"] == pytest.approx(10.0)
    assert turn["tan_ratio"] == pytest.approx(1.0) and turn["bank"] == pytest.approx(math.degrees(bank[0, 0]))
    straight = turn_figures(np.tile([[[10.0, 0.0, 0.0]]], (121, 1, 1)), 0.0 * bank, DT, slice(0, 120))
    assert straight["radius"] == math.inf and math.isnan(straight["tan_ratio"])


def test_the_return_time_is_the_first_step_back_inside():
    assert roost_return(np.array([150.0, 160.0, 120.0, 99.0, 98.0, 101.0]), 100.0, 0.5) == (1.5, 160.0)
    assert roost_return(np.array([150.0, 160.0]), 100.0, 0.5) == (math.inf, 160.0)


def failed(result) -> set[str]:
    return {m.name for m in result.measurements if not m.passed}


@pytest.fixture(scope="module")
def real():
    return [check(True) for check in (check_starling_flight, check_starling_roost, check_starling_step)]


def test_the_real_model_passes_every_starling_check(real):
    for result in real:
        assert result.passed, (result.name, failed(result))
    step = real[2]
    changed = next(m for m in step.measurements if m.name.startswith("bird-steps"))
    assert changed.value > 50  # the blind angle changes many birds' steps: the comparison has teeth


def test_the_blind_angle_ignored_fails_the_step_check():
    result = check_starling_step(True, ("starlings.rules.blind_angle=0",))
    assert not result.passed
    assert "bird-steps whose step the blind angle changes (flocksim)" in failed(result)
    assert next(m.value for m in result.measurements if m.name.startswith("bird-steps")) == 0


def test_six_neighbours_instead_of_seven_fail_the_step_check():
    result = check_starling_step(True, ("starlings.neighbors.k=6",))
    assert "largest difference per step from the NumPy reference, velocity [m/s]" in failed(result)


def test_the_roost_pull_doubled_fails_the_roost_and_flight_checks():
    roost = check_starling_roost(True, ("starlings.rules.roost.pull=6",))
    assert {"return time from 250 m [s]", "return time from 150 m [s]"} <= failed(roost)
    flight = check_starling_flight(True, ("starlings.rules.roost.pull=6",))
    assert "bank in the turn under the roost's full pull [deg]" in failed(flight)


def test_no_banking_fails_the_flight_check():
    """A point mass (rules.flight.mode=point) turns without a bank and is not held to the cruise speed."""
    result = check_starling_flight(True, ("starlings.rules.flight.mode=point",))
    assert {
        "bank in the turn under the roost's full pull [deg]",
        "mean speed 10-30 s after a level start at 7 m/s [m/s]",
    } <= failed(result)


def test_the_cli_lists_what_each_check_guards_and_takes_starling_settings(tmp_path):
    runner = CliRunner()
    listing = runner.invoke(app, ["validate", "--list"])
    assert listing.exit_code == 0
    assert "starling-step:" in listing.output and "the 7 nearest neighbours, the blind angle" in listing.output
    assert listing.output.count("Guards:") == listing.output.count("\n")
    bad = runner.invoke(app, ["validate", "--only", "starling-step", "--set", "starlings.nope=1", "-o", str(tmp_path)])
    assert bad.exit_code == 2 and "nope" in bad.output
    broken = runner.invoke(
        app,
        [
            "validate",
            "--quick",
            "--only",
            "starling-step",
            "--set",
            "starlings.neighbors.k=6",
            "-o",
            str(tmp_path / "r"),
        ],
    )
    assert broken.exit_code == 1 and "starling-step: FAIL" in broken.output


def test_quick_leaves_out_the_full_only_checks_unless_named(monkeypatch):
    from flocksim.validate import suite
    from flocksim.validate.checks import CheckResult as Result

    ran = []

    def make(name):
        def run(quick, **options):
            ran.append(name)
            return Result(name, name, "", [])

        return run

    monkeypatch.setattr(suite, "CHECKS", {"a": suite.Check(make("a")), "b": suite.Check(make("b"), full_only=True)})
    suite.run_checks(True)
    assert ran == ["a"]
    suite.run_checks(False)
    assert ran == ["a", "a", "b"]
    suite.run_checks(True, only=["b"])
    assert ran[-1] == "b"


@pytest.mark.slow
def test_the_blind_angle_ignored_fails_the_gamma_check():
    """Sixteen runs of 500 birds (about 40 s on a quiet machine): without the blind angle gamma(1) is the
    control's, below Ballerini's 0.6 and no higher than without it."""
    from flocksim.validate.starling_gamma import check_starling_gamma

    result = check_starling_gamma(False, ("starlings.rules.blind_angle=0",))
    assert "gamma(1) with the blind angle - without it (the control)" in failed(result)
