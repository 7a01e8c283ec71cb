"""The ``flock`` start (agents.init.kind = "flock"): a formed flock's thin, gently bent sheet with
the starlings' proportions thickness : width : length = 1 : 2.8 : 5.6 (Ballerini et al. 2008b), birds
``spacing`` apart. Every check is one a reader can redo by hand on the positions."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial import cKDTree

from flocksim import Simulation
from flocksim.config import ConfigError, apply_overrides, validate
from flocksim.initial import flock_positions, flock_semi_axes, initial_state
from flocksim.metrics.hallmarks import flock_proportions
from flocksim.metrics.order import polarization
from flocksim.params import InitialConditions, World
from flocksim.params.common import flock_length
from flocksim.scenarios import load_preset

SPACING = 1.0


def nearest(position: np.ndarray) -> np.ndarray:
    return cKDTree(position).query(position, 2)[0][:, 1]


def sheet(n: int = 2000, dim: int = 3, seed: int = 0, direction=(1.0, 0.0, 0.0)) -> np.ndarray:
    return flock_positions(n, dim, SPACING, list(direction), np.random.default_rng(seed))


def test_count_centre_and_determinism():
    a, b, c = sheet(seed=3), sheet(seed=3), sheet(seed=4)
    assert a.shape == (2000, 3)
    assert np.array_equal(a, b)  # the same seed, the same birds, bit for bit
    assert not np.allclose(a, c)
    assert np.allclose(a.mean(axis=0), 0.0, atol=1e-9)
    assert flock_positions(0, 3, SPACING, [1.0, 0.0, 0.0], np.random.default_rng(0)).shape == (0, 3)
    assert flock_positions(1, 3, SPACING, [1.0, 0.0, 0.0], np.random.default_rng(0)).shape == (1, 3)


@pytest.mark.parametrize("seed", [0, 1])
def test_proportions_are_the_fields(seed):
    """Principal axes within 4 % of 1 : 2.8 : 5.6, thickness vertical, length along the heading."""
    p = sheet(seed=seed)
    v = np.tile([1.0, 0.0, 0.0], (len(p), 1))
    shape = flock_proportions(p, v)
    assert shape["thickness_to_length"] == pytest.approx(1 / 5.6, rel=0.04)
    assert shape["width_to_length"] == pytest.approx(2.8 / 5.6, rel=0.04)
    assert shape["thickness_gravity_cos"] > 0.99
    assert shape["heading_length_cos"] > 0.99
    # the size follows from n and the spacing: 2000 lattice cells of (1 / 0.774)^3 = 2.16 m^3 fill
    # 4310 m^3 = pi/6 x 1 x 2.8 x 5.6 T^3, so T = 8.1 m and the length 5.6 T = 45 m
    assert 41.0 < shape["length"] < 50.0


def test_spacing_median_and_minimum():
    """Median nearest neighbour within 5 % of the spacing; no two birds closer than half of it."""
    for n, spacing in ((2000, 1.0), (5000, 0.7)):
        p = flock_positions(n, 3, spacing, [1.0, 0.0, 0.0], np.random.default_rng(2))
        d = nearest(p)
        assert np.median(d) == pytest.approx(spacing, rel=0.05)
        assert d.min() >= 0.5 * spacing


def test_the_sheet_is_bent_not_flat():
    """The mid-surface is not a plane: fitted as a quadric height y(u, w) (u along the length, w across
    it), its ends rise about half a thickness (FLOCK_BEND) above its middle (a flat layer's would not
    rise: FLOCK_BEND = 0 fails here), and across the width the sheet is straight."""
    p = sheet()
    u, y, w = p.T
    design = np.stack([np.ones_like(u), u, w, u**2, w**2, u * w], axis=1)
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    along = coef[3] * (np.ptp(u) / 2) ** 2  # the fitted surface's rise at the ends of the length
    across = coef[4] * (np.ptp(w) / 2) ** 2
    thickness = flock_proportions(p, np.tile([1.0, 0.0, 0.0], (len(p), 1)))["thickness"]
    assert 0.3 * thickness < along < 0.7 * thickness
    assert abs(across) < 0.05 * thickness


def test_length_follows_the_direction():
    p = sheet(direction=(0.0, 0.0, -2.0))
    v = np.tile([0.0, 0.0, -1.0], (len(p), 1))
    shape = flock_proportions(p, v)
    assert shape["heading_length_cos"] > 0.99
    assert shape["thickness_gravity_cos"] > 0.99


def test_2d_is_an_ellipse_of_the_same_proportions():
    p = flock_positions(2000, 2, SPACING, [0.0, 1.0], np.random.default_rng(0))
    axes = np.sqrt(np.linalg.eigvalsh(np.cov(p.T)))
    assert axes[0] / axes[1] == pytest.approx(0.5, rel=0.04)
    assert abs(np.linalg.eigh(np.cov(p.T))[1][1, 1]) > 0.99  # the long axis along the direction (y)
    d = nearest(p)
    assert np.median(d) == pytest.approx(SPACING, rel=0.05)
    assert d.min() >= 0.5 * SPACING


def test_headings_spread_like_aligned():
    """Headings around the direction with spread_deg as 'aligned' draws them: the mean tilt of a
    half-normal of sigma 10 degrees is 10 sqrt(2 / pi) = 8.0 degrees."""
    world = World(dim=3, bounds={"kind": "open", "size": [30.0, 4.0, 30.0]})
    init = InitialConditions(kind="flock", direction=[1.0, 0.0, 0.0], spread_deg=10.0, spacing=1.0)
    state = initial_state(world, 4000, init, 18.0, np.random.default_rng(0))
    h = state.velocity / np.linalg.norm(state.velocity, axis=1, keepdims=True)
    tilt = np.degrees(np.arccos(np.clip(h[:, 0], -1.0, 1.0)))
    assert tilt.mean() == pytest.approx(10.0 * math.sqrt(2 / math.pi), rel=0.05)
    assert polarization(state.velocity) > 0.98


def test_centred_on_the_region_and_wrapped_when_periodic():
    world = World(dim=3, bounds={"kind": "box", "size": [200.0, 100.0, 200.0]})
    init = InitialConditions(kind="flock", spacing=1.0)
    state = initial_state(world, 1000, init, 5.0, np.random.default_rng(0))
    assert np.allclose(state.position.mean(axis=0), [100.0, 50.0, 100.0])
    periodic = World(dim=2, bounds={"kind": "periodic", "size": [10.0, 10.0]})
    state = initial_state(periodic, 1000, init, 5.0, np.random.default_rng(0))  # a flock wider than the world
    assert state.position.min() >= 0.0 and state.position.max() < 10.0


@pytest.mark.parametrize(
    ("key", "value", "phrase"),
    [
        ("agents.init.spacing", 0.0, "spacing"),
        ("agents.init.spacing", -1.0, "spacing"),
        ("agents.init.spacing", 1e7, "spacing"),
        ("agents.init.spacing", math.inf, "spacing"),
        ("agents.init.kind", "murmuration", "kind"),
    ],
)
def test_bad_values_refused_by_name(key, value, phrase):
    data = {"model": "reynolds", "world": {"dim": 3}, "agents": {"init": {key.rsplit(".", 1)[1]: value}}}
    with pytest.raises(ConfigError, match=phrase):
        validate(data)


def test_the_large_preset_starts_as_a_flock():
    """starlings-3d-large starts as the sheet (cut to 2000 birds here): the field's proportions and
    spacing, its roost larger than the flock."""
    params = apply_overrides(load_preset("starlings-3d-large"), ["agents.n=2000"])
    assert params.agents.init.kind == "flock"
    sim = Simulation(params)
    p, v = sim.state.position, sim.state.velocity
    shape = flock_proportions(p, v)
    assert shape["thickness_to_length"] == pytest.approx(1 / 5.6, rel=0.05)
    assert np.median(nearest(p)) == pytest.approx(params.agents.init.spacing, rel=0.05)
    full = flock_positions(100_000, 3, params.agents.init.spacing, [1.0, 0.0, 0.0], np.random.default_rng(0))
    assert load_preset("starlings-3d-large").rules.roost.radius > np.ptp(full[:, 0]) / 2


@pytest.mark.parametrize("kind", ["aligned", "flock"])
@pytest.mark.parametrize("direction", [[1e308, 1e308, 0.0], [1e-320, 1e-320, 0.0]])
def test_a_huge_or_tiny_direction_is_the_same_direction(kind, direction):
    """agents.init.direction = [1e308, 1e308, 0]: its length overflows, and the headings used to come out
    along +x (2D: atan2 of zeros) or NaN (3D); [1e-320, 1e-320, 0] had a length of 0 and gave NaN."""
    world = World(dim=3, bounds={"kind": "open", "size": [30.0, 4.0, 30.0]})
    init = InitialConditions(kind=kind, direction=direction, spread_deg=0.0, spacing=1.0)
    same = InitialConditions(kind=kind, direction=[1.0, 1.0, 0.0], spread_deg=0.0, spacing=1.0)
    for dim in (2, 3):
        w = world if dim == 3 else World(dim=2, bounds={"kind": "open", "size": [30.0, 30.0]})
        state = initial_state(w, 50, init, 18.0, np.random.default_rng(0))
        reference = initial_state(w, 50, same, 18.0, np.random.default_rng(0))
        assert np.isfinite(state.velocity).all()
        np.testing.assert_allclose(state.velocity, reference.velocity, rtol=0, atol=1e-12)
        np.testing.assert_allclose(state.position, reference.position, rtol=0, atol=1e-12)


def test_the_flock_length_by_hand():
    """10 000 birds 1.1 m apart: lattice 1.1 / 0.774 = 1.4212 m, so n cells hold 10 000 x 1.4212^3 =
    28 705 m^3; the unbent sheet pi/6 x 0.877 x 1 x 2.8 x 5.6 s^3 = 7.2002 s^3 holds it with
    s = (3986.7)^(1/3) = 15.856 m, and its length is 5.6 s = 88.80 m. The sheet drawn measures that
    length (principal axes, within 4 %), and the start's own semi-axis is half of it."""
    assert flock_length(10_000, 3, 1.1) == pytest.approx(88.80, abs=0.01)
    lattice = 1.1 / 0.774
    assert 2.0 * flock_semi_axes(10_000, 3, lattice)[0] == pytest.approx(flock_length(10_000, 3, 1.1), rel=1e-12)
    p = flock_positions(10_000, 3, 1.1, [1.0, 0.0, 0.0], np.random.default_rng(0))
    assert flock_proportions(p, np.tile([1.0, 0.0, 0.0], (len(p), 1)))["length"] == pytest.approx(88.80, rel=0.04)
    # 2D: pi/4 x 2.8 x 5.6 s^2 = 2000 x (1 / 0.794)^2, s = 16.05, length 5.6 s = 89.88
    assert flock_length(2000, 2, 1.0) == pytest.approx(89.88, abs=0.01)


