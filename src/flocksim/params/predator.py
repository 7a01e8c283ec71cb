"""Predators and spontaneous turns of the reynolds model: what a flock is disturbed by."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from flocksim.params.fields import Strict, choice, quantity


class PanicMultipliers(Strict):
    """Rule-weight multipliers of birds inside a predator's detection distance.

    The default (separation 1.5, alignment 1.5, cohesion 0.5) spreads a chased
    flock; separation 0.6, alignment 1.5, cohesion 2.0 makes it cluster.
    """

    separation: float = quantity(1.5, "", "Multiplier of w_sep near a predator", ge=0.0, le=1e6)
    alignment: float = quantity(1.5, "", "Multiplier of w_ali (and so of J) near a predator", ge=0.0, le=1e6)
    cohesion: float = quantity(0.5, "", "Multiplier of w_coh near a predator", ge=0.0, le=1e6)


class Predator(Strict):
    """Predators that chase the flock (docs/starlings.md).

    Each predator pursues its target's predicted position p + v * lead
    (lead = min(distance / predator speed, lead_max)) at a constant speed,
    turning at most ``max_turn_deg`` per second. A target within
    ``catch_radius`` after a step is caught: removed (alive = False) after the
    step, and the predator then targets the nearest bird. After
    ``retarget_after`` seconds without a catch it switches to the nearest bird.
    Nothing is caught while ``min_remaining`` birds or fewer remain. Birds
    closer than ``detection`` to a predator flee (harder when closer) and have
    their rule weights multiplied by ``panic``.
    """

    enabled: bool = Field(False, description="Put predators in the world; allowed: true | false.")
    count: int = quantity(1, "predators", "Number of predators", ge=1, le=1000)
    speed: float = quantity(1.3, "x agents.max_speed", "Predator speed", gt=0.0, le=100.0)
    max_turn_deg: float = quantity(60.0, "deg/s", "Largest turn rate of a predator", gt=0.0, le=1e6)
    lead_max: float = quantity(1.0, "s", "Longest look-ahead when predicting the target's position", ge=0.0, le=1e6)
    catch_radius: float = quantity(10.0, "units", "A target this close (or closer) is caught", ge=0.0, le=1e9)
    retarget_after: float = quantity(
        30.0, "s", "Switch to the nearest bird after this long without a catch", gt=0.0, le=1e9
    )
    min_remaining: int = quantity(20, "agents", "No catch while this many birds or fewer remain", ge=0, le=50_000_000)
    detection: float = quantity(100.0, "units", "Birds closer than this react to the predator", ge=0.0, le=1e9)
    flee_weight: float = quantity(
        1.0,
        "",
        "Weight of fleeing, a steering rule like the others; the force also scales with 1 - distance/detection",
        ge=0.0,
        le=1e6,
    )
    flee_speed: float = quantity(
        1.3,
        "x agents.max_speed",
        "Speed limit of a fleeing bird at the predator; it falls linearly to 1 at the detection distance",
        ge=1.0,
        le=100.0,
    )
    panic: PanicMultipliers = Field(
        default_factory=PanicMultipliers, description="Rule-weight multipliers inside the detection distance."
    )


class SpontaneousTurning(Strict):
    """Spontaneous collective turns (after Attanasi et al. 2014, 2015; docs/starlings.md).

    At random times (exponential intervals with mean ``mean_interval``; a turn
    due while the previous wave still runs waits for its end) the bird farthest
    out on a random lateral side of the flock (relative to its mean heading;
    3D: a horizontal side, up = +y) and its nearest ``initiators - 1`` birds
    start turning inward (with ``side = "roost"`` and an active roost, the side
    from which the inward turn heads the flock toward the roost's centre). With
    ``propagation = "imposed"`` every other bird starts the same turn after a
    delay = its distance from that edge bird /
    (signal_speed x max_speed); every turning bird turns about the same axis at
    ``turn_rate_deg`` until it has turned ``angle_deg``; the steering rules keep
    acting. Those start times are imposed, not emergent. With ``propagation =
    "emergent"`` only the initiators are turned: the others turn if and when
    their rules make them (with underdamped inertial-spin alignment the turn
    crosses the flock as a wave, as Attanasi et al. 2014 observed). With
    ``propagation = "copied"`` a bird starts the turn when one of its
    ``copy_from`` nearest living neighbours within ``reach`` started it at
    least ``latency`` earlier and is still turning (as escape manoeuvres are
    copied): the signal speed emerges from the density and the latency.
    ``turn_by = "bank"`` turns a bird through its own urge to turn (banked
    flight's lateral acceleration, ``turn_rate_deg`` x the cruise speed)
    instead of rotating its velocity about the wave's axis.
    """

    enabled: bool = Field(False, description="Start spontaneous turns; allowed: true | false.")
    mean_interval: float = quantity(6.0, "s", "Mean time between the starts of two turns", gt=0.0, le=1e9)
    angle_deg: float = quantity(90.0, "deg", "Total angle every bird turns", gt=0.0, le=360.0)
    turn_rate_deg: float = quantity(90.0, "deg/s", "Turn rate of a turning bird", gt=0.0, le=1e6)
    initiators: int = quantity(10, "agents", "Birds on the lateral edge that start a turn", ge=1, le=1_000_000)
    signal_speed: float = quantity(
        2.5, "x agents.max_speed", "Speed at which the start of the turn spreads from the edge", gt=0.0, le=1e6
    )
    side: Literal["random", "roost"] = choice(
        "random",
        "Which lateral side a turn starts on: random (either side, even odds) | roost (the side that turns the "
        "flock toward the centre of an active rules.roost, horizontally; random without one).",
    )
    propagation: Literal["imposed", "emergent", "copied"] = choice(
        "imposed",
        "How the turn reaches the other birds: imposed (start delayed by distance / signal speed) | emergent "
        "(only the initiators are turned; the rest follow through their rules) | copied (a bird starts when one "
        "of its copy_from nearest neighbours within reach started at least latency earlier and still turns).",
    )
    copy_from: int = quantity(7, "birds", "Nearest neighbours a bird watches (propagation = copied)", ge=1, le=64)
    reach: float = quantity(
        5.0, "units", "Neighbours farther than this are not watched (propagation = copied)", gt=0.0, le=1e9
    )
    latency: float = quantity(
        0.05, "s", "Delay between a neighbour's start and the copy (propagation = copied)", ge=0.0, le=1e6
    )
    mutual: bool = Field(
        False,
        description="propagation = copied: a bird also copies a turning bird that has it among its copy_from "
        "nearest within reach (a lobe of the flock whose birds watch only each other no longer stops the turn); "
        "allowed: true | false.",
    )
    turn_by: Literal["axis", "bank"] = choice(
        "axis",
        "How a turning bird turns: axis (its velocity rotated about the wave's axis at turn_rate_deg) | bank "
        "(its urge to turn, the lateral acceleration that sets its bank, set to turn_rate_deg x the cruise "
        "speed toward the inward side; needs rules.flight.mode = banked).",
    )
