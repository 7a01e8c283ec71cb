"""flocksim fit without a cluster: priors and their errors, the one statistics path for tracks and
runs, the checks on tracks, and the maximum-entropy estimate of topological alignment."""

from __future__ import annotations

import json
import logging
import math
import tempfile

import numpy as np
import pytest
from typer.testing import CliRunner

from flocksim.cli import app
from flocksim.config import to_dict, validate
from flocksim.inference import STATISTICS, FitError, fit
from flocksim.inference.maxent import MaxentError, maxent_alignment, sample_maxent_flock
from flocksim.inference.priors import parse_prior, parse_priors, schema_range
from flocksim.inference.statistics import RunPlan, simulate_statistics, statistics_of, steps_per_frame
from flocksim.io.tracks import open_tracks
from flocksim.scenarios import load_preset
from vicsek_tracks import vicsek_positions, write_tracks_csv

pytest.importorskip("pyabc")
runner = CliRunner()
VICSEK = load_preset("vicsek")


# --- priors -----------------------------------------------------------------------------------


def test_prior_ranges_come_from_the_schema():
    assert schema_range(VICSEK, "vicsek.eta") == (0.0, pytest.approx(2 * math.pi))
    p = parse_prior("vicsek.eta", VICSEK)  # no range: the whole schema range
    assert (p.low, p.high) == (0.0, pytest.approx(2 * math.pi))
    p = parse_prior("vicsek.eta=0.5:4", VICSEK)
    assert (p.key, p.low, p.high) == ("vicsek.eta", 0.5, 4.0)
    couzin = load_preset("couzin")
    assert parse_prior("couzin.delta_r_o=0:6", couzin).high == 6.0


@pytest.mark.parametrize(
    ("texts", "message"),
    [
        (["vicsek.eta=0.5:7"], "--prior vicsek.eta: 0.5:7 leaves the parameter's range; allowed: within the schema "
         "range [0, 6.28319]"),
        (["vicsek.eta=-1:2"], "leaves the parameter's range"),
        (["vicsek.eta=3:1"], "--prior vicsek.eta: empty range 3:1; allowed: LO < HI within the schema range [0, "
         "6.28319]"),
        (["agents.n=10:100"], "--prior agents.n: a whole number, which a fit's uniform prior cannot draw; allowed: a "
         "real-valued parameter of the vicsek model, e.g. vicsek.speed, vicsek.radius, vicsek.eta, "),
        (["world.dt=0.5:2"], "--prior world.dt: not fitted: the tracks fix the simulated world (time step, box, "
         "dimension); allowed: a real-valued parameter of the vicsek model, e.g. vicsek.speed"),
        (["pointer.radius=0:1"], "--prior pointer.radius: not fitted: the viewer's pointer takes no part in a fit"),
        (["vicsek.etta=1:2"], "--prior vicsek.etta: unknown key of the vicsek model; allowed keys here: speed, radius, "
         "eta, update"),
        (["rules.alignment.weight=0:1"], "--prior rules: unknown key of the vicsek model"),
        (["vicsek=0:1"], "--prior vicsek: not a number of the vicsek model"),
        (["vicsek.update=0:1"], "--prior vicsek.update: not a number"),
        (["vicsek.eta=a:b"], "--prior 'vicsek.eta=a:b': expected KEY=LO:HI with finite numbers"),
        (["vicsek.eta=1"], "expected KEY=LO:HI"),
        ([], "--prior: none given"),
        (["vicsek.eta=1:2", "vicsek.eta=2:3"], "--prior vicsek.eta: given twice"),
    ],
)  # fmt: skip
def test_bad_priors_say_which_and_what_is_allowed(texts, message):
    with pytest.raises(FitError) as info:
        parse_priors(texts, VICSEK)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert str(info.value).count("allowed") <= 1, str(info.value)


# --- one statistics path ------------------------------------------------------------------------


def test_a_run_and_its_tracks_give_the_same_statistics(tmp_path):
    """A flocksim run summarised inside the fit equals the same run written as a CSV of wrapped
    positions, read back by open_tracks in the box and summarised: one code path."""
    from flocksim.simulation import Simulation

    n, frames, burn = 60, 25, 30
    params = validate({"model": "vicsek", "agents": {"n": n}, "world": {"bounds": {"size": [4.0, 4.0]}}})
    sim = Simulation(params, seed=11, threads=1)
    sim.step(burn)
    positions = []
    for t in range(frames):
        if t:
            sim.step(1)
        positions.append(sim.state.position.copy())
    csv = write_tracks_csv(tmp_path / "run.csv", np.array(positions))
    ds = open_tracks(csv, box="4,4")
    present = ds["present"].values
    from_tracks = statistics_of(
        ds["time"].values, ds["position"].values, ds["velocity"].values, present, (4.0, 4.0), STATISTICS, 5
    )
    plan = RunPlan(to_dict(params), ds["time"].values, 1, burn, present, "central", (4.0, 4.0), STATISTICS, 5)
    from_run = simulate_statistics(plan, {"vicsek.eta": params.vicsek.eta}, 11)
    for name in STATISTICS:
        assert from_run[name] == pytest.approx(from_tracks[name], rel=1e-6, abs=1e-9, nan_ok=True), name
    other = simulate_statistics(plan, {"vicsek.eta": 5.0}, 11)  # a different noise: different statistics
    assert other["polarization"] < from_run["polarization"] - 0.2


