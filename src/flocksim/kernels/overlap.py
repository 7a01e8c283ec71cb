"""Overlap resolution between agents (docs/design.md §4).

Two bodies overlap when their centres are closer than r_i + r_j. The penetration
r_i + r_j - d is shared by mass: agent i moves m_j / (m_i + m_j) of it, away from j, and j
(in its own turn) the rest, so the shares of a pair sum to 1. It is a displacement applied to
the position, not a force: no dt. Coincident centres (d^2 < 1e-8) have no direction and are
skipped for that step, so no NaN can enter the state. Corrections from several agents are
averaged, not summed (summing over-corrects and jitters); obstacles' corrections are averaged
apart and added (:mod:`flocksim.kernels.obstacles`).
"""

from __future__ import annotations

import math

from flocksim.kernels.compile import device
from flocksim.kernels.obstacles import COINCIDENT2


@device
def pair_correction(awx, awy, awz, ri, rj, mi, mj):
    """(x, y, z, hit): agent i's displacement away from j; ``aw`` = p_i - p_j (minimum image).

    (aw / d) (r_i + r_j - d) m_j / (m_i + m_j) when 1e-4 < d < r_i + r_j, else zero and no hit.
    """
    r_min = ri + rj
    d2 = awx * awx + awy * awy + awz * awz
    if d2 >= r_min * r_min or d2 < COINCIDENT2:
        return 0.0, 0.0, 0.0, False
    d = math.sqrt(d2)
    s = (r_min - d) * (mj / (mi + mj))
    return awx / d * s, awy / d * s, awz / d * s, True
