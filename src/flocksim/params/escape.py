"""Agitation waves of the reynolds model's banked birds: an escape manoeuvre copied from neighbour
to neighbour (Hemelrijk, van Zuidam & Hildenbrandt 2015, Behav. Ecol. Sociobiol. 69:755)."""

from __future__ import annotations

from pydantic import Field

from flocksim.params.fields import Strict, quantity


class Escape(Strict):
    """An escape manoeuvre that spreads as a wave of agitation (docs/starlings.md, "Agitation waves").

    A bird closer than ``detection`` to a predator starts a zig-zag: its urge to turn
    (``state.spin[:, 2]``, the lateral acceleration that sets its bank) is ``strength`` toward the
    side away from the predator for half a ``period``, then ``strength`` toward the other side,
    and so on for ``duration``. A bird that is not manoeuvring starts the same zig-zag, on the
    side its neighbour started on, when one of its ``copy_from`` nearest neighbours (among those
    within ``reach``) started at least ``latency`` earlier and is still manoeuvring. After a
    manoeuvre a bird starts no other for ``refractory``. Banking shows the observer more of the
    wings: a band of banked birds travelling across the flock is the dark band filmed under
    falcon attacks (Procaccini et al. 2011). Needs banked flight; ``copy_from = 0`` keeps the
    manoeuvre to the birds that see the predator (the control without copying).
    """

    enabled: bool = Field(False, description="Escape manoeuvres copied between neighbours; allowed: true | false.")
    detection: float = quantity(10.0, "units", "A bird this close to a predator starts on its own", ge=0.0, le=1e9)
    copy_from: int = quantity(7, "birds", "Nearest neighbours a bird watches (0 = no copying)", ge=0, le=64)
    reach: float = quantity(5.0, "units", "Neighbours farther than this are not watched", gt=0.0, le=1e9)
    latency: float = quantity(0.05, "s", "Delay between a neighbour's start and the copy", ge=0.0, le=1e6)
    strength: float = quantity(20.0, "units/s^2", "Lateral acceleration asked of the bank", gt=0.0, le=1e6)
    period: float = quantity(1.0, "s", "One zig and one zag", ge=1e-3, le=1e6)
    duration: float = quantity(1.0, "s", "Length of one manoeuvre", ge=1e-3, le=1e6)
    refractory: float = quantity(2.0, "s", "After a manoeuvre, no other for this long", ge=0.0, le=1e9)
