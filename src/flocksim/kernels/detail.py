"""The level of detail's kernels (params ``detail``; the component is :mod:`flocksim.components.detail`).

:func:`select_refresh` marks the agents that refresh their steering in a step; after phase one
:func:`keep_or_restore` keeps their accelerations and gives every other alive agent the one it
kept (engines/cpu_reynolds.py). Each agent is computed from its own rows only, so results stay
bitwise independent of the thread count.
"""

from __future__ import annotations

import math

import numba


@numba.njit(parallel=True, cache=True)
def select_refresh(position, alive, ids, kept, step, focus, near2, cone, axis, cos_half, far_every, active):
    """active[i] = whether alive agent i refreshes in step ``step`` (see the module docstring);
    ``focus`` and ``axis`` (unit, used when ``cone``) have one number per axis of ``position``;
    ``near2``: the near radius squared; ``cos_half``: cos(fov / 2)."""
    dim = position.shape[1]
    for i in numba.prange(position.shape[0]):
        if not alive[i]:
            active[i] = False
            continue
        due = (not kept[i]) or (step + ids[i]) % far_every == 0
        if not due:
            d2 = 0.0
            along = 0.0
            for a in range(dim):
                d = position[i, a] - focus[a]
                d2 += d * d
                along += d * axis[a]
            due = d2 <= near2 and (not cone or along >= cos_half * math.sqrt(d2))
        active[i] = due


@numba.njit(parallel=True, cache=True)
def keep_or_restore(alive, active, acc, aux, kept_acc, kept_aux, kept):
    """After phase one: an active agent's acc and aux rows are kept (and ``kept`` marked); every other
    alive agent's rows are given back from what it kept."""
    for i in numba.prange(acc.shape[0]):
        if active[i]:
            for a in range(acc.shape[1]):
                kept_acc[i, a] = acc[i, a]
            for a in range(aux.shape[1]):
                kept_aux[i, a] = aux[i, a]
            kept[i] = True
        elif alive[i]:
            for a in range(acc.shape[1]):
                acc[i, a] = kept_acc[i, a]
            for a in range(aux.shape[1]):
                aux[i, a] = kept_aux[i, a]
