"""The banked starling model (``starlings-3d``) against the papers' figures and, point by point,
against the independent NumPy reference (:mod:`.reference.starling_numpy`).

Every run uses the preset with the birds' own urges off (``rules.flight.speed_wander=0``,
``steer_wander=0``: they draw random numbers) and no predator (its escape waves off), so a run
is deterministic and the reference repeats it step for step. Three checks:

- ``starling-flight``: a lone bird started level at 7 m/s settles at the cruise speed; a lone
  bird flying straight away from the roost, beyond twice its radius, turns under the roost's full
  pull (3 m/s^2): its bank settles at atan(pull / g) and its path on a circle of radius
  v^2 / pull, and tan(bank) = v^2 / (g r), the level turn of Hildenbrandt et al. 2010;
- ``starling-roost``: how long birds started beyond the roost take to come back inside its
  radius, and how far out they get, against the reference;
- ``starling-step``: a flock of 40 birds beyond the roost's radius stepped by flocksim; at every
  step the reference steps flocksim's state and the two must agree to rounding; and the blind
  angle's effect, each bird's step with it against its control without it, must be the
  reference's.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from flocksim.config import apply_overrides
from flocksim.scenarios import load_preset
from flocksim.simulation import Simulation
from flocksim.validate.checks import CheckResult, Measurement, relative, within
from flocksim.validate.reference import starling_numpy as ref

PRESET = "starlings-3d"
QUIET = ("rules.flight.speed_wander=0", "rules.flight.steer_wander=0", "escape.enabled=false")
"""The birds' own urges off (random numbers), and the escape waves (inert without a predator; they need
banked flight, so a broken model without it could not be built)."""
PAPER = "Hildenbrandt, Carere & Hemelrijk 2010, Behav. Ecol. 21:1349; Hemelrijk & Hildenbrandt 2011, PLoS ONE 6:e22479"
AGREE = 1e-9  # largest difference [m, m/s, rad] from the reference that rounding explains
PREFIX = "starlings."


def strip(overrides: tuple[str, ...]) -> list[str]:
    """``starlings.neighbors.k=6`` -> ``neighbors.k=6`` (the keys ``--set`` gives these checks)."""
    return [o.strip()[len(PREFIX) :] if o.strip().startswith(PREFIX) else o for o in overrides]


def starling_sim(n: int, overrides: tuple[str, ...] = (), seed: int = 0) -> Simulation:
    """The preset with ``n`` birds and no urges, then the model changes ``overrides`` (one thread)."""
    params = apply_overrides(load_preset(PRESET), [f"agents.n={n}", *QUIET, *strip(overrides)])
    return Simulation(params, seed=seed, threads=1)


def fly_flocksim(position, velocity, steps: int, overrides: tuple[str, ...] = ()):
    """flocksim's positions, velocities, banks of birds started at ``position``, ``velocity``
    (level, bank 0), every step: arrays of shape (steps + 1, n, 3) and (steps + 1, n)."""
    position = np.asarray(position, dtype=float)
    sim = starling_sim(position.shape[0], overrides)
    s = sim.state
    s.position[:] = position
    s.velocity[:] = velocity
    s.spin[:] = 0.0
    pos, vel, bank = [s.position.copy()], [s.velocity.copy()], [s.spin[:, 0].copy()]
    for _ in range(steps):
        sim.step(1)
        pos.append(s.position.copy())
        vel.append(s.velocity.copy())
        bank.append(s.spin[:, 0].copy())
    return np.array(pos), np.array(vel), np.array(bank)


def fly_reference(position, velocity, steps: int, p: ref.StarlingParams = ref.PRESET):
    out = ref.run(position, velocity, np.zeros(len(position)), steps, p)
    return tuple(np.array([o[k] for o in out]) for k in range(3))


def turn_figures(vel: np.ndarray, bank: np.ndarray, dt: float, window: slice) -> dict[str, float]:
    """Mean bank [deg], horizontal speed, turn radius r = v_h / (rate of turn of the horizontal
    heading) and tan(bank) / (v_h^2 / (g r)) of bird 0 over the steps in ``window``."""
    v = vel[:, 0, :]
    angle = np.unwrap(np.arctan2(v[:, 2], v[:, 0]))
    rate = np.abs(np.diff(angle)) / dt  # rad/s, between step t and t + 1
    speed = np.hypot(v[:, 0], v[:, 2])[:-1]
    b = bank[:-1, 0]
    rate, speed, b = rate[window], speed[window], b[window]
    if np.mean(rate) <= 0.0:  # no turn at all: no radius, and tan(bank) / (v^2/(g r)) is undefined (fails)
        return {"bank": math.degrees(float(np.mean(np.abs(b)))), "speed": float(np.mean(speed)),
                "radius": math.inf, "tan_ratio": math.nan}  # fmt: skip
    radius = float(np.mean(speed) / np.mean(rate))
    lift_ratio = float(np.mean(np.tan(np.abs(b))) / np.mean(speed * rate / ref.PRESET.gravity))
    return {
        "bank": math.degrees(float(np.mean(np.abs(b)))),
        "speed": float(np.mean(speed)),
        "radius": radius,
        "tan_ratio": lift_ratio,
    }


CRUISE_START = ([[0.0, 0.0, 0.0]], [[7.0, 0.0, 0.0]])  # at the roost's centre and altitude, slow
TURN_START = ([[250.0, 0.0, 0.0]], [[10.0, 0.0, 0.0]])  # 2.5 roost radii out, flying straight away


def check_starling_flight(quick: bool, overrides: tuple[str, ...] = ()) -> CheckResult:
    """Banked flight: a lone bird settles at the cruise speed, and turns on a bank of atan(a/g)."""
    p = ref.PRESET
    dt = p.dt
    cruise_steps = round(30.0 / dt)
    turn_steps = round(7.0 / dt)
    f_cruise = fly_flocksim(*CRUISE_START, cruise_steps, overrides)
    r_cruise = fly_reference(*CRUISE_START, cruise_steps)
    f_turn = fly_flocksim(*TURN_START, turn_steps, overrides)
    r_turn = fly_reference(*TURN_START, turn_steps)
    late = slice(round(10.0 / dt), None)
    speed = np.linalg.norm(f_cruise[1][:, 0, :], axis=1)
    window = slice(round(2.0 / dt), round(6.0 / dt))
    turn = turn_figures(f_turn[1], f_turn[2], dt, window)
    pull = p.roost_weight * p.roost_pull
    path = max(float(np.abs(f[0] - r[0]).max()) for f, r in ((f_cruise, r_cruise), (f_turn, r_turn)))
    out = [
        within(
            "mean speed 10-30 s after a level start at 7 m/s [m/s]",
            float(speed[late].mean()),
            p.cruise,
            0.15,
            f"the cruise speed, lift = gravity ({PAPER.split(';')[0]})",
        ),
        within(
            "bank in the turn under the roost's full pull [deg]",
            turn["bank"],
            math.degrees(math.atan(pull / p.gravity)),
            0.5,
            "atan(3 m/s^2 / g): the bank that turns at 3 m/s^2",
        ),
        relative(
            "turn radius [m]",
            turn["radius"],
            turn["speed"] ** 2 / pull,
            0.03,
            "v^2 / pull, the measured horizontal speed v",
        ),
        relative(
            "tan(bank) / (v^2 / (g r))", turn["tan_ratio"], 1.0, 0.05, "a level banked turn: tan(bank) = v^2/(g r)"
        ),
        Measurement(
            "largest position difference from the NumPy reference, both paths [m]",
            path,
            0.0,
            1e-6,
            "<= 1e-6 (the same model, rounding only)",
        ),
    ]
    t = np.arange(cruise_steps + 1) * dt

    def plot(ax) -> None:
        ax.plot(t, speed, color="C0", label="flocksim, from 7 m/s")
        ax.plot(
            t[::30],
            np.linalg.norm(r_cruise[1][::30, 0, :], axis=1),
            "s",
            mfc="none",
            color="C0",
            label="NumPy reference",
        )
        ax.axhline(p.cruise, color="0.5", lw=0.8)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("speed [m/s]")
        ax.set_title("A lone starling settles at the cruise speed (10 m/s)")
        ax.legend(fontsize=8)

    return CheckResult(
        "starling-flight",
        "Banked flight: cruise speed, bank and radius of a turn",
        PAPER,
        out,
        notes=f"{PRESET} (urges off), one bird. Cruise: started level at 7 m/s above the roost's centre, 30 s, speed "
        f"averaged over 10-30 s (the speed swaps with altitude over the roost's 20 s vertical spring). Turn: started "
        f"at 10 m/s 250 m from the roost's centre flying straight away (the roost's full pull, {pull:g} m/s^2, "
        f"sideways); 2-6 s of the turn: bank {turn['bank']:.2f} deg, radius {turn['radius']:.2f} m at "
        f"{turn['speed']:.3f} m/s. Same size in quick and full." + _changed(overrides),
        plot=plot,
    )


ROOST_STARTS = (250.0, 150.0)  # m from the centre, flying straight away at 10 m/s
ROOST_BEARINGS = (0.0, 2.0)  # rad, in the horizontal plane (x, z)


def roost_return(distance: np.ndarray, radius: float, dt: float) -> tuple[float, float]:
    """(time [s] of the first step back inside ``radius``, farthest distance) of one bird's
    horizontal distances from the roost's centre per step (time inf if it never comes back)."""
    inside = np.nonzero(distance < radius)[0]
    return (float(inside[0] * dt) if inside.size else math.inf), float(distance.max())


