"""The turn propagation family (turn-propagation): the mean heading of a flock after a few birds
turn, against its unturned twin, and the waves preset's arrival fits (:mod:`.waves`)."""

from __future__ import annotations

from flocksim.experiments.common import (
    BASIC,
    SPIN,
    Experiment,
    RunSpec,
    _both,
    alive_pv,
    heading_angle,
    make_sim,
    seconds,
    steps_of,
    twin,
)
from flocksim.experiments.waves import _wave_conditions, measure_wave
from flocksim.metrics import polarization
from flocksim.metrics.starlings import mean_heading

TURN_DELAYS = (0.0, 1.0, 3.0, 10.0)


def measure_turn(spec: RunSpec) -> dict[str, float]:
    """Twin runs from one polarized state: one with 10 birds turned by 60 degrees."""
    extra = ("turning.enabled=false", "agents.init.kind=aligned")
    base = make_sim(spec, 500, extra)
    base.step(steps_of(base, seconds(spec, 20.0, 2.0)))
    turned = twin(base)
    center = int(base.state.ids[base.state.alive][0])
    count = min(10, base.state.n_alive)
    turned.perturb_turn(center_id=center, count=count, angle_deg=60.0)
    out = {"polarization": polarization(alive_pv(base)[1])}
    done = 0.0
    for delay in TURN_DELAYS:
        if delay > done:
            n = steps_of(base, delay - done)
            base.step(n)
            turned.step(n)
            done = delay
        change = heading_angle(mean_heading(alive_pv(base)[1]), mean_heading(alive_pv(turned)[1]))
        out[f"dheading_{delay:g}s_deg"] = change
    return out


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "turn-propagation",
        "Twin runs, one of them turned. Presets: 10 of 500 birds (bird 0 and its 9 nearest) turned 60 degrees "
        "left after a 20 s warm-up from an aligned start (spontaneous turns off): angle [deg] between the mean "
        "headings of the turned run and of its unturned twin, right after the turn and 1, 3, 10 s later. "
        "Waves: starlings-3d-waves in metres and seconds (16 units per metre, as turn-waves: 3000 birds, open "
        "sky), after a 10 s warm-up its 10 edge birds start a 90-degree turn and nobody else is turned; a bird "
        "is reached when its heading is 1 degree from its twin's; arrival time t [s] against distance r [m] from "
        "the edge bird, fitted as t = a + b r^exponent (1: a wave, 2: diffusion) and t = a + r / speed [m/s], "
        "beside the linearised model's speed (theory_speed [m/s], docs/models.md); underdamped (eta 0.02) and "
        "overdamped (eta = chi = 0.25); 3 s.",
        (
            *_both({"inertial-spin": (SPIN,), "basic": (BASIC,)}),
            *_wave_conditions(measure_wave, "wave: "),
        ),
        measure_turn,
        {(d, "inertial-spin"): "about 1 degree" for d in (2, 3)},
    ),
)