def test_frame_interval_must_be_whole_steps():
    assert steps_per_frame(0.5, 0.1) == 5
    with pytest.raises(FitError, match=r"world.dt: the tracks' frame interval 0.25 s is not a whole number"):
        steps_per_frame(0.25, 0.1)


def test_the_docs_burn_in_is_the_default_for_their_example():
    """docs/fitting.md's timing of one run of its example names the burn-in a fit gives it (it said
    400 steps where the provenance records 500, the floor)."""
    import re
    from pathlib import Path

    from flocksim.inference import BURN_IN_DURATIONS, BURN_IN_MIN_STEPS

    text = (Path(__file__).resolve().parents[1] / "docs" / "fitting.md").read_text(encoding="utf-8")
    command = re.search(r"vicsek_tracks\.py v400\.csv .*--frames (\d+)", text)
    stated = re.search(r"One run of the example \(400 Vicsek particles, (\d+) burn-in steps, (\d+) frames", text)
    assert command and stated, "docs/fitting.md: the example's command or its timing moved"
    frames = int(command.group(1))
    assert int(stated.group(2)) == frames
    steps = (frames - 1) * steps_per_frame(1.0, VICSEK.world.dt)  # one frame a second
    assert int(stated.group(1)) == max(BURN_IN_DURATIONS * steps, BURN_IN_MIN_STEPS)


# --- bad input stops before any simulation (exit 2, one line) ------------------------------------------


@pytest.fixture(scope="module")
def small_tracks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tracks")
    positions = vicsek_positions(40, 4.0, 2.0, frames=12, burn_in=20, seed=2)
    return {
        "ok": write_tracks_csv(folder / "ok.csv", positions),
        "short": write_tracks_csv(folder / "short.csv", positions[:6]),
        "sparse": write_tracks_csv(folder / "sparse.csv", positions[:, :5]),
        "open": write_tracks_csv(folder / "open.csv", positions[:1] + 0.01 * np.arange(12)[:, None, None]),
    }