def check_starling_roost(quick: bool, overrides: tuple[str, ...] = ()) -> CheckResult:
    """The roost: how soon and how far out birds flying away come back, against the NumPy reference."""
    p = ref.PRESET
    steps = round(32.0 / p.dt)  # back by 27.3 s at the latest
    out = []
    table = []
    curves = {}
    for d0, angle in zip(ROOST_STARTS, ROOST_BEARINGS, strict=True):
        # one bird per run: a lone bird has no neighbour (any other bird would be one, at any distance)
        start = [[d0 * math.cos(angle), 0.0, d0 * math.sin(angle)]]
        velocity = [[10.0 * math.cos(angle), 0.0, 10.0 * math.sin(angle)]]
        f = fly_flocksim(start, velocity, steps, overrides)
        r = fly_reference(start, velocity, steps)
        fd = np.hypot(f[0][:, 0, 0], f[0][:, 0, 2])
        rd = np.hypot(r[0][:, 0, 0], r[0][:, 0, 2])
        curves[d0] = (fd, rd)
        f_time, f_far = roost_return(fd, p.roost_radius, p.dt)
        r_time, r_far = roost_return(rd, p.roost_radius, p.dt)
        out.append(within(f"return time from {d0:g} m [s]", f_time, r_time, 2 * p.dt, "NumPy reference, +-2 steps"))
        out.append(within(f"farthest distance from {d0:g} m [m]", f_far, r_far, 0.05, "NumPy reference"))
        table.append(
            {
                "start [m]": d0,
                "return flocksim [s]": round(f_time, 3),
                "return reference [s]": round(r_time, 3),
                "farthest flocksim [m]": round(f_far, 2),
                "farthest reference [m]": round(r_far, 2),
            }
        )
    t = np.arange(steps + 1) * p.dt

    def plot(ax) -> None:
        for k, (d0, (fd, rd)) in enumerate(curves.items()):
            ax.plot(t, fd, color=f"C{k}", label=f"flocksim, from {d0:g} m")
            ax.plot(t[::60], rd[::60], "s", mfc="none", color=f"C{k}", label="NumPy reference")
        ax.axhline(p.roost_radius, color="0.5", lw=0.8)
        ax.set_xlabel("time [s]")
        ax.set_ylabel("horizontal distance from the roost's centre [m]")
        ax.set_title("Birds flying away from the roost are turned back (radius 100 m)")
        ax.legend(fontsize=8)

    return CheckResult(
        "starling-roost",
        "Roost: return time and farthest distance of birds flying away",
        PAPER,
        out,
        notes=f"{PRESET} (urges off), one bird at a time at 10 m/s flying straight away from the roost's centre, "
        "250 m out (beyond twice the radius: the full pull) and 150 m out (half the pull); 32 s each. "
        "Same size in quick and full." + _changed(overrides),
        plot=plot,
        table=table,
    )