def test_the_roost_grows_with_the_flock():
    """rules.roost.flock_lengths = 2: the radius is two flock lengths, 2 x 88.80 = 177.6 m at 10 000
    birds 1.1 m apart, and follows agents.n (500 birds: 2 x 32.71 = 65.4 m) and the spacing; 0 keeps
    the radius given."""
    base = load_preset("starlings-3d")
    assert base.rules.roost.flock_lengths == 0.0 and base.rules.roost.radius == 100.0
    grown = apply_overrides(base, ["agents.n=10000", "rules.roost.flock_lengths=2"])
    assert grown.rules.roost.radius == pytest.approx(177.59, abs=0.01)
    assert apply_overrides(grown, ["agents.n=500"]).rules.roost.radius == pytest.approx(65.43, abs=0.01)
    wider = apply_overrides(grown, ["agents.init.spacing=2.2"])
    assert wider.rules.roost.radius == pytest.approx(2 * 177.59, abs=0.02)
    given = apply_overrides(grown, ["rules.roost.flock_lengths=0", "rules.roost.radius=250"])
    assert given.rules.roost.radius == 250.0
    # starlings-3d-large: its 100 000 birds' flock, 191.3 m long, fits twice into the radius
    large = load_preset("starlings-3d-large")
    assert large.rules.roost.flock_lengths == 2.0
    assert large.rules.roost.radius == pytest.approx(2 * 191.30, abs=0.01)
    assert apply_overrides(large, ["agents.n=1000000"]).rules.roost.radius == pytest.approx(2 * 412.15, abs=0.1)


