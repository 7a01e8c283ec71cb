"""How a reynolds bird flies: speed control toward a cruise speed, point-mass or banked flight
(Hildenbrandt, Carere & Hemelrijk 2010), and the attraction to a roosting area."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from flocksim.params.fields import Strict, Vector, choice, quantity


class Cruise(Strict):
    """Speed control: a speed below the cruise speed relaxes toward it.

    Per step of world.dt: speed += (cruise - speed) x min(restore x dt, 1) when speed < cruise =
    ``speed`` x agents.max_speed; the direction is kept. Reynolds' steering forces slow a bird
    down whenever a rule's desired direction differs from its heading (the force toward
    max_speed x d has a component against v), and inertial-spin alignment has no force that
    speeds it up again: without this control such flocks sink to min_speed. Birds hold a cruise
    speed by a force along their heading (Hildenbrandt et al. 2010).
    """

    speed: float = quantity(1.0, "x agents.max_speed", "Cruise speed", gt=0.0, le=1.0)
    restore: float = quantity(
        0.0, "1/s", "Rate at which a speed below the cruise speed relaxes to it (0 = off)", ge=0.0, le=1e6
    )


class Flight(Strict):
    """How a velocity follows the steering: a point mass, or banked flight (Hildenbrandt et al. 2010).

    ``point``: v += a dt (every rule force acts at once in every direction).
    ``banked``: a bird flies on wings. Per step, with unit heading h, side s = h x up (up = +y;
    2D: h turned 90 degrees) and u = s x h: the steering's lateral part a.s sets a target bank
    angle atan(a.s / gravity) (within +-max_bank), which the bank follows at ``roll_in`` per
    second while it grows and ``roll_out`` while it shrinks; lift g (|v|/cruise_speed)^2 acts
    along the banked body axis u cos(bank) + s sin(bank) against gravity -g up; thrust minus
    drag (cruise_speed - |v|)/speed_time acts along h, beside the steering's own forward and
    vertical parts (a.h) h + (a.u) u. In 2D (seen from above) only the lateral part of the lift
    acts: g (|v|/cruise_speed)^2 tan(bank) along s, so a bank holds a level turn. The bank angle
    [rad] is kept in ``state.spin[:, 0]``. Needs basic alignment (the turn comes from the bank).

    Speed that breathes (banked only): with ``speed_band`` b > 0 the thrust minus drag is
    (cruise_speed - |v|)/speed_time x ((cruise_speed - |v|)/b)^2, weak within about b of cruise and
    strong beyond (marginal speed control, Cavagna et al. 2022); each bird also has its own urges,
    an Ornstein-Uhlenbeck acceleration along h (standard deviation ``speed_wander``) and one added
    to the lateral part that sets the bank (``steer_wander``), both with correlation time
    ``wander_time``, drawn from the run's generator (kept in ``state.spin[:, 1:3]``). A bird's
    speed then follows its neighbours' through alignment, which matches velocities, speed included.
    """

    mode: Literal["point", "banked"] = choice("point", "Flight: point (point mass) | banked (wings, lift, roll).")
    # lower bounds keep (|v| / cruise_speed)^2 and (cruise_speed - |v|) / speed_time finite at any allowed speed
    cruise_speed: float = quantity(10.0, "units/s", "Speed at which lift equals gravity", ge=1e-3, le=1e9)
    speed_time: float = quantity(1.0, "s", "Relaxation time of the speed toward cruise_speed", ge=1e-3, le=1e6)
    gravity: float = quantity(9.81, "units/s^2", "Gravity g (and the lift scale in 2D)", gt=0.0, le=1e9)
    max_bank: float = quantity(60.0, "deg", "Largest bank angle", gt=0.0, le=85.0)
    roll_in: float = quantity(10.0, "1/s", "Rate at which the bank grows toward its target", gt=0.0, le=1e6)
    roll_out: float = quantity(3.0, "1/s", "Rate at which the bank shrinks toward its target", gt=0.0, le=1e6)
    speed_band: float = quantity(
        0.0, "units/s", "Width of the band around cruise_speed where speed is held only weakly (0 = linear)",
        ge=0.0, le=1e9,
    )  # fmt: skip
    speed_wander: float = quantity(
        0.0, "units/s^2", "Standard deviation of each bird's own urge to speed up or slow down (0 = none)",
        ge=0.0, le=1e6,
    )  # fmt: skip
    steer_wander: float = quantity(
        0.0, "units/s^2", "Standard deviation of each bird's own urge to turn (0 = none)", ge=0.0, le=1e6
    )
    wander_time: float = quantity(1.0, "s", "Correlation time of the urges", ge=1e-3, le=1e6)


MAX_ROOST_RADIUS = 1e9
"""Largest roost radius [units], given or sized to the flock (rules.roost.flock_lengths)."""


class Roost(Strict):
    """Preferential movement above a roosting area instead of walls (Hildenbrandt et al. 2010).

    Outside ``radius`` (horizontal distance d from ``center``: x-z in 3D, x-y in 2D) a bird is
    pulled horizontally toward the centre with acceleration weight x pull x min((d - radius) /
    radius, 1); in 3D it is also pulled toward the centre's altitude (y) with weight x
    clip(altitude_stiffness x (center_y - y), +-max_climb). Weight 0 switches it off.

    ``flock_lengths`` > 0 sizes the roost to the flock: the radius becomes that many lengths of the
    flock agents.n birds make at agents.init.spacing (the ``flock`` start,
    flocksim.params.common.flock_length), set whenever the parameters are checked, so it follows
    agents.n; 0 keeps ``radius`` as given.
    """

    weight: float = quantity(0.0, "", "Weight of the roost attraction (0 = off)", ge=0.0, le=1e6)
    center: Vector = Field(
        [0.0, 0.0, 0.0],
        description="Centre of the roosting area; its y is the preferred altitude in 3D (extra components "
        "ignored in 2D) [units]; allowed: 2 or 3 finite numbers.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "units"},
    )
    radius: float = quantity(100.0, "units", "Horizontal radius of the area with no pull", gt=0.0, le=MAX_ROOST_RADIUS)
    flock_lengths: float = quantity(
        0.0, "flock lengths",
        "When > 0, radius is set to this many lengths of the flock of agents.n birds at agents.init.spacing "
        "(the roost grows with the flock; 0 = radius as given)",
        ge=0.0, le=1e6,
    )  # fmt: skip
    pull: float = quantity(2.0, "units/s^2", "Horizontal pull at radius x 2 and beyond", ge=0.0, le=1e9)
    altitude_stiffness: float = quantity(
        0.5, "1/s^2", "Vertical pull per unit of altitude away from center's y (3D)", ge=0.0, le=1e9
    )
    max_climb: float = quantity(2.0, "units/s^2", "Largest vertical pull (3D)", ge=0.0, le=1e9)
