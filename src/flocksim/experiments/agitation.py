"""Agitation waves (agitation-waves): an escape manoeuvre started by ten birds on the flock's edge
and copied from neighbour to neighbour (``escape``; Hemelrijk, van Zuidam & Hildenbrandt 2015),
timed as a bank angle that departs from the unkicked twin's, with copying switched off as the
control."""

from __future__ import annotations

import math

import numpy as np

from flocksim.experiments.common import Condition, Experiment, RunSpec, make_sim, seconds, steps_of, twin
from flocksim.metrics import polarization
from flocksim.metrics.starlings import mean_heading
from flocksim.metrics.wings import side_view, visible_wing

PRESET = "starlings-3d"
BASE = ("escape.enabled=true", "agents.init.kind=flock", "agents.init.spacing=1.0")
"""The birds start as a formed flock 1 m apart, the spacing its results file was made with (the schema's
default; starlings-3d's own spacing, 1.1 m, came later)."""
INITIATORS = 10
"""Birds on the flock's edge that start the manoeuvre (those nearest the edge bird)."""
BANK_DEPARTURE_DEG = 20.0
"""A wave has reached a bird when its bank angle differs from its twin's by this much."""
VIEWS_DEG = {"below": 90.0, "side30": 30.0}
"""Observers on the ground whose view of the band is measured: straight below the flock, and beside
it looking up at 30 degrees across the flight direction (:func:`flocksim.metrics.wings.side_view`)."""
BAND_MIN_SHARE = 0.01
"""Steps whose band holds fewer of the main flock's birds than this share are left out of the wing ratios."""


