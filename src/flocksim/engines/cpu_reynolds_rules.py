"""The reynolds model's per-agent kernels specialised on the rules a run switches on.

:func:`flocksim.models.reynolds.reynolds_acceleration` and :func:`~flocksim.models.reynolds.integrate_agent`
take, besides the coefficients, constants that say which rules may be on
(:class:`~flocksim.models.reynolds_coefficients.PhaseOneRules`, :class:`~.PhaseTwoRules`). Here a serial
kernel is made per combination, a closure that passes its combination's constants; inlined into it,
numba's dead-branch pruning removes the branches of the rules that are off before type inference,
so they are neither typed, lowered nor compiled (nor are the functions only they call). The
combination is chosen in Python from the coefficients and the inputs at every step
(:func:`rules_of`), and each kernel is made and compiled the first time a run uses it.

Caching: numba files a function's cached code under its qualified name and keys an entry on its
bytecode and the values of its closure. Each combination's serial kernel and parallel loop get a
name of their own (``_accelerate_agents[blind+seek+...]``), so that every combination has its own
cache files, found again by a later process; the closure holds plain booleans, which hash the same
in every process. The parallel loop is a copy of a template function whose global name
``_SERIAL`` is bound to its combination's serial kernel (a closure over a kernel would be keyed on
that kernel's per-process identity, and never found again).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import numba

from flocksim.kernels.blocks import block_bounds, block_count
from flocksim.kernels.compile import serial_kernel
from flocksim.models.reynolds import integrate_agent, reynolds_acceleration
from flocksim.models.reynolds_coefficients import (
    PhaseOneRules,
    PhaseTwoRules,
    ReynoldsCoefficients,
    phase_one_rules,
    phase_two_rules,
    rules_name,
)

_SERIAL: Callable = None  # type: ignore[assignment]
"""Bound, in each copy of a parallel loop below, to its combination's serial kernel."""


def _accelerate_agents_for(spin, blind, centrality, seek, predators, walls, roost, avoid, reynolds, clamped):
    def _accelerate_agents(i0, i1, position, velocity, alive, start, index, dim, space, c, inputs, out, aux):
        """:func:`flocksim.engines.cpu_reynolds.reynolds_accelerations` for agents i0..i1, with
        this combination's rules."""
        for i in range(i0, i1):
            if alive[i]:
                ax, ay, az = reynolds_acceleration(i, position, velocity, start, index, dim, space, c, inputs, aux,
                                                   spin, blind, centrality, seek, predators, walls, roost, avoid,
                                                   reynolds, clamped)  # fmt: skip
                out[i, 0] = ax
                out[i, 1] = ay
                out[i, 2] = az

    return _accelerate_agents


def _accelerations(position, velocity, alive, start, index, dim, space, c, inputs, out, aux):
    """Phase one over the neighbour list, as :func:`flocksim.engines.cpu_reynolds.reynolds_accelerations`."""
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _SERIAL(i0, i1, position, velocity, alive, start, index, dim, space, c, inputs, out, aux)


def _integrate_agents_for(banked, spinning, turning, restoring):
    def _integrate_agents(i0, i1, position, velocity, alive, acc, aux, spin, turn, wander, dim, space, dt, c):
        """:func:`flocksim.engines.cpu_reynolds.integrate_all` for agents i0..i1, with this
        combination's parts."""
        for i in range(i0, i1):
            if alive[i]:
                integrate_agent(i, position, velocity, acc[i, 0], acc[i, 1], acc[i, 2], aux, spin, turn, wander, dim,
                                space, dt, c, banked, spinning, turning, restoring)  # fmt: skip

    return _integrate_agents


def _integration(position, velocity, alive, acc, aux, inputs, dim, space, dt, c):
    """Phase two, as :func:`flocksim.engines.cpu_reynolds.integrate_all`."""
    spin = inputs.spin  # a plain array in the loop (see flocksim.models.reynolds)
    turn = inputs.turn
    wander = inputs.wander
    n = position.shape[0]
    blocks = block_count(n)
    for b in numba.prange(blocks):
        i0, i1 = block_bounds(b, blocks, n)
        _SERIAL(i0, i1, position, velocity, alive, acc, aux, spin, turn, wander, dim, space, dt, c)


def named_for(fn: types.FunctionType, rules: tuple, **names) -> types.FunctionType:
    """A copy of ``fn`` named for ``rules`` (its cache files apart from the other combinations'),
    with ``names`` added to its globals."""
    copy = types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__, fn.__defaults__,
                              fn.__closure__)  # fmt: skip
    copy.__qualname__ = f"{fn.__name__}[{rules_name(rules)}]"
    copy.__module__ = fn.__module__
    copy.__doc__ = fn.__doc__
    return copy


@functools.cache
def accelerations_kernel(rules: PhaseOneRules) -> Callable:
    """Phase one over the neighbour list with ``rules`` (compiled on its first call)."""
    serial = serial_kernel(named_for(_accelerate_agents_for(*rules), rules))
    return numba.njit(parallel=True, cache=True)(named_for(_accelerations, rules, _SERIAL=serial))


@functools.cache
def integration_kernel(rules: PhaseTwoRules) -> Callable:
    """Phase two with ``rules`` (compiled on its first call)."""
    serial = serial_kernel(named_for(_integrate_agents_for(*rules), rules))
    return numba.njit(parallel=True, cache=True)(named_for(_integration, rules, _SERIAL=serial))


class RulesOf:
    """The rules of a model's next step (:func:`rules_of`), remembered while the model and its
    coefficients (the same objects) and the predators' and turns' presence stay as they were: a
    few identity checks per step."""

    def __init__(self):
        self._model = self._c = None
        self._enabled = (False, False)  # the parameters' predator.enabled and turning.enabled
        self._present = (False, False)
        self._rules: tuple[PhaseOneRules, PhaseTwoRules] | None = None

    def __call__(self, model, inputs) -> tuple[PhaseOneRules, PhaseTwoRules]:
        c = model.coefficients
        present = (len(inputs.predators) > 0, len(inputs.turn) > 0)
        if model is not self._model or c is not self._c or present != self._present or self._rules is None:
            p = model.params
            self._model, self._c, self._present = model, c, present
            self._enabled = (p.predator.enabled, p.turning.enabled)
            self._rules = rules_of(c, self._enabled[0] or present[0], self._enabled[1] or present[1])
        return self._rules


def rules_of(c: ReynoldsCoefficients, predators: bool, turning: bool) -> tuple[PhaseOneRules, PhaseTwoRules]:
    """The rules of coefficients ``c``, with predators (``predators``) and spontaneous turns
    (``turning``) possible or not: the kernels to run."""
    return phase_one_rules(c, predators), phase_two_rules(c, turning)
