"""Carry-over: what a viewer's simulation keeps when its parameters change (docs/protocol.md).

A ``set`` that keeps the model, the world and the agent count keeps the flock (:func:`same_flock`):
:func:`carry_over` moves positions, velocities, ids, the step count, the components' state and the
random generator into the simulation built from the new parameters. A refill keeps only the
pointer (:func:`carry_pointer`). Used by :mod:`flocksim.viewer.session` and the notebook's live
widget.
"""

from __future__ import annotations

import contextlib

from flocksim.config import AnyParams, to_dict
from flocksim.game import game_of
from flocksim.simulation import Simulation
from flocksim.state import FlockState
from flocksim.viewer.waves import schedule_from_now


def same_flock(old: AnyParams, new: AnyParams) -> bool:
    """A change from ``old`` to ``new`` keeps the flock (positions, velocities, ids) when the
    model, the world (dimension, region, dt) and the agent count are unchanged."""
    return (
        old.model == new.model
        and to_dict(old)["world"] == to_dict(new)["world"]
        and int(old.agents.n) == int(new.agents.n)
    )


def carry_over(old: Simulation, new: Simulation) -> None:
    """Move ``old``'s flock into ``new`` (built from new parameters with the same model, world and
    agent count): positions, velocities, alive flags, ids, spins and the step count are kept;
    mass, radius and kind come from ``new``'s parameters. Components both have (predator,
    turning, targets, pointer) keep their state where it fits the new parameters; the random
    generator continues unless the seed changed."""
    o, n = old.state, new.state
    if o.n != n.n:
        raise ValueError(f"carry_over: {o.n} rows cannot fill a flock of {n.n}")
    new.state = FlockState(
        position=o.position.copy(),
        velocity=o.velocity.copy(),
        alive=o.alive.copy(),
        mass=n.mass,
        radius=n.radius,
        kind=n.kind,
        ids=o.ids.copy(),
        next_id=o.next_id,
        spin=o.spin.copy(),
        turning=o.turning.copy(),
    )
    new.steps = old.steps
    new.invalidate_queries()
    if old.seed == new.seed:
        new.rng.bit_generator.state = old.rng.bit_generator.state
    carry_components(old, new)
    schedule_from_now(old, new)


def carry_components(old: Simulation, new: Simulation) -> None:
    """Load the state of each of ``old``'s components into ``new``'s component of the same name
    where it fits (shapes, dimension); the others start fresh. The pointer follows if the
    dimension allows. A component ``old`` lacks (the predator just switched on) is told that its
    flock was replaced (its ``flock_replaced``, if any: the predator starts outside this flock)."""
    ours = {c.name: c for c in new.components}
    theirs = {c.name for c in old.components}
    for component in new.components:
        hook = getattr(component, "flock_replaced", None)
        if component.name not in theirs and hook is not None:
            hook(new)
    for component in old.components:
        if component.name == "pointer":
            with contextlib.suppress(ValueError):
                new.set_pointer(component.point, component.mode)
            continue
        target = ours.get(component.name)
        if target is None:
            continue
        fresh = target.state_dict()
        try:
            target.load_state_dict(component.state_dict())
        except (ValueError, KeyError, TypeError, IndexError):
            target.load_state_dict(fresh)


def carry_pointer(old: Simulation, new: Simulation) -> None:
    """On a refill only the pointer carries over (the client keeps holding the button), and a
    game's player: after Flappy Boids' restart the target is the player's from the first step
    (the scripted pilot flies none of it, so the game can set a best score)."""
    for component in old.components:
        if component.name == "pointer":
            with contextlib.suppress(ValueError):
                new.set_pointer(component.point, component.mode)
    was, now = game_of(old), game_of(new)
    if was is not None and now is not None and was.pilot == "player":
        now.steer(0.0, 0.0)


__all__ = ["carry_components", "carry_over", "carry_pointer", "same_flock"]
