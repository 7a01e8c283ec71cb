"""Adding and removing agents while a simulation runs (docs/design.md §1.5).

Rows are never reordered or reused: a new agent is a new row at the end with the next unused
id, a removed agent keeps its row with ``alive = False`` (the mechanism predator catches use),
so ids stay stable and every per-agent array keeps one row per id ever created.
:class:`flocksim.Simulation` queues both while a step is in flight and applies them once the
step's components are done; between steps they take effect at once.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from flocksim.state import FlockState

DEFAULTS = {"alive": True}


def _per_agent(name: str, value, count: int, dtype) -> np.ndarray:
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 0:
        arr = np.full(count, arr, dtype=dtype)
    if arr.shape != (count,):
        raise ValueError(f"add_agents: {name} must be one value or {count} values, got shape {arr.shape}")
    return arr


def append_agents(
    state: FlockState,
    position: np.ndarray,
    velocity: np.ndarray | None = None,
    mass: float | np.ndarray = 1.0,
    radius: float | np.ndarray = 0.5,
    kind: int | np.ndarray = 0,
) -> np.ndarray:
    """Append alive agents to ``state`` in place; returns their new ids.

    ``position`` (M, dim) [units]; ``velocity`` (M, dim) [units/s], zeros when None; mass,
    radius and kind: one value or M. Every other per-agent field gets zeros (False).
    Raises ValueError (naming the argument) for wrong shapes or non-finite, non-positive mass,
    negative radius.
    """
    dim = state.dim
    pos = np.asarray(position, dtype=np.float64)
    if pos.ndim == 1 and pos.shape[0] == dim:
        pos = pos[None, :]
    if pos.ndim != 2 or pos.shape[1] != dim:
        raise ValueError(f"add_agents: positions must have shape (M, {dim}), got {pos.shape}")
    m = pos.shape[0]
    vel = np.zeros((m, dim)) if velocity is None else np.asarray(velocity, dtype=np.float64).reshape(-1, dim)
    if vel.shape != (m, dim):
        raise ValueError(f"add_agents: velocities must have shape {(m, dim)}, got {vel.shape}")
    for name, arr in (("positions", pos), ("velocities", vel)):
        if not np.isfinite(arr).all():
            raise ValueError(f"add_agents: {name} must be finite")
    masses = _per_agent("mass", mass, m, np.float64)
    radii = _per_agent("radius", radius, m, np.float64)
    if not (np.isfinite(masses).all() and (masses > 0).all()):
        raise ValueError("add_agents: mass must be > 0 and finite")
    if not (np.isfinite(radii).all() and (radii >= 0).all()):
        raise ValueError("add_agents: radius must be >= 0 and finite")
    kinds = _per_agent("kind", kind, m, np.int32)
    ids = np.arange(state.next_id, state.next_id + m, dtype=np.int64)
    given = {"position": pos, "velocity": vel, "mass": masses, "radius": radii, "kind": kinds, "ids": ids}
    n = state.n
    for f in fields(state):
        old = getattr(state, f.name)
        if not isinstance(old, np.ndarray) or old.ndim == 0 or old.shape[0] != n:
            continue
        if f.name in given:
            new = given[f.name].astype(old.dtype, copy=False)
        else:
            new = np.full((m, *old.shape[1:]), DEFAULTS.get(f.name, 0), dtype=old.dtype)
        setattr(state, f.name, np.ascontiguousarray(np.concatenate([old, new])))
    state.next_id += m
    state.check()
    return ids


def rows_of(state: FlockState, ids, what: str = "remove_agents") -> np.ndarray:
    """Rows of the alive agents with these ids; ValueError naming the unknown or removed ones."""
    ids = np.atleast_1d(np.asarray(ids))
    if ids.dtype.kind not in "iu":
        raise ValueError(f"{what}: ids must be integers, got {ids.dtype}")
    ids = ids.astype(np.int64)
    order = np.argsort(state.ids, kind="stable")
    pos = np.searchsorted(state.ids[order], ids)
    pos = np.minimum(pos, max(state.n - 1, 0))
    found = (state.n > 0) & (state.ids[order][pos] == ids) if state.n else np.zeros(len(ids), dtype=bool)
    if not np.all(found):
        bad = ids[~found][:10].tolist()
        raise ValueError(f"{what}: unknown agent id(s) {bad}; allowed: ids of agents in the simulation")
    rows = order[pos]
    dead = ~state.alive[rows]
    if dead.any():
        raise ValueError(f"{what}: agent id(s) {ids[dead][:10].tolist()} were already removed")
    return rows