FLOCK = 40


def flock_start(n: int = FLOCK) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A loose flock 150 m out from the roost's centre (inside its pull), 3 m above its altitude,
    headings spread about 17 degrees, speeds 8-12 m/s, banks within +-0.4 rad: every rule acts."""
    rng = np.random.default_rng(2010)
    position = rng.uniform(-6.0, 6.0, (n, 3)) * [1.0, 0.3, 1.0] + [150.0, 3.0, 20.0]
    heading = ref.unit(np.array([1.0, 0.0, 0.3]) + rng.normal(0.0, 0.3, (n, 3)))
    return position, heading * rng.uniform(8.0, 12.0, (n, 1)), rng.uniform(-0.4, 0.4, n)


def place(sim: Simulation, position, velocity, bank) -> None:
    s = sim.state
    s.position[:] = position
    s.velocity[:] = velocity
    s.spin[:] = 0.0
    s.spin[:, 0] = bank


def check_starling_step(quick: bool, overrides: tuple[str, ...] = ()) -> CheckResult:
    """Each step of a 40-bird flock against the NumPy reference, and the blind angle against its control."""
    p = ref.PRESET
    steps = 60 if quick else 600
    every = 10  # steps between the samples of the blind angle's effect
    sim = starling_sim(FLOCK, overrides)
    control = starling_sim(FLOCK, (*overrides, "rules.blind_angle=0"))
    no_blind = replace(p, blind_angle_deg=0.0)
    place(sim, *flock_start())
    s = sim.state
    worst = {"position [m]": [], "velocity [m/s]": [], "bank [rad]": []}
    changed_f = changed_r = 0
    effect_gap = 0.0
    effect_size = []
    for t in range(steps):
        before = (s.position.copy(), s.velocity.copy(), s.spin[:, 0].copy())
        if t % every == 0:
            place(control, *before)
            control.step(1)
        sim.step(1)
        after = ref.step(*before, p)
        for key, f, r in zip(worst, (s.position, s.velocity, s.spin[:, 0]), after, strict=True):
            worst[key].append(float(np.abs(f - r).max()))
        if t % every == 0:
            effect_f = np.linalg.norm(s.velocity - control.state.velocity, axis=1)
            effect_r = np.linalg.norm(after[1] - ref.step(*before, no_blind)[1], axis=1)
            changed_f += int((effect_f > AGREE).sum())
            changed_r += int((effect_r > AGREE).sum())
            effect_gap = max(effect_gap, float(np.abs(effect_f - effect_r).max()))
            effect_size.append(float(effect_r.mean()))
    samples = len(effect_size)
    what = "<= 1e-9 (the same model, rounding only)"
    out = [
        Measurement(f"largest difference per step from the NumPy reference, {k}", max(v), 0.0, AGREE, what)
        for k, v in worst.items()
    ]
    out += [
        Measurement(
            "bird-steps whose step the blind angle changes (flocksim)",
            changed_f,
            changed_r,
            changed_r,
            f"{changed_r} (the NumPy reference, the same states)",
        ),
        Measurement(
            "largest difference of the blind angle's effect on a step's velocity [m/s]", effect_gap, 0.0, AGREE, what
        ),
    ]

    def plot(ax) -> None:
        for key, values in worst.items():
            ax.semilogy(np.arange(1, steps + 1), np.maximum(values, 1e-18), label=key)
        ax.axhline(AGREE, color="0.5", lw=0.8)
        ax.set_xlabel("step")
        ax.set_ylabel("largest |flocksim - reference| over the flock")
        ax.set_title(f"Starlings, {FLOCK} birds: each step against the NumPy reference")
        ax.legend(fontsize=8)

    return CheckResult(
        "starling-step",
        "Starlings: each step of a small flock against the NumPy reference; the blind angle against its control",
        PAPER,
        out,
        notes=f"{PRESET} (urges off), {FLOCK} birds 150 m from the roost's centre (flock_start: 12 x 3.6 x 12 m, "
        f"speeds 8-12 m/s, banks +-0.4 rad); {steps} steps of flocksim, each repeated by the reference from flocksim's "
        f"state. Blind angle: every {every}th step, {samples} samples, the step also taken with rules.blind_angle=0 "
        f"(the control) by both; the blind angle changed {changed_r} of {samples * FLOCK} bird-steps in the "
        f"reference, by {np.mean(effect_size):.3g} m/s on average." + _changed(overrides),
        plot=plot,
    )


def _changed(overrides: tuple[str, ...]) -> str:
    return f" Model changed for this run: {', '.join(overrides)}." if overrides else ""