@pytest.mark.parametrize(
    ("overrides", "phrase"),
    [
        (["rules.roost.flock_lengths=-1"], r"rules\.roost\.flock_lengths.*>= 0"),
        (["rules.roost.flock_lengths=2e6"], r"rules\.roost\.flock_lengths.*<= 1e\+06"),
        (["agents.n=50000000", "agents.init.spacing=1e6", "rules.roost.flock_lengths=10"], r"<= 1e\+09"),
        (["agents.init.kind=layer"], r"agents\.init\.kind.*'random', 'aligned' or 'flock'"),
    ],
)
def test_bad_roost_and_start_values_get_one_line_naming_the_field(overrides, phrase):
    with pytest.raises(ConfigError, match=phrase) as error:
        apply_overrides(load_preset("starlings-3d"), overrides)
    assert "\n" not in str(error.value)


def test_the_flock_start_is_one_setting_away_on_starlings_3d():
    """starlings-3d keeps its slab (every measurement of it in docs/ starts there); agents.init.kind =
    flock gives the sheet at the preset's spacing, 1.1 m: its median nearest neighbour is the spacing,
    its width half its length, its length 5.6 s = 32.7 m for 500 birds (as in the test above)."""
    base = load_preset("starlings-3d")
    assert base.agents.init.kind == "aligned"
    sim = Simulation(apply_overrides(base, ["agents.init.kind=flock"]), seed=0)
    p, v = sim.state.position, sim.state.velocity
    assert np.median(nearest(p)) == pytest.approx(1.1, rel=0.05)
    assert flock_proportions(p, v)["width_to_length"] == pytest.approx(2.8 / 5.6, rel=0.05)
    assert flock_proportions(p, v)["length"] == pytest.approx(flock_length(500, 3, 1.1), rel=0.05)


