"""The reynolds kernels' coefficients: every parameter the per-agent kernels read, flattened into
one named tuple of plain numbers (radii squared, angles in radians, rates per second)."""

from __future__ import annotations

import math
from typing import NamedTuple

from flocksim.kernels.separation import SEPARATION_MINION, SEPARATION_RAW
from flocksim.kernels.steering import STEERING_CLAMPED_SUM, STEERING_REYNOLDS
from flocksim.params import ReynoldsParams

ALIGNMENT_BASIC = 0
ALIGNMENT_INERTIAL_SPIN = 1


class ReynoldsCoefficients(NamedTuple):
    """Everything the kernel needs, flat (radii squared)."""

    steering: int
    topological: bool
    max_speed: float
    min_speed: float
    max_force: float
    steer_gain: float  # 1 / rules.response_time [1/s]
    w_sep: float
    sep_radius2: float
    sep_form: int
    sep_eps: float
    sep_min_distance: float
    w_ali: float
    ali_radius2: float
    w_coh: float
    coh_radius2: float
    coh_centrality: float  # power p of the centrality C (0 = off)
    blind: bool  # rules.blind_angle > 0
    blind_cos: float  # cos(rules.blind_angle / 2)
    w_seek: float
    target_x: float
    target_y: float
    target_z: float
    arrival_radius: float
    stop_radius: float
    attack_range2: float
    attack_weight: float
    w_bounds: float
    margin: float
    turn_strength: float
    alignment_mode: int
    spin_coupling: float  # J / w_ali [per frame]
    spin_decay: float  # eta / chi [per frame]
    chi: float
    max_turn: float  # [rad/frame]
    cruise_speed: float  # [units/s]
    speed_restore: float  # [1/s]
    detection: float
    flee_weight: float
    flee_speed: float  # x max_speed
    panic_sep: float
    panic_ali: float
    panic_coh: float
    w_avoid: float  # weight x strength [units/s^2]
    avoid_cap: float
    avoid_look_ahead: float  # [s]
    planar: bool
    banked: bool  # rules.flight.mode == "banked"
    flight_cruise: float  # [units/s]
    flight_speed_time: float  # [s]
    flight_gravity: float  # [units/s^2]
    flight_max_bank: float  # [rad]
    flight_roll_in: float  # [1/s]
    flight_roll_out: float  # [1/s]
    flight_speed_band: float  # [units/s], 0 = linear speed control
    flight_wander: bool  # either urge is on
    flight_speed_wander: float  # [units/s^2]
    flight_steer_wander: float  # [units/s^2]
    flight_wander_time: float  # [s]
    w_roost: float
    roost_x: float
    roost_y: float
    roost_z: float
    roost_radius: float
    roost_pull: float  # [units/s^2]
    roost_stiffness: float  # [1/s^2]
    roost_max_climb: float  # [units/s^2]