@pytest.mark.parametrize(
    ("which", "extra", "message"),
    [
        ("ok", ["--prior", "vicsek.eta=0:9"], "error: --prior vicsek.eta: 0:9 leaves the parameter's range"),
        ("ok", ["--prior", "vicsek.nope=0:1"], "error: --prior vicsek.nope: unknown key of the vicsek model"),
        ("short", ["--prior", "vicsek.eta=0:4"], "6 frames, too short to fit; allowed: tracks of at least 10 frames"),
        ("sparse", ["--prior", "vicsek.eta=0:4"], "5.0 birds per frame on average, too sparse to fit"),
        ("ok", ["--prior", "vicsek.eta=0:4", "--set", "world.dt=0.3"], "error: world.dt: the tracks' frame interval"),
        (
            "open",
            ["--prior", "couzin.noise_sd=0:1", "--set", "world.dt=1"],
            "error: world.dim: the tracks are 2D and the couzin parameters 3D; allowed: --set world.dim=2",
        ),
        ("ok", ["--prior", "vicsek.eta=0:4", "--set", "world.bounds.size=[2,2]"], "more than the box side 2"),
        ("ok", ["--prior", "vicsek.eta=0:4", "--simulations", "5"], "error: --simulations: 5; allowed: a whole"),
        (
            "ok",
            ["--prior", "vicsek.eta=0:4", "--distance", "euclid"],
            "--distance: 'euclid'; allowed: informative, mad",
        ),
    ],
)
def test_cli_refuses_bad_input_with_one_line(small_tracks, tmp_path, which, extra, message):
    out = tmp_path / "fit.json"
    preset = "couzin" if which == "open" else "vicsek"
    result = runner.invoke(app, ["fit", str(small_tracks[which]), "--preset", preset, "-o", str(out), *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_refuses_an_output_that_is_not_json(small_tracks, tmp_path):
    result = runner.invoke(
        app,
        ["fit", str(small_tracks["ok"]), "--preset", "vicsek", "--prior", "vicsek.eta", "-o", str(tmp_path / "a.txt")],
    )
    assert result.exit_code == 2 and "--output: cannot write 'a.txt'; allowed: a file ending in .json" in result.output


def _canned_fit(during=None):
    """A stand-in for flocksim.inference.fit that returns a one-parameter result at once (``during``:
    called while it 'runs', e.g. to write the output path meanwhile)."""
    from flocksim.inference.priors import Prior
    from flocksim.inference.result import FitResult
    from flocksim.inference.smc import Posterior

    def fake(*args, **kwargs):
        if during is not None:
            during()
        posterior = Posterior(np.array([[1.0], [2.0]]), np.array([0.5, 0.5]), np.array([0.1, 0.2]), [1.0], 4, 1, [0.5])
        summary = {"mean": 1.5, "median": 1.5, "ci95": [1.0, 2.0]}
        return FitResult({"vicsek.eta": summary}, [Prior("vicsek.eta", 0.0, 4.0)], {}, {}, 4, 1, {}, posterior)

    return fake


def _fit_args(tracks, out, *extra):
    return ["fit", str(tracks), "--preset", "vicsek", "--prior", "vicsek.eta=0:4", "-o", str(out), *extra]


def test_cli_refuses_an_existing_result_before_any_simulation(small_tracks, tmp_path, monkeypatch):
    import flocksim.inference

    def never(*args, **kwargs):
        raise AssertionError("the fit ran although its output exists")

    monkeypatch.setattr(flocksim.inference, "fit", never)
    earlier = tmp_path / "fit.json"
    earlier.write_bytes(b'{"hours": "of work"}\n')
    link = tmp_path / "link.json"
    link.symlink_to(earlier)
    for out in (earlier, link):
        result = runner.invoke(app, _fit_args(small_tracks["ok"], out))
        assert result.exit_code == 2, result.output
        assert result.output.strip() == (
            f"error: --output: {out} already exists{f' (a link to {earlier})' if out == link else ''}; "
            "allowed: --force to replace it, or another path"
        )
    assert earlier.read_bytes() == b'{"hours": "of work"}\n' and link.is_symlink()
    figure = tmp_path / "fit.png"
    figure.write_bytes(b"old figure")
    result = runner.invoke(app, _fit_args(small_tracks["ok"], tmp_path / "new.json", "--plot", str(figure)))
    assert result.exit_code == 2 and f"error: --plot: {figure} already exists" in result.output
    assert figure.read_bytes() == b"old figure" and not (tmp_path / "new.json").exists()


def test_cli_force_replaces_an_existing_result(small_tracks, tmp_path, monkeypatch):
    import flocksim.inference

    monkeypatch.setattr(flocksim.inference, "fit", _canned_fit())
    out = tmp_path / "fit.json"
    out.write_text("earlier")
    result = runner.invoke(app, _fit_args(small_tracks["ok"], out, "--force"))
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["parameters"]["vicsek.eta"]["median"] == 1.5


def test_cli_keeps_a_result_written_to_its_path_while_it_ran(small_tracks, tmp_path, monkeypatch):
    import flocksim.inference

    out = tmp_path / "fit.json"
    monkeypatch.setattr(flocksim.inference, "fit", _canned_fit(during=lambda: out.write_text("another fit")))
    result = runner.invoke(app, _fit_args(small_tracks["ok"], out))
    assert result.exit_code == 2 and f"error: --output: {out} already exists" in result.output
    assert out.read_text() == "another fit"


def _no_abc(monkeypatch, seen: dict, samples=(1.9, 2.1)):
    """flocksim.inference.fit without a cluster or pyabc: the run plan it would simulate is kept in
    ``seen``, and a canned one-generation posterior of ``samples`` (equal weights) comes back at once."""
    from contextlib import nullcontext

    import flocksim.inference.smc
    import flocksim.sweep.runner
    from flocksim.inference.smc import Posterior

    x = np.asarray(samples, dtype=float)[:, None]
    w = np.full(len(x), 1.0 / len(x))

    def run_abc(
        model, priors, observed, simulations, client, population=None, distance="informative", report=None,
        final_effective=0,
    ):  # fmt: skip
        seen["plan"] = model.plan
        seen["final_effective"] = final_effective
        return Posterior(x, w, np.full(len(x), 0.1), [1.0], 20, 1, [0.5])

    monkeypatch.setattr(flocksim.inference.smc, "run_abc", run_abc)
    monkeypatch.setattr(flocksim.sweep.runner, "dask_client", lambda *args, **kwargs: nullcontext(None))


def test_cli_box_is_the_fix_its_refusal_names(small_tracks, tmp_path, monkeypatch):
    """Tracks wider than the preset's box are refused naming --box, and fit has --box (it was "No
    such option"): the tracks are unwrapped in it and the runs made in it, whatever the preset's box."""
    seen: dict = {}
    _no_abc(monkeypatch, seen)
    out = tmp_path / "fit.json"
    narrow = _fit_args(small_tracks["ok"], out, "--set", "world.bounds.size=[2,2]")
    refused = runner.invoke(app, narrow)
    assert (
        refused.exit_code == 2 and "error: --box: " in refused.output and "more than the box side 2" in refused.output
    )
    assert "plan" not in seen
    result = runner.invoke(app, [*narrow, "--box", "4"])
    assert result.exit_code == 0, result.output
    assert seen["plan"].box == (4.0, 4.0)
    assert seen["plan"].base["world"]["bounds"] == {**seen["plan"].base["world"]["bounds"], "kind": "periodic",
                                                    "size": [4.0, 4.0]}  # fmt: skip
    provenance = json.loads(out.read_text())["provenance"]
    assert provenance["box"] == [4.0, 4.0] and provenance["parameters"]["world"]["bounds"]["size"] == [4.0, 4.0]
    bad = runner.invoke(app, [*narrow, "--box", "4,4,4", "--force"])
    assert bad.exit_code == 2 and "error: --box: '4,4,4' gives 3 sides for 2D tracks" in bad.output


def test_cli_draws_the_last_generation_to_100_effective_particles_unless_told(small_tracks, tmp_path, monkeypatch):
    seen: dict = {}
    _no_abc(monkeypatch, seen)
    out = tmp_path / "fit.json"
    result = runner.invoke(app, _fit_args(small_tracks["ok"], out))
    assert result.exit_code == 0, result.output
    assert seen["final_effective"] == 100 and json.loads(out.read_text())["provenance"]["final_effective"] == 100
    result = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--final-effective", "0", "--force"])
    assert result.exit_code == 0, result.output
    assert seen["final_effective"] == 0 and json.loads(out.read_text())["provenance"]["final_effective"] == 0
    refused = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--final-effective", "-1", "--force"])
    assert refused.exit_code == 2 and "--final-effective" in refused.output


def test_a_run_in_another_periodic_box_is_refused_naming_its_box(tmp_path, monkeypatch):
    """A run store brings its own periodic box: a fit made in another (the preset's) is refused with
    the --box that fixes it (before, open_tracks said "leave --box out", which fit could not)."""
    seen: dict = {}
    _no_abc(monkeypatch, seen)
    store = tmp_path / "run.zarr"
    small = ["--set", "agents.n=40", "--set", "world.bounds.size=[4,4]", "--set", "vicsek.speed=0.1"]
    made = runner.invoke(app, ["run", "vicsek", "--steps", "12", "--every", "1", *small, "--out", str(store), "-q"])
    assert made.exit_code == 0, made.output
    out = tmp_path / "fit.json"
    refused = runner.invoke(app, _fit_args(store, out))
    assert refused.exit_code == 2 and "plan" not in seen
    assert refused.output.strip() == (
        f"error: --box: {store} is a run in the periodic box 4,4, the fit's runs in the box 10,10; allowed: --box 4,4"
    )
    fitted = runner.invoke(app, _fit_args(store, out, "--box", "4,4"))
    assert fitted.exit_code == 0, fitted.output
    assert seen["plan"].box == (4.0, 4.0)


def test_a_vicsek_fit_says_which_update_it_assumed(small_tracks, tmp_path, monkeypatch):
    """The position update changes what eta fits (docs/fitting.md): fit.json and the output name it."""
    _no_abc(monkeypatch, {})
    for update, other in (("paper", "forward"), ("forward", "paper")):
        out = tmp_path / f"{update}.json"
        result = runner.invoke(app, _fit_args(small_tracks["ok"], out, "--set", f"vicsek.update={update}"))
        assert result.exit_code == 0, result.output
        assert json.loads(out.read_text())["provenance"]["assumed"] == {"vicsek.update": update}
        line = next(line for line in result.stdout.splitlines() if line.startswith("assumed "))
        assert line.startswith(f"assumed vicsek.update = {update}: a particle moves by its ")
        assert line.endswith(f"; tracks made otherwise: --set vicsek.update={other}")


def test_api_refuses_bad_statistics(small_tracks):
    with pytest.raises(FitError, match="--statistic: \\['nope'\\]; allowed: one or more of polarization"):
        fit(small_tracks["ok"], "vicsek", {"vicsek.eta": (0.5, 4.0)}, statistics=["nope"])


def test_api_refuses_a_bad_distance(small_tracks):
    with pytest.raises(FitError, match="--distance: 'l1'; allowed: informative, mad"):
        fit(small_tracks["ok"], "vicsek", {"vicsek.eta": (0.5, 4.0)}, distance="l1")


# --- intervals and identifiability -----------------------------------------------------------------


def test_weighted_quantile_by_hand():
    from flocksim.inference.smc import weighted_quantile

    four = np.array([4.0, 1.0, 3.0, 2.0])  # equal weights: midpoints at cumulative 0.125, 0.375, 0.625, 0.875
    equal = np.full(4, 0.25)
    assert weighted_quantile(four, equal, 0.5) == pytest.approx(2.5)
    assert weighted_quantile(four, equal, 0.25) == pytest.approx(1.5)
    assert weighted_quantile(four, equal, 0.75) == pytest.approx(3.5)
    assert weighted_quantile(four, equal, 0.025) == 1.0 and weighted_quantile(four, equal, 0.975) == 4.0  # clamped
    # weights 3 and 1: midpoints at 1.5/4 = 0.375 and 3.5/4 = 0.875; q = 0.5 is a quarter of the way
    assert weighted_quantile(np.array([0.0, 1.0]), np.array([3.0, 1.0]), 0.5) == pytest.approx(0.25)
    rng = np.random.default_rng(5)
    x = rng.normal(size=37)
    for q in (0.0, 0.025, 0.1, 0.5, 0.9, 0.975, 1.0):
        assert weighted_quantile(x, np.ones(37), q) == pytest.approx(np.quantile(x, q, method="hazen"), abs=1e-12)
    # all the weight on one particle: that particle, whatever q (zero weights are left out)
    one = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
    spread = np.array([-3.0, 1.0, 7.0, 8.0, 20.0])
    assert {weighted_quantile(spread, one, q) for q in (0.0, 0.025, 0.5, 0.975, 1.0)} == {7.0}
    # weights 1, 2, 1: midpoints at 0.5/4, 2/4, 3.5/4; q = 0.3 is 0.175/0.375 of the way from 1 to 2
    assert weighted_quantile(np.array([5.0, 1.0, 2.0]), np.array([1.0, 1.0, 2.0]), 0.3) == pytest.approx(
        1 + 0.175 / 0.375
    )
    for bad in (np.array([1.0, -1.0, 1.0, 1.0]), np.zeros(4)):
        with pytest.raises(ValueError, match="weight"):
            weighted_quantile(four, bad, 0.5)


def _posterior(samples, weights=None):
    from flocksim.inference.smc import Posterior

    x = np.asarray(samples, dtype=float)
    w = np.full(len(x), 1.0 / len(x)) if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
    return Posterior(x[:, None], w, np.zeros(len(x)), [1.0], len(x), 1, [1.0])


def _told(samples, weights=None, low=0.0, high=4.0):
    from flocksim.inference.priors import Prior
    from flocksim.inference.result import identifiability, summarize_posterior

    posterior, priors = _posterior(samples, weights), [Prior("p", low, high)]
    return identifiability(posterior, priors, summarize_posterior(posterior, priors))["p"]


def test_a_posterior_equal_to_the_prior_is_told_apart_from_a_narrow_one():
    like_prior = _told(np.linspace(0.0, 4.0, 400))  # the uniform prior [0, 4] itself
    assert like_prior["width_ratio"] == pytest.approx(0.95, abs=0.01)
    assert like_prior["mass_near_low"] == pytest.approx(0.05, abs=0.005)
    assert [w.split(":")[0] for w in like_prior["warnings"]] == ["warning"]
    assert like_prior["warnings"][0].startswith("warning: the data cannot tell p: its 95 % interval [0.09")
    narrow = _told(np.random.default_rng(1).normal(2.0, 0.1, 400))
    assert narrow["width_ratio"] == pytest.approx(0.1, abs=0.02) and narrow["warnings"] == []
    assert narrow["mass_near_low"] == narrow["mass_near_high"] == 0.0
    # the same particles weighted like the prior: the weights, not the particles' count, decide
    x = np.linspace(0.0, 4.0, 400)
    peaked = _told(x, np.exp(-0.5 * ((x - 2.0) / 0.1) ** 2))
    assert peaked["width_ratio"] == pytest.approx(0.1, abs=0.02) and peaked["warnings"] == []


def test_a_posterior_piled_at_a_bound_says_which():
    low = _told(np.linspace(0.0, 0.6, 300))  # a third of the weight within 0.2 (5 % of [0, 4]) of 0
    assert low["mass_near_low"] == pytest.approx(1 / 3, abs=0.01) and low["width_ratio"] < 0.2
    assert low["warnings"] == [
        "warning: p piles against the prior's lower bound 0: 33% of the posterior's weight is within 5% of the "
        "prior's range of it (the truth may lie beyond the prior, or the model may not reach the tracks there)"
    ]
    high = _told(np.linspace(3.5, 4.0, 300), low=1.0)  # prior [1, 4]: 5 % is 0.15 from 4
    assert high["mass_near_high"] == pytest.approx(0.3, abs=0.01) and "upper bound 4:" in high["warnings"][0]
    assert len(high["warnings"]) == 1


def test_an_interval_from_too_few_particles_says_so():
    from flocksim.inference.result import effective_particles, interval_support

    small = interval_support(_posterior(np.linspace(1.0, 3.0, 25)))
    assert small["particles"] == 25 and small["effective_particles"] == pytest.approx(25.0)
    assert not small["enough"] and small["warning"].startswith(
        "warning: the 95 % intervals rest on 25 particles (25 effective), too few for 95 % to mean 95 %"
    )
    assert interval_support(_posterior(np.linspace(1.0, 3.0, 200)))["enough"]
    assert interval_support(_posterior(np.linspace(1.0, 3.0, 200)))["warning"] is None
    uneven = np.r_[np.full(10, 10.0), np.ones(190)]  # 200 particles, 10 of them carrying a third of the weight
    assert effective_particles(uneven) == pytest.approx(290.0**2 / (10 * 100 + 190))
    assert not interval_support(_posterior(np.linspace(1.0, 3.0, 200), uneven))["enough"]


# --- the last generation: drawn until it carries a 95 % interval ------------------------------------


def _jobs(*entries):
    """Finished jobs by number, as ``_run_round`` collects them: (result with its weight, accepted, job)."""
    from types import SimpleNamespace

    return {job: (SimpleNamespace(weight=w), ok, job) for job, (w, ok) in enumerate(entries)}


def test_kish_effective_particles_by_hand():
    from flocksim.inference.smc import kish

    assert kish([1.0, 1.0, 1.0, 1.0]) == 4.0
    assert kish([5.0, 0.0, 0.0]) == 1.0
    assert kish([2.0, 1.0, 1.0]) == pytest.approx(16.0 / 6.0)  # (2 + 1 + 1)^2 / (4 + 1 + 1)


def test_a_round_ends_at_its_nth_acceptance_unless_it_reaches_the_budget():
    from flocksim.inference.smc import _enough_jobs

    done = _jobs((1.0, True), (0.0, False), (1.0, True), (1.0, True))
    # a generation that stays within the budget (jobs 0..2 are 3 of the 10 left): its 2nd acceptance, job 2
    assert _enough_jobs(2, 10, 3)(done) == 2
    # the calibration sample (left None) and a fit without a final generation (0) stop there too
    assert _enough_jobs(2, 3, 0)(done) == 2 and _enough_jobs(2, None, 3)(done) == 2
    # not yet 2 accepted among the finished jobs: go on
    assert _enough_jobs(2, 10, 3)(_jobs((1.0, True), (0.0, False))) is None


def test_the_generation_that_reaches_the_budget_goes_on_until_enough_effective_particles():
    from flocksim.inference.smc import FINAL_MAX_FACTOR, _enough_jobs

    # 3 jobs reach the budget (left 3): accepted weights 1 and 3 (jobs 0, 2) are worth 16 / 10 = 1.6
    # effective particles, under 2; job 3 is rejected; job 4's weight 1 makes (1 + 3 + 1)^2 / 11 = 2.27
    done = _jobs((1.0, True), (0.0, False), (3.0, True), (0.0, False), (1.0, True), (1.0, True))
    assert _enough_jobs(2, 3, 2)(done) == 4
    # with job 3 still running the answer waits for it (job order, not finishing order)
    del done[3]
    assert _enough_jobs(2, 3, 2)(done) is None
    # too few jobs finished to reach 2 effective: go on
    assert _enough_jobs(2, 3, 2)(_jobs((1.0, True), (0.0, False), (3.0, True))) is None
    # weights so uneven that they never are worth 2: it stops at FINAL_MAX_FACTOR x 2 accepted particles
    assert FINAL_MAX_FACTOR == 4
    uneven = _jobs((1000.0, True), *[(1.0, True)] * 9)
    assert _enough_jobs(1, 1, 2)(uneven) == 7  # the 8th accepted, kish 1007^2 / 1000007 = 1.01


def test_the_default_fit_draws_a_last_generation_that_carries_a_95_percent_interval():
    """run_abc on a toy model (theta ~ U(0, 3), the statistic theta + N(0, 0.3)) on an in-process Dask
    client, at the fit's default budget and final_effective: the last generation's weighted particles
    are worth at least 100 (the interval's warning does not fire); the others keep an eighth of the
    budget (25). With final_effective 0 (fits before 8 December 2026) the last has 25 and warns."""
    import inspect

    distributed = pytest.importorskip("distributed")
    from flocksim.inference import DEFAULT_SIMULATIONS, MIN_INTERVAL_PARTICLES
    from flocksim.inference.priors import Prior
    from flocksim.inference.result import interval_support
    from flocksim.inference.smc import run_abc

    default = inspect.signature(fit).parameters["final_effective"].default
    assert DEFAULT_SIMULATIONS == 200 and MIN_INTERVAL_PARTICLES == 100
    priors = [Prior("theta", 0.0, 3.0)]
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) as client:
        last = run_abc(ToyModel(), priors, {"signal": 1.0}, DEFAULT_SIMULATIONS, client, final_effective=default)
        plain = run_abc(ToyModel(), priors, {"signal": 1.0}, DEFAULT_SIMULATIONS, client, final_effective=0)
    support = interval_support(last)
    assert support["enough"] and support["effective_particles"] >= 100 and support["warning"] is None
    assert support["particles"] > 100 and last.simulations > DEFAULT_SIMULATIONS
    assert len(plain.samples) == 25 and not interval_support(plain)["enough"]
    # the same generations and tolerances in both fits (same seed, same jobs): only the last grows
    assert last.epsilons == plain.epsilons and last.generations == plain.generations


class ToyModel:
    """A statistic equal to the parameter plus Gaussian noise (sd 0.3), drawn from NumPy's global
    generator, which the fit's sampler seeds per job."""

    seed = 4

    def __call__(self, pars):
        return {"signal": float(pars["p0"]) + 0.3 * np.random.normal()}


def test_sensitivity_reads_how_far_each_statistic_moves_across_the_prior():
    """Runs on a 4 x 4 grid of two parameters (priors [0, 4] and [10, 20]), twice, a statistic
    ``sees`` = 2 + 6 x (p0 scaled to 0..1) + e with e = +1 in the first replicate and -1 in the
    second (orthogonal to the line: the fit recovers 6 exactly), ``blind`` = e alone. Scatter
    sqrt(32 / 29) (32 runs, 3 coefficients): ``sees`` moves 6 / sqrt(32/29) scatters across p0's
    prior, 0 across p1's, so p1 gets the warning."""
    from flocksim.inference.priors import Prior
    from flocksim.inference.result import identifiability, sensitivity, summarize_posterior

    grid = np.array([(a, b) for a in range(4) for b in range(4)], dtype=float) / 3.0
    scaled = np.concatenate([grid, grid])
    e = np.r_[np.ones(16), -np.ones(16)]
    values = np.column_stack([0.0 + 4.0 * scaled[:, 0], 10.0 + 10.0 * scaled[:, 1]])
    stats = np.column_stack([2.0 + 6.0 * scaled[:, 0] + e, e])
    posterior = _posterior(np.linspace(0.0, 4.0, 200))
    posterior = type(posterior)(
        np.column_stack([np.linspace(0.0, 4.0, 200), np.linspace(10.0, 20.0, 200)]),
        posterior.weights,
        posterior.distances,
        [1.0],
        200,
        1,
        [1.0],
        first_generation=(values, stats, ("sees", "blind")),
    )
    priors = [Prior("p0", 0.0, 4.0), Prior("p1", 10.0, 20.0)]
    seen = sensitivity(posterior, priors)
    assert seen["p0"]["sees"] == pytest.approx(6.0 / math.sqrt(32.0 / 29.0), rel=1e-12)
    assert seen["p1"]["sees"] == pytest.approx(0.0, abs=1e-12) and seen["p0"]["blind"] == pytest.approx(0.0, abs=1e-12)
    told = identifiability(posterior, priors, summarize_posterior(posterior, priors))
    assert not any("no statistic sees p0" in w for w in told["p0"]["warnings"])
    assert any(w.startswith("warning: no statistic sees p1: across its prior [10, 20]") for w in told["p1"]["warnings"])
    few = type(posterior)(*[getattr(posterior, f) for f in ("samples", "weights", "distances", "epsilons",
                                                                  "simulations", "generations", "acceptance")],
                          first_generation=(values[:4], stats[:4], ("sees", "blind")))  # fmt: skip
    assert sensitivity(few, priors) is None  # 4 runs for 3 coefficients: no scatter to speak of


def test_replicates_with_other_seeds_say_whether_the_fit_is_stable(small_tracks, tmp_path, monkeypatch):
    """--replicates 3 fits three times with seeds 5, 6, 7; the result is the first fit's, and a
    parameter whose fits disagree (medians 2.0, 2.05 and 3.0, intervals about 0.33 wide) gets a
    warning; fits that agree get none. Each replicate's simulations come from its own seed."""
    import flocksim.inference.smc
    from flocksim.inference.smc import Posterior

    centres = {5: 2.0, 6: 2.05, 7: 3.0}
    seeds_seen = []

    def run_abc(
        model, priors, observed, simulations, client, population=None, distance="informative", report=None,
        final_effective=0,
    ):  # fmt: skip
        seeds_seen.append(model.seed)
        x = np.linspace(-0.17, 0.17, 200)[:, None] + centres[model.seed]
        return Posterior(x, np.full(200, 1 / 200), np.zeros(200), [1.0], 20, 1, [0.5])

    _no_abc(monkeypatch, {})
    monkeypatch.setattr(flocksim.inference.smc, "run_abc", run_abc)
    out = tmp_path / "fit.json"
    result = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--seed", "5", "--replicates", "3"])
    assert result.exit_code == 0, result.output
    assert seeds_seen == [5, 6, 7]
    doc = json.loads(out.read_text())
    eta = doc["stability"]["vicsek.eta"]
    assert doc["parameters"]["vicsek.eta"]["median"] == pytest.approx(2.0, abs=0.01)  # the first fit
    assert eta["seeds"] == [5, 6, 7] and eta["medians"] == pytest.approx([2.0, 2.05, 3.0], abs=0.01)
    assert eta["overlap"] is False and eta["agree"] is False and eta["spread"] == pytest.approx(3.0, rel=0.05)
    assert eta["warnings"][0] in result.stdout.splitlines()
    assert eta["warnings"][0].startswith(
        "warning: the fit of vicsek.eta is unstable: with seeds 5, 6, 7 its medians are 2, 2.05, 3, "
        "their intervals share no value"
    )
    assert doc["provenance"]["replicates"] == 3
    centres[7] = 2.1
    seeds_seen.clear()
    result = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--seed", "5", "--replicates", "3", "--force"])
    doc = json.loads(out.read_text())
    assert doc["stability"]["vicsek.eta"]["agree"] is True and "unstable" not in result.stdout
    result = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--replicates", "11", "--force"])
    assert result.exit_code == 2 and "--replicates" in result.output
    result = runner.invoke(app, [*_fit_args(small_tracks["ok"], out), "--seed", "5", "--force"])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["stability"] is None  # one fit: nothing to compare


def test_the_plots_band_is_called_95_percent_only_when_the_particles_carry_it():
    from flocksim.inference.result import band_label, interval_support

    assert band_label(interval_support(_posterior(np.linspace(1.0, 3.0, 200))), 1.05, 2.95) == "95 % [1.05, 2.95]"
    few = band_label(interval_support(_posterior(np.linspace(1.0, 3.0, 25))), 1.05, 2.95)
    assert "95 % [" not in few and few.endswith("of 25 effective particles: too few for 95 %")


def test_cli_tells_the_intervals_support_and_what_the_data_cannot_tell(small_tracks, tmp_path, monkeypatch):
    """fit.json and the command line: the width against the prior's on each parameter's line, and a
    warning line for too few particles and for a parameter the data cannot tell; none for a narrow
    posterior from enough particles."""
    _no_abc(monkeypatch, {}, samples=np.linspace(0.0, 4.0, 25))  # the prior vicsek.eta=0:4, 25 particles
    out = tmp_path / "wide.json"
    result = runner.invoke(app, _fit_args(small_tracks["ok"], out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["interval"]["particles"] == 25 and doc["interval"]["enough"] is False
    assert doc["interval"]["method"].startswith("weighted quantiles 2.5 % and 97.5 %")
    eta = doc["identifiability"]["vicsek.eta"]
    assert eta["width_ratio"] > 0.8 and set(eta) == {
        "width_ratio",
        "mass_near_low",
        "mass_near_high",
        "sensitivity",
        "warnings",
    }
    assert eta["sensitivity"] is None  # no first generation's runs to read
    lines = result.stdout.splitlines()
    assert lines[0].startswith("vicsek.eta: median 2, mean 2, 95 % interval [") and lines[0].endswith(
        f"{eta['width_ratio']:.2f} of the prior's width"
    )
    assert lines[1] == doc["interval"]["warning"] and lines[2] == eta["warnings"][0]
    assert lines[2].startswith("warning: the data cannot tell vicsek.eta: its 95 % interval")
    _no_abc(monkeypatch, {}, samples=np.random.default_rng(0).normal(2.0, 0.05, 120))
    out = tmp_path / "narrow.json"
    result = runner.invoke(app, _fit_args(small_tracks["ok"], out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["interval"]["enough"] is True and doc["interval"]["warning"] is None
    assert doc["identifiability"]["vicsek.eta"]["warnings"] == [] and "warning" not in result.stdout


# --- the distance ---------------------------------------------------------------------------------


def toy_abc(distance: str) -> tuple[dict[str, float], float]:
    """ABC-SMC with flocksim fit's distance ``distance`` on a toy problem: theta ~ U(0, 3); the
    statistic ``signal`` is theta plus a little noise, ``noise`` is N(0, 1) whatever theta (it
    tells nothing about it). The last generation's weight of each statistic in the distance, and
    the width of the 95 % interval of theta."""
    import pyabc

    from flocksim.inference.smc import make_distance, weighted_quantile

    logging.getLogger("ABC").setLevel(logging.WARNING)

    def model(pars):
        return {"signal": pars["theta"] + 0.05 * np.random.normal(), "noise": np.random.normal()}

    np.random.seed(3)
    dist = make_distance(distance)
    abc = pyabc.ABCSMC(
        model,
        pyabc.Distribution(theta=pyabc.RV("uniform", 0.0, 3.0)),
        dist,
        population_size=60,
        sampler=pyabc.sampler.SingleCoreSampler(),
    )
    with tempfile.TemporaryDirectory() as tmp:
        abc.new(f"sqlite:///{tmp}/toy.db", {"signal": 1.0, "noise": 0.0})
        history = abc.run(max_total_nr_simulations=400, minimum_epsilon=0.0)
        frame, w = history.get_distribution(m=0, t=history.max_t)
        theta = frame["theta"].to_numpy()
        width = weighted_quantile(theta, w, 0.975) - weighted_quantile(theta, w, 0.025)
        weights = dict(zip(dist.sumstat.get_ids(), dist.get_weights(history.max_t), strict=True))
    return weights, width


def test_the_informative_distance_weighs_the_statistic_that_carries_the_parameter():
    """The default distance gives the statistic that moves with the parameter far more weight than
    the one that is pure noise (the MAD-scaled distance gives them about the same), and so a
    narrower posterior."""
    informative, width = toy_abc("informative")
    assert informative["signal"] > 5 * informative["noise"], informative
    mad, mad_width = toy_abc("mad")
    assert 0.5 < mad["signal"] / mad["noise"] < 2, mad  # MAD scales of U(0, 3) and N(0, 1): 0.75 and 0.67
    assert width < 0.7 * mad_width, (width, mad_width)


# --- maximum entropy ------------------------------------------------------------------------------


@pytest.mark.parametrize(("coupling", "nc"), [(20.0, 6), (8.0, 11)])
def test_maxent_recovers_the_coupling_of_a_synthetic_flock(coupling, nc):
    rng = np.random.default_rng(5)
    positions = [rng.uniform(0.0, 10.0, size=(200, 3)) for _ in range(4)]
    headings = [sample_maxent_flock(p, coupling, nc, rng) for p in positions]
    estimate = maxent_alignment(positions, headings, max_nc=16)
    assert estimate.neighbors == nc
    assert estimate.coupling == pytest.approx(coupling, rel=0.1)
    assert estimate.frames == 4


def test_maxent_headings_unrelated_to_positions_show_no_topological_coupling():
    rng = np.random.default_rng(6)
    positions = [rng.uniform(0.0, 10.0, size=(200, 3)) for _ in range(4)]
    headings = [sample_maxent_flock(p, 20.0, 6, rng)[rng.permutation(200)] for p in positions]  # shuffled
    estimate = maxent_alignment(positions, headings, max_nc=16)
    assert estimate.coupling * estimate.neighbors < 0.5 * 20.0 * 6 or estimate.neighbors == 16


def test_maxent_refuses_a_disordered_flock():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((100, 3))
    with pytest.raises(MaxentError, match=r"no frame with polarization >= 0\.7"):
        maxent_alignment([rng.uniform(size=(100, 3))], [v])


def test_analyze_maxent_on_tracks_of_known_coupling(tmp_path):
    """Birds flying straight with headings drawn from the maxent model: the CSV read back by
    flocksim analyze --maxent gives the coupling and neighbour count they were drawn with."""
    rng = np.random.default_rng(8)
    start = rng.uniform(0.0, 10.0, size=(150, 3))
    heading = sample_maxent_flock(start, 20.0, 7, rng)
    rows = ["frame,id,x,y,z,time"]
    for f in range(5):
        p = start + 0.001 * f * heading
        rows += [f"{f},{i},{x:.12g},{y:.12g},{z:.12g},{f}" for i, (x, y, z) in enumerate(p)]
    csv = tmp_path / "flock.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["analyze", str(csv), "--maxent"], terminal_width=250)
    assert result.exit_code == 0, result.output
    coupling = next(line for line in result.output.splitlines() if "maxent coupling J" in line)
    neighbours = next(line for line in result.output.splitlines() if "maxent neighbours n_c" in line)
    assert float(coupling.split("│")[2]) == pytest.approx(20.0, rel=0.1)
    assert int(neighbours.split("│")[2]) == 7


def test_cli_refuses_workers_with_a_scheduler(small_tracks, tmp_path):
    args = [
        "fit",
        str(small_tracks["ok"]),
        "--preset",
        "vicsek",
        "--prior",
        "vicsek.eta",
        "-o",
        str(tmp_path / "f.json"),
    ]
    result = runner.invoke(app, [*args, "--workers", "2", "--scheduler", "tcp://127.0.0.1:9"])
    assert result.exit_code == 2, result.output
    assert (
        result.output.strip()
        == "error: --workers: applies to the local cluster only; allowed: --workers or --scheduler"
    )