def _shape_after(start: list[str], seconds: float) -> dict[str, float]:
    params = apply_overrides(load_preset("starlings-3d"), ["agents.n=10000", *start])
    sim = Simulation(params, seed=0)
    sim.step(round(seconds / sim.dt))
    p, v = sim.state.position, sim.state.velocity
    return {**flock_proportions(p, v), "nnd": float(np.median(nearest(p))), "polarization": polarization(v)}


def test_ten_thousand_birds_from_the_flock_start_are_not_a_flat_layer():
    """10 000 birds 2 s after the flock start are still a murmuration-shaped flock: thickness/length
    about the field's 0.18 (above 0.12), width/length near 0.5, the birds about 1.1 m apart, ordered.
    The slab start (the preset's, widened to its density as murmuration-hallmarks widens it, 134 x 4
    x 134 m) fails the first check: thickness/length 0.029, width/length 0.99 (measured, 2 s)."""
    shape = _shape_after(["agents.init.kind=flock", "rules.roost.flock_lengths=2"], 2.0)
    assert shape["thickness_to_length"] > 0.12
    assert 0.35 < shape["width_to_length"] < 0.7
    assert shape["thickness_gravity_cos"] > 0.9
    assert 0.8 * 1.1 < shape["nnd"] < 1.3 * 1.1
    assert shape["polarization"] > 0.95


def test_a_radius_given_over_a_roost_sized_to_the_flock_is_refused():
    """--set rules.roost.radius=300 on starlings-3d-large would be replaced by two flock lengths (383 m)
    without a word: it is refused in one line that names the way, which then works."""
    large = load_preset("starlings-3d-large")
    with pytest.raises(ConfigError, match=r"rules\.roost\.radius: .*rules\.roost\.flock_lengths=0") as error:
        apply_overrides(large, ["agents.init.kind=aligned", "rules.roost.radius=300"])
    assert "\n" not in str(error.value)
    old = apply_overrides(large, ["agents.init.kind=aligned", "rules.roost.radius=300", "rules.roost.flock_lengths=0"])
    assert old.rules.roost.radius == 300.0


def test_the_start_shapes_benchmark_measures_and_summarises(tmp_path):
    """benchmarks/start_shapes.py (docs/starlings.md, "The start of a large flock") on 200 birds for 1 s:
    the sheet's proportions at 0 s are the start's, and --summary's table has the run's row."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "start_shapes.py"
    spec = importlib.util.spec_from_file_location("start_shapes", path)
    shapes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shapes)
    run = shapes.run("starlings-3d", 200, 0, 1.0, ["agents.init.kind=flock"])
    assert run["t0"]["width_to_length"] == pytest.approx(0.5, rel=0.1)
    assert run["t0"]["nnd_median"] == pytest.approx(1.1, rel=0.1)
    assert run["polarization_lowest"] <= run["t0"]["polarization"]
    lines = tmp_path / "runs.jsonl"
    lines.write_text(json.dumps(run) + "\n", encoding="utf-8")
    table = shapes.summary([str(lines)]).splitlines()
    assert len(table) == 3  # header, rule, the one run's row
    assert "| starlings-3d, 200 | `agents.init.kind=flock` | 1 |" in table[2]
    assert " over 1 s |" in table[2]