def coefficients(p: ReynoldsParams) -> ReynoldsCoefficients:
    """The kernels' flat coefficients of a parameter set."""
    r = p.rules
    target = list(r.seek.target) + [0.0] * (3 - len(r.seek.target))
    if p.world.dim == 2:
        target[2] = 0.0
    roost = list(r.roost.center) + [0.0] * (3 - len(r.roost.center))
    flight = r.flight
    return ReynoldsCoefficients(
        steering=STEERING_REYNOLDS if r.steering == "reynolds" else STEERING_CLAMPED_SUM,
        topological=p.neighbors.mode == "topological",
        max_speed=p.agents.max_speed,
        min_speed=p.agents.min_speed,
        max_force=p.agents.max_force,
        steer_gain=1.0 / r.response_time,
        w_sep=r.separation.weight,
        sep_radius2=r.separation.radius**2,
        sep_form=SEPARATION_RAW if r.separation.form == "raw" else SEPARATION_MINION,
        sep_eps=r.separation.eps,
        sep_min_distance=r.separation.min_distance,
        w_ali=r.alignment.weight,
        ali_radius2=r.alignment.radius**2,
        w_coh=r.cohesion.weight,
        coh_radius2=r.cohesion.radius**2,
        coh_centrality=r.cohesion.centrality,
        blind=r.blind_angle > 0.0,
        blind_cos=math.cos(math.radians(r.blind_angle) / 2.0),
        w_seek=r.seek.weight,
        target_x=target[0],
        target_y=target[1],
        target_z=target[2],
        arrival_radius=r.seek.arrival_radius,
        stop_radius=r.seek.stop_radius,
        attack_range2=r.seek.attack_range**2,
        attack_weight=r.seek.attack_weight,
        w_bounds=r.bounds.weight,
        margin=p.world.bounds.margin,
        turn_strength=p.world.bounds.turn_strength,
        alignment_mode=ALIGNMENT_INERTIAL_SPIN if r.alignment.mode == "inertial-spin" else ALIGNMENT_BASIC,
        spin_coupling=r.alignment.coupling,
        spin_decay=r.alignment.eta / r.alignment.chi,
        chi=r.alignment.chi,
        max_turn=r.alignment.max_turn,
        cruise_speed=r.cruise.speed * p.agents.max_speed,
        speed_restore=r.cruise.restore,
        detection=p.predator.detection,
        flee_weight=p.predator.flee_weight,
        flee_speed=p.predator.flee_speed,
        panic_sep=p.predator.panic.separation,
        panic_ali=p.predator.panic.alignment,
        panic_coh=p.predator.panic.cohesion,
        w_avoid=r.avoid.weight * r.avoid.strength if p.obstacles.count() else 0.0,
        avoid_cap=r.avoid.cap,
        avoid_look_ahead=r.avoid.look_ahead,
        planar=p.agents.planar,
        banked=flight.mode == "banked",
        flight_cruise=flight.cruise_speed,
        flight_speed_time=flight.speed_time,
        flight_gravity=flight.gravity,
        flight_max_bank=math.radians(flight.max_bank),
        flight_roll_in=flight.roll_in,
        flight_roll_out=flight.roll_out,
        flight_speed_band=flight.speed_band,
        flight_wander=flight.mode == "banked" and (flight.speed_wander > 0.0 or flight.steer_wander > 0.0),
        flight_speed_wander=flight.speed_wander,
        flight_steer_wander=flight.steer_wander,
        flight_wander_time=flight.wander_time,
        w_roost=r.roost.weight,
        roost_x=roost[0],
        roost_y=roost[1],
        roost_z=roost[2],
        roost_radius=r.roost.radius,
        roost_pull=r.roost.pull,
        roost_stiffness=r.roost.altitude_stiffness,
        roost_max_climb=r.roost.max_climb,
    )


class PhaseOneRules(NamedTuple):
    """Which rules of phase one (the steering) may be on: the kernels a run compiles are specialised
    on them (docs/design.md §7.4). False: the rule is off for certain, and its code is left out of
    the kernel; True: the kernel checks it against the coefficients as it runs. So any set that is
    True wherever :func:`phase_one_rules` is True gives the same bits; all True is the general
    kernel."""

    spin: bool  # inertial-spin alignment
    blind: bool  # a blind angle
    centrality: bool  # centrality-weighted cohesion
    seek: bool  # a seek weight or an attack range
    predators: bool  # predators in the world
    walls: bool  # soft walls (rules.bounds.weight)
    roost: bool
    avoid: bool  # obstacles
    reynolds: bool  # steering = "reynolds"
    clamped: bool  # steering = "clamped-sum"


class PhaseTwoRules(NamedTuple):
    """Which parts of phase two (the integration) may be on (as :class:`PhaseOneRules`)."""

    banked: bool  # banked flight
    spinning: bool  # inertial spin
    turning: bool  # spontaneous turns (model.turn)
    restoring: bool  # speed restored toward the cruise speed


def phase_one_rules(c: ReynoldsCoefficients, predators: bool) -> PhaseOneRules:
    """The phase one rules on in coefficients ``c``; ``predators``: whether predators may be present."""
    reynolds = c.steering == STEERING_REYNOLDS
    return PhaseOneRules(
        spin=c.alignment_mode == ALIGNMENT_INERTIAL_SPIN,
        blind=bool(c.blind),
        centrality=c.coh_centrality > 0.0,
        seek=c.w_seek != 0.0 or c.attack_range2 > 0.0,
        predators=bool(predators),
        walls=c.w_bounds != 0.0,
        roost=c.w_roost != 0.0,
        avoid=c.w_avoid != 0.0,
        reynolds=reynolds,
        clamped=not reynolds,
    )


def phase_two_rules(c: ReynoldsCoefficients, turning: bool) -> PhaseTwoRules:
    """The phase two parts on in coefficients ``c``; ``turning``: whether spontaneous turns may come."""
    return PhaseTwoRules(
        banked=bool(c.banked),
        spinning=c.alignment_mode == ALIGNMENT_INERTIAL_SPIN,
        turning=bool(turning),
        restoring=c.speed_restore > 0.0,
    )


def rules_name(rules: NamedTuple) -> str:
    """The rules that are on, joined by '+' ('none' for none): the specialised kernels' names."""
    return "+".join(name for name, on in zip(rules._fields, rules, strict=True) if on) or "none"