def _edge_start(sim) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(initiators, their first sides, the edge bird's position, which living birds are in the main
    flock): in the largest flock (:func:`flocksim.metrics.splits.label_flocks`; a group that has
    split off cannot pass a wave on), the bird farthest from its centroid along the horizontal side
    of the mean heading, and its nearest INITIATORS - 1 there; each zigs first toward the centroid
    (away from an attacker outside)."""
    from flocksim.components.escape import side_vectors
    from flocksim.metrics.splits import label_flocks

    s = sim.state
    alive = np.flatnonzero(s.alive)
    main = label_flocks(s.position[alive]) == 0
    members = alive[main]
    p = s.position[members]
    h = mean_heading(s.velocity[members])
    side = np.array([-h[2], 0.0, h[0]])
    side = side / max(math.sqrt(side[0] * side[0] + side[2] * side[2]), 1e-300)
    centroid = p.mean(axis=0)
    edge = int(np.argmax(np.sum((p - centroid) * side, axis=1)))
    d = p - p[edge]
    nearest = np.argsort(np.sum(d * d, axis=1), kind="stable")[: min(INITIATORS, len(members))]
    own_side = side_vectors(s.velocity[members[nearest]], 3)
    inward = np.sum(own_side * (centroid - p[nearest]), axis=1)
    return members[nearest], np.where(inward >= 0.0, 1.0, -1.0), p[edge].copy(), main


def measure_agitation(spec: RunSpec, n: int) -> dict[str, float]:
    """Twin runs from one flock after a 10 s warm-up; in one, the edge initiators start the escape
    manoeuvre. A bird's arrival is the first time its bank differs from its twin's by
    BANK_DEPARTURE_DEG; its dwell the time it spends that far off in the 3 s. Fitted against the
    distance r from the edge bird: t = a + r / speed (``r2`` of the line); ``width_m`` = speed x the
    median dwell; ``crossing_s``: when 90 % of the birds have been reached; ``peak_share``: the
    largest share of birds that far off at one time (the band's size). Shares and fits are over the
    main flock's birds (``main_flock_share`` of the living); ``reached_outside``: the share of the
    others (groups split off) reached. ``band_wing_below`` and ``band_wing_side30``: the wing area
    the band's birds show (:func:`flocksim.metrics.wings.visible_wing`, summed over the band's birds
    and the steps whose band holds at least BAND_MIN_SHARE of the main flock) over what the same
    birds show at the same steps in the unkicked twin, seen from each of VIEWS_DEG (above 1: the band
    reads darker than the flock would without the wave)."""
    sim = make_sim(spec, n, BASE)
    sim.step(steps_of(sim, seconds(spec, 10.0, 1.0)))
    kicked = twin(sim)
    escape = next(c for c in kicked.components if c.name == "escape")
    initiators, sides, origin, main = _edge_start(kicked)
    escape.begin(initiators, sides, kicked.time)
    s = sim.state
    alive = np.flatnonzero(s.alive)
    d = s.position[alive] - origin
    r = np.sqrt(np.sum(d * d, axis=1))
    is_initiator = np.isin(alive, initiators)
    arrival = np.full(len(alive), np.inf)
    dwell = np.zeros(len(alive))
    threshold = math.radians(BANK_DEPARTURE_DEG)
    peak = 0.0
    views = {name: side_view(mean_heading(s.velocity[alive[main]]), e) for name, e in VIEWS_DEG.items()}
    wing = {name: np.zeros(2) for name in views}  # seen in the band: kicked, twin
    for t in range(steps_of(sim, seconds(spec, 3.0, 1.0))):
        sim.step()
        kicked.step()
        off = np.abs(kicked.state.spin[alive, 0] - s.spin[alive, 0]) >= threshold
        arrival[off & ~np.isfinite(arrival)] = (t + 1) * sim.dt
        dwell += off * sim.dt
        peak = max(peak, float(off.mean()))
        band = alive[off & main]
        if len(band) >= BAND_MIN_SHARE * main.sum():
            for name, view in views.items():
                wing[name][0] += visible_wing(kicked.state.velocity[band], kicked.state.spin[band, 0], view).sum()
                wing[name][1] += visible_wing(s.velocity[band], s.spin[band, 0], view).sum()
    others = main & ~is_initiator
    reached = np.isfinite(arrival) & others
    out = {
        "main_flock_share": float(main.mean()),
        "reached": float(reached.sum()) / max(int(others.sum()), 1),
        "reached_outside": float((np.isfinite(arrival) & ~main).sum()) / max(int((~main).sum()), 1),
        "started": float(np.sum((escape.start[alive] > -np.inf) & others)) / max(int(others.sum()), 1),
        "peak_share": peak,
        "flock_extent_m": float(r.max()),
        "polarization_end": polarization(kicked.state.velocity[alive]),
        "polarization_twin_end": polarization(s.velocity[alive]),
    }
    for name, (seen, twin_seen) in wing.items():
        out[f"band_wing_{name}"] = float(seen / twin_seen) if twin_seen > 0 else math.nan
    times = np.sort(arrival[others])
    k90 = math.ceil(0.9 * len(times)) - 1
    out["crossing_s"] = float(times[k90]) if len(times) and np.isfinite(times[k90]) else math.nan
    sel = reached & (r > r[is_initiator].max(initial=0.0))
    if sel.sum() >= 10:
        slope, intercept = np.polyfit(r[sel], arrival[sel], 1)  # distances exact, times noisy
        fitted = intercept + slope * r[sel]
        total = float(np.sum((arrival[sel] - arrival[sel].mean()) ** 2))
        out["speed"] = 1.0 / float(slope)
        out["r2"] = 1.0 - float(np.sum((arrival[sel] - fitted) ** 2)) / total if total > 0 else math.nan
        out["width_m"] = out["speed"] * float(np.median(dwell[sel]))
    else:
        out |= {"speed": math.nan, "r2": math.nan, "width_m": math.nan}
    return out


def _condition(label: str, n: int, overrides: tuple[str, ...] = ()) -> Condition:
    return Condition(3, label, (*BASE, *overrides), PRESET, lambda spec: measure_agitation(spec, n))


EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "agitation-waves",
        "starlings-3d with escape manoeuvres (escape.*: a zig-zag of 20 m/s^2 lateral urge, 1 s, copied from "
        "the 7 nearest birds 50 ms after their start), started in 2000 birds (a flock start, 10 s warm-up) by "
        "the 10 birds on one horizontal side's edge of the main flock; twin runs, the other unkicked; a bird is "
        "reached when its bank differs from its twin's by 20 degrees. Arrivals over 3 s fitted against distance "
        "from the edge bird: t = a + r / speed (r2); width_m = speed x the median time a reached bird stays 20 "
        "degrees off; crossing_s: 90 % reached; peak_share: most birds off at one time; started: share that "
        "began a manoeuvre; shares over the main flock (main_flock_share of the birds), reached_outside over "
        "the groups apart; band_wing_below / band_wing_side30: the wing area the band's birds show an observer "
        "straight below / beside the flock looking up at 30 degrees, over what the same birds show in the "
        "unkicked twin (above 1: a darker band). Controls: copying off; fewer neighbours copied; a longer "
        "latency; 1000 birds.",
        (
            _condition("copy 7, 50 ms", 2000),
            _condition("copy 4, 50 ms", 2000, ("escape.copy_from=4",)),
            _condition("copy 2, 50 ms", 2000, ("escape.copy_from=2",)),
            _condition("copy 7, 100 ms", 2000, ("escape.latency=0.1",)),
            _condition("copy 7, 50 ms, 1000 birds", 1000),
            _condition("no copying (control)", 2000, ("escape.copy_from=0",)),
        ),
        lambda spec: measure_agitation(spec, 2000),
        field_values={
            "speed": "faster than the flock (Procaccini et al. 2011); in StarDisplay rising with the neighbours "
            "copied, falling with the latency, not with flock size (Hemelrijk et al. 2015)",
            "crossing_s": "bands cross the flock within about a second (Behav. Ecol. Sociobiol. 2019, "
            "doi:10.1007/s00265-019-2734-4)",
            "width_m": "an approximately fixed width (same source)",
            "band_wing_side30": "dark bands: banking birds show more wing (Hemelrijk et al. 2015)",
        },
    ),
)
