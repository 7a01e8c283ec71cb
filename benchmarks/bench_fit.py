"""flocksim fit on tracks it did not make: recovery, calibration, and the library comparison.

Tracks come from tests/vicsek_tracks.py (plain numpy Vicsek, no flocksim code), 2D, periodic box,
one frame a second after a burn-in of 1000 steps (a flock in its steady state). Every fit uses one local Dask cluster of
``--workers`` processes and the prior vicsek.eta ~ Uniform(0.5, 4).

- ``recovery``: one dataset (``--n`` birds at density 4, ``--frames``, true eta ``--eta``) fitted
  with ``--simulations``; prints the interval and the time.
- ``calibration``: ``--datasets`` datasets whose true eta is drawn from the prior; the fraction of
  95 % intervals that hold the truth (about 0.95 for a calibrated fit) and the mean width.
- ``couzin``: Couzin's width of the zone of orientation (couzin.delta_r_o, true ``--delta-r-o``,
  prior Uniform(0, 8)) from tracks flocksim made (the couzin preset, ``--n`` individuals in 3D open
  space, 600 steps of burn-in, a frame every second).
- ``starlings``: the alignment weight of the starlings-2d-reference preset (rules.alignment.weight, true
  1.0, prior Uniform(0, 3)) from tracks flocksim made: ``--n`` starlings (default 100) in a 480 x
  270 box, spontaneous turns off, 40 frames 0.1 s apart after 15.6 s; ``--statistic`` (repeatable)
  compares those summary statistics only (default: flocksim fit's).
- ``sensitivity``: how each statistic flocksim fit compares moves with the starlings' alignment
  weight: mean and sd over ``--datasets`` runs (default 4) at weights 0.25 to 3, each run made as a
  fit makes it for the ``starlings`` tracks (no tracks, no fit: simulations only).
- ``regimes``: calibration regime by regime (:data:`REGIMES`: Couzin swarm, torus and parallel, Vicsek
  ordered and disordered, starlings): per regime ``--datasets`` datasets (default 20) whose truth is drawn
  from the regime's range, which is also the fit's prior, each from tracks of a generator written apart from
  the model code the fit runs (:func:`regime_tracks`), fitted with ``--simulations`` (default 40) on one
  Dask client; one CSV row per fit (``--csv``: the truth, median, 95 % interval, whether it holds the truth,
  its width over the prior's, the truth's rank in the posterior, simulations, particles) and a JSON summary
  per regime (coverage, mean width, mean error, correlation of the median with the truth, ranks in
  quarters). Datasets run in the outer loop: a run stopped early has as many datasets of every regime.
- ``libraries``: the same datasets fitted by pyabc's ABC-SMC (what flocksim fit runs) and by ELFI's
  rejection sampler (Lintusaari et al. 2018) with the same statistics and budget (ELFI's distances
  scaled by the median absolute deviation of a pilot of 10 % of the budget); needs elfi installed
  (ELFI 0.8.6 uses ``np.Inf``, removed in NumPy 2: the script puts it back for ELFI's sake).

Usage: python benchmarks/bench_fit.py recovery [--n 400] [--frames 60] [--simulations 200]
       python benchmarks/bench_fit.py calibration [--datasets 20] [--n 64] [--simulations 80]
       python benchmarks/bench_fit.py couzin [--delta-r-o 4] [--n 60] [--simulations 200]
       python benchmarks/bench_fit.py starlings [--n 100] [--simulations 200] [--statistic NAME ...]
       python benchmarks/bench_fit.py sensitivity [--n 100] [--datasets 4]
       python benchmarks/bench_fit.py regimes [--datasets 20] [--simulations 40] [--only REGIME,...] [--csv FILE]
       python benchmarks/bench_fit.py libraries [--datasets 3] [--n 64] [--simulations 100]
Every mode takes ``--distance informative|mad`` (flocksim fit's ``--distance``; default informative) and
``--final-effective N`` (flocksim fit's; default 100; 0 re-makes the tables made before 8 December 2026,
whose last generation was as large as the others).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import numpy as np

from flocksim import __version__
from flocksim.inference import BURN_IN_DURATIONS, BURN_IN_MIN_STEPS, FINAL_EFFECTIVE, fit
from flocksim.sweep.runner import dask_client
from vicsek_tracks import make_vicsek_tracks

PRIOR = (0.5, 4.0)
DENSITY = 4.0
BURN_IN = 1000


def dataset(folder: Path, name: str, n: int, frames: int, eta: float, seed: int) -> tuple[Path, dict]:
    side = float(np.sqrt(n / DENSITY))
    path = make_vicsek_tracks(
        folder / f"{name}.csv", n=n, side=side, eta=eta, frames=frames, burn_in=BURN_IN, seed=seed
    )
    params = {"model": "vicsek", "agents": {"n": n}, "world": {"bounds": {"size": [side, side]}}}
    return path, params


def fit_pyabc(client, path: Path, params: dict, simulations: int, seed: int, distance: str, final: int) -> dict:
    started = time.perf_counter()
    result = fit(path, params, {"vicsek.eta": PRIOR}, simulations=simulations, client=client, seed=seed,
                 distance=distance, final_effective=final)  # fmt: skip
    eta = result.parameters["vicsek.eta"]
    return {"median": eta["median"], "ci95": eta["ci95"], "simulations": result.simulations,
            "wall_s": time.perf_counter() - started}  # fmt: skip


def fit_elfi(path: Path, params: dict, simulations: int, seed: int) -> dict:
    """ELFI rejection ABC on the same statistics: keep the 10 % of runs nearest the tracks."""
    import elfi

    if "Inf" not in np.__dict__:  # ELFI 0.8.6 still uses np.Inf, gone in NumPy 2 (its rejection sampler fails)
        np.Inf = np.inf
    from flocksim.config import to_dict, validate
    from flocksim.inference.statistics import RunPlan, default_statistics, simulate_statistics, statistics_of
    from flocksim.io.tracks import open_tracks

    started = time.perf_counter()
    p = validate(params)
    box = tuple(p.world.bounds.size)
    ds = open_tracks(path, box=",".join(map(str, box)))
    names = default_statistics(True)
    present = ds["present"].values
    time_ = ds["time"].values
    observed = statistics_of(time_, ds["position"].values, ds["velocity"].values, present, box, names, 5)
    burn_in = max(BURN_IN_DURATIONS * (len(time_) - 1), BURN_IN_MIN_STEPS)  # as flocksim fit's default
    plan = RunPlan(to_dict(p), time_, 1, burn_in, present, "central", box, names)
    obs = np.array([observed[k] for k in names])

    def simulate(eta, batch_size=1, random_state=None):
        rs = random_state or np.random
        out = []
        for e in np.atleast_1d(eta):
            s = simulate_statistics(plan, {"vicsek.eta": float(e)}, int(rs.randint(2**31)))
            out.append([s[k] for k in names])
        return np.nan_to_num(np.array(out), nan=1e6)

    pilot_n = max(10, simulations // 10)
    rng = np.random.default_rng(seed)
    pilot = simulate(rng.uniform(*PRIOR, size=pilot_n), random_state=np.random.RandomState(seed))
    scale = np.median(np.abs(pilot - np.median(pilot, axis=0)), axis=0)
    scale[scale == 0] = 1.0
    model = elfi.ElfiModel()
    eta = elfi.Prior("uniform", PRIOR[0], PRIOR[1] - PRIOR[0], model=model, name="eta")
    sim = elfi.Simulator(simulate, eta, observed=obs[None, :], model=model, name="sim")
    summary = elfi.Summary(lambda x: x / scale, sim, model=model, name="scaled")
    distance = elfi.Distance("euclidean", summary, model=model, name="d")
    budget = simulations - pilot_n
    sample = elfi.Rejection(distance, batch_size=1, seed=seed).sample(max(5, budget // 10), n_sim=budget, bar=False)
    x = np.asarray(sample.samples["eta"])
    return {"median": float(np.median(x)), "ci95": [float(np.quantile(x, 0.025)), float(np.quantile(x, 0.975))],
            "simulations": simulations, "wall_s": time.perf_counter() - started}  # fmt: skip


def couzin_tracks(path: Path, delta_r_o: float, n: int, frames: int, seed: int) -> Path:
    """Tracks of flocksim's couzin preset (3D, open space, tau = 0.1 s): a frame every 10 steps
    after 600 steps, as a CSV of frame,id,x,y,z,time."""
    import csv

    from flocksim.config import apply_overrides
    from flocksim.scenarios import load_preset
    from flocksim.simulation import Simulation

    params = apply_overrides(load_preset("couzin"), [f"couzin.delta_r_o={delta_r_o}", f"agents.n={n}"])
    sim = Simulation(params, seed=seed, threads=1)
    sim.step(600)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["frame", "id", "x", "y", "z", "time"])
        for f in range(frames):
            if f:
                sim.step(10)
            for i, p in enumerate(sim.state.position):
                writer.writerow([f, i, *(f"{v:.9g}" for v in p), f"{f:g}"])
    return path


def fit_couzin(args, n: int, frames: int, sims: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        path = couzin_tracks(Path(tmp) / "couzin.csv", args.delta_r_o, n, frames, args.seed)
        started = time.perf_counter()
        result = fit(path, "couzin", {"couzin.delta_r_o": (0.0, 8.0)}, simulations=sims, workers=args.workers,
                     distance=args.distance, final_effective=args.final)  # fmt: skip
    summary = result.parameters["couzin.delta_r_o"]
    lo, hi = summary["ci95"]
    return {"benchmark": "fit couzin", "flocksim": __version__, "distance": args.distance, "truth": args.delta_r_o,
            "birds": n, "frames": frames,
            "parameters": result.parameters, "covered": lo <= args.delta_r_o <= hi, "width": hi - lo,
            "simulations": result.simulations, "wall_s": time.perf_counter() - started}  # fmt: skip


STARLINGS = ["world.bounds.size=[480,270]", "turning.enabled=false"]


def fit_starlings(args, n: int, sims: int) -> dict:
    """rules.alignment.weight of starlings-2d-reference from tracks of the preset at weight 1."""
    import csv

    from flocksim.config import apply_overrides
    from flocksim.scenarios import load_preset
    from flocksim.simulation import Simulation

    frames, every = 40, 6  # 0.1 s at dt = 1/60 s
    params = apply_overrides(load_preset("starlings-2d-reference"), [*STARLINGS, f"agents.n={n}"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "starlings.csv"
        sim = Simulation(apply_overrides(params, ["rules.alignment.weight=1.0"]), seed=args.seed, threads=1)
        sim.step(4 * every * (frames - 1))
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["frame", "id", "x", "y", "time"])
            for f in range(frames):
                if f:
                    sim.step(every)
                for i, p in enumerate(sim.state.position):
                    writer.writerow([f, i, *(f"{v:.9g}" for v in p), f"{f * 0.1:.6g}"])
        started = time.perf_counter()
        result = fit(path, params, {"rules.alignment.weight": (0.0, 3.0)}, simulations=sims, workers=args.workers,
                     statistics=args.statistic, distance=args.distance, final_effective=args.final)  # fmt: skip
    lo, hi = result.parameters["rules.alignment.weight"]["ci95"]
    return {"benchmark": "fit starlings", "flocksim": __version__, "distance": args.distance, "truth": 1.0,
            "birds": n, "frames": frames,
            "statistics": result.statistics["observed"], "seed": result.provenance["seed"],
            "parameters": result.parameters, "covered": lo <= 1.0 <= hi, "width": hi - lo,
            "simulations": result.simulations, "wall_s": time.perf_counter() - started}  # fmt: skip


SENSITIVITY_WEIGHTS = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)


def starlings_sensitivity(n: int, runs: int) -> dict:
    """Mean and sd of every fit statistic over ``runs`` seeds at each of :data:`SENSITIVITY_WEIGHTS`,
    for runs made as a fit to the ``starlings`` tracks makes them (40 frames 0.1 s apart, 6 steps
    per frame, burn-in 4 x the duration)."""
    from flocksim.config import apply_overrides, to_dict
    from flocksim.inference.statistics import STATISTICS, RunPlan, simulate_statistics
    from flocksim.scenarios import load_preset

    frames, every = 40, 6
    params = apply_overrides(load_preset("starlings-2d-reference"), [*STARLINGS, f"agents.n={n}"])
    box = tuple(params.world.bounds.size) if params.world.bounds.kind == "periodic" else ()
    present = np.ones((frames, n), dtype=bool)
    burn_in = max(BURN_IN_DURATIONS * every * (frames - 1), BURN_IN_MIN_STEPS)
    plan = RunPlan(to_dict(params), np.arange(frames) * 0.1, every, burn_in, present, "central", box, STATISTICS)
    table = {}
    for w in SENSITIVITY_WEIGHTS:
        rows = [simulate_statistics(plan, {"rules.alignment.weight": w}, seed) for seed in range(runs)]
        table[str(w)] = {k: [float(np.mean([r[k] for r in rows])), float(np.std([r[k] for r in rows]))]
                         for k in STATISTICS}  # fmt: skip
    return {"benchmark": "fit sensitivity", "flocksim": __version__, "birds": n, "runs_per_weight": runs,
            "mean_sd": table}  # fmt: skip


def covered(ci: list[float], truth: float) -> bool:
    return ci[0] <= truth <= ci[1]


# The regimes of ``regimes`` (docs/fitting.md, "Calibration regime by regime"): the parameter fitted, the
# prior (the regime's range: each dataset's truth is drawn from it, so the posterior's rank of the truth is
# uniform for a calibrated fit), and the birds; the tracks come from a generator written apart from the
# model code the fit runs (:func:`regime_tracks`).
REGIMES = {
    "couzin-swarm": ("couzin.delta_r_o", (0.0, 0.15), 50),
    "couzin-torus": ("couzin.delta_r_o", (0.4, 1.5), 50),
    "couzin-parallel": ("couzin.delta_r_o", (3.0, 8.0), 50),
    "vicsek-ordered": ("vicsek.eta", (0.5, 1.5), 64),
    "vicsek-disordered": ("vicsek.eta", (4.0, 5.5), 64),
    "starlings": ("rules.alignment.weight", (1.0, 5.0), 40),
}
REGIME_FRAMES = 30
REGIME_COLUMNS = [
    "regime", "parameter", "prior_low", "prior_high", "dataset", "seed", "truth", "median", "ci_low", "ci_high",
    "covered", "width_ratio", "rank", "simulations", "particles", "effective_particles",
]  # fmt: skip


def regime_truth(regime: str, dataset: int, seed: int) -> float:
    """Dataset ``dataset``'s true value in ``regime``: uniform over the regime's range, from its own stream."""
    _, (lo, hi), _ = REGIMES[regime]
    return float(np.random.default_rng([seed, list(REGIMES).index(regime), dataset]).uniform(lo, hi))


def write_xyz_csv(path: Path, frames: list[np.ndarray], dt: float) -> Path:
    """(n, 3) positions per frame as a CSV of frame,id,x,y,z,time [s]."""
    import csv

    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["frame", "id", "x", "y", "z", "time"])
        for f, frame in enumerate(frames):
            for i, p in enumerate(frame):
                writer.writerow([f, i, *(f"{v:.9g}" for v in p), f"{f * dt:.6g}"])
    return path


def regime_params(regime: str) -> dict:
    """The fixed parameters the fit of ``regime`` assumes (the model's, the tracks' birds)."""
    from flocksim.config import apply_overrides, to_dict
    from flocksim.scenarios import load_preset

    key, _, n = REGIMES[regime]
    if key == "vicsek.eta":
        side = float(np.sqrt(n / DENSITY))
        return {"model": "vicsek", "agents": {"n": n}, "world": {"bounds": {"size": [side, side]}}}
    if key == "couzin.delta_r_o":
        return to_dict(apply_overrides(load_preset("couzin"), [f"agents.n={n}"]))
    from flocksim.validate.starlings import PRESET, QUIET

    return to_dict(apply_overrides(load_preset(PRESET), [f"agents.n={n}", *QUIET]))


def regime_tracks(folder: Path, regime: str, truth: float, seed: int) -> Path:
    """Tracks of ``regime`` at ``truth`` from a generator written apart from the model code the fit runs,
    settled for as many steps as the fit's runs (BURN_IN_DURATIONS x the tracks' duration, at least
    BURN_IN_MIN_STEPS):

    - Vicsek: tests/vicsek_tracks.py (plain NumPy), 64 particles at density 4, one frame a second;
    - Couzin: flocksim.validate.reference.couzin_numpy (plain NumPy, written from Couzin et al. 2002;
      validate's couzin-reference), 3D open space, a frame every second (10 steps);
    - starlings: flocksim.validate.reference.starling_numpy (plain NumPy banked flight; validate's
      starling checks), starlings-3d with the urges off, a frame every 0.1 s (6 steps); its start
      (positions and velocities) is flocksim's initial state of the preset, the flight from there the
      reference's.
    """
    key, _, n = REGIMES[regime]
    path = folder / f"{regime}-{seed}.csv"
    if key == "vicsek.eta":
        side = float(np.sqrt(n / DENSITY))
        burn_in = max(BURN_IN_DURATIONS * (REGIME_FRAMES - 1), BURN_IN_MIN_STEPS)
        return make_vicsek_tracks(path, n=n, side=side, eta=truth, frames=REGIME_FRAMES, burn_in=burn_in, seed=seed)
    if key == "couzin.delta_r_o":
        from flocksim.validate.reference.couzin_numpy import CouzinReference

        every = 10
        run = CouzinReference(n, seed, truth)
        for _ in range(max(BURN_IN_DURATIONS * every * (REGIME_FRAMES - 1), BURN_IN_MIN_STEPS)):
            run.step()
        frames = [run.c.copy()]
        for _ in range(REGIME_FRAMES - 1):
            for _ in range(every):
                run.step()
            frames.append(run.c.copy())
        return write_xyz_csv(path, frames, every * 0.1)
    from dataclasses import replace

    from flocksim.config import validate
    from flocksim.simulation import Simulation
    from flocksim.validate.reference import starling_numpy as ref

    every = 6
    start = Simulation(validate(regime_params(regime)), seed=seed, threads=1).state
    burn_in = max(BURN_IN_DURATIONS * every * (REGIME_FRAMES - 1), BURN_IN_MIN_STEPS)
    out = ref.run(start.position.copy(), start.velocity.copy(), np.zeros(n), burn_in + every * (REGIME_FRAMES - 1),
                  replace(ref.PRESET, w_ali=truth), every=every)  # fmt: skip
    skip = burn_in // every
    assert burn_in % every == 0
    return write_xyz_csv(path, [o[0] for o in out[skip:]], every * ref.PRESET.dt)


def weighted_rank(samples: np.ndarray, weights: np.ndarray, truth: float) -> float:
    """The posterior's weight below ``truth`` (half the weight of particles equal to it): uniform on
    [0, 1] over datasets whose truth is drawn from the prior, for a calibrated posterior (simulation-based
    calibration's rank, normalised)."""
    below = float(np.sum(weights[samples < truth])) + 0.5 * float(np.sum(weights[samples == truth]))
    return below / float(np.sum(weights))


def fit_regime(
    client, folder: Path, regime: str, dataset: int, seed: int, sims: int, population: int | None, final: int
) -> dict:
    """One dataset of ``regime``: its tracks, the fit, the row of REGIME_COLUMNS (and wall_s)."""
    key, (lo, hi), _ = REGIMES[regime]
    truth = regime_truth(regime, dataset, seed)
    data_seed = seed * 1000 + dataset
    path = regime_tracks(folder, regime, truth, data_seed)
    started = time.perf_counter()
    result = fit(path, regime_params(regime), {key: (lo, hi)}, simulations=sims, population=population,
                 client=client, seed=data_seed, final_effective=final)  # fmt: skip
    summary = result.parameters[key]
    support = result.interval()
    samples = result.posterior.samples[:, 0]
    row = {
        "regime": regime, "parameter": key, "prior_low": lo, "prior_high": hi, "dataset": dataset,
        "seed": data_seed, "truth": truth, "median": summary["median"], "ci_low": summary["ci95"][0],
        "ci_high": summary["ci95"][1], "covered": covered(summary["ci95"], truth),
        "width_ratio": result.identifiability()[key]["width_ratio"],
        "rank": weighted_rank(samples, result.posterior.weights, truth), "simulations": result.simulations,
        "particles": support["particles"], "effective_particles": support["effective_particles"],
    }  # fmt: skip
    return {**row, "wall_s": time.perf_counter() - started}


def regime_summary(rows: list[dict]) -> dict:
    """Per regime: coverage, mean width over the prior's, mean |median - truth| over the prior's width,
    the correlation of the median with the truth, and the ranks' counts in quarters."""
    out = {}
    for regime in REGIMES:
        got = [r for r in rows if r["regime"] == regime]
        if not got:
            continue
        truth = np.array([r["truth"] for r in got])
        median = np.array([r["median"] for r in got])
        width = got[0]["prior_high"] - got[0]["prior_low"]
        ranks = np.array([r["rank"] for r in got])
        out[regime] = {
            "datasets": len(got),
            "covered": int(sum(r["covered"] for r in got)),
            "mean_width_ratio": float(np.mean([r["width_ratio"] for r in got])),
            "mean_abs_error_over_prior": float(np.mean(np.abs(median - truth)) / width),
            "median_truth_correlation": float(np.corrcoef(truth, median)[0, 1]) if len(got) > 2 else None,
            "rank_quarters": [int(np.sum((ranks >= q / 4) & (ranks < (q + 1) / 4 + (q == 3)))) for q in range(4)],
            "mean_simulations": float(np.mean([r["simulations"] for r in got])),
            "mean_effective_particles": float(np.mean([r["effective_particles"] for r in got])),
            "mean_wall_s": float(np.mean([r["wall_s"] for r in got])) if "wall_s" in got[0] else None,
        }
    return out


def run_regimes(args) -> None:
    """``regimes``: every regime (or ``--only``), ``--datasets`` each; rows as CSV to ``--csv`` (appended
    as they come), the summary as JSON on standard output."""
    import csv

    only = args.only.split(",") if args.only else list(REGIMES)
    unknown = [r for r in only if r not in REGIMES]
    if unknown:
        raise SystemExit(f"--only: {unknown}; allowed: {', '.join(REGIMES)}")
    count = args.datasets or 20
    sims = args.simulations or 40
    rows = []
    started = time.perf_counter()
    with contextlib.ExitStack() as stack:
        out = sys.stdout if args.csv == "-" else None
        if args.csv and args.csv != "-":
            out = stack.enter_context(open(args.csv, "w", newline="", encoding="utf-8"))
        writer = csv.DictWriter(out, REGIME_COLUMNS, extrasaction="ignore", lineterminator="\n") if out else None
        if writer:
            writer.writeheader()
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        client = stack.enter_context(dask_client(None, args.workers, 1))
        for dataset in range(args.first, args.first + count):
            for regime in only:
                row = fit_regime(client, Path(tmp), regime, dataset, args.seed, sims, args.population, args.final)
                rows.append(row)
                if writer:
                    writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
                    out.flush()
                print(json.dumps(row), file=sys.stderr, flush=True)
    report = {
        "benchmark": "fit regimes", "flocksim": __version__, "machine": platform.machine(), "cpus": os.cpu_count(),
        "workers": args.workers, "frames": REGIME_FRAMES, "simulations": sims, "population": args.population,
        "final_effective": args.final,
        "datasets": count, "summary": regime_summary(rows), "wall_s": time.perf_counter() - started,
    }  # fmt: skip
    print(json.dumps(report, indent=1), file=sys.stderr if args.csv == "-" else sys.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = ["recovery", "calibration", "libraries", "couzin", "starlings", "sensitivity", "regimes"]
    parser.add_argument("mode", choices=modes)
    parser.add_argument("--n", type=int, default=None, help="birds (default: 400 recovery, 64 otherwise)")
    parser.add_argument("--frames", type=int, default=None, help="frames (default: 60 recovery, 30 otherwise)")
    parser.add_argument("--simulations", type=int, default=None, help="budget per fit (default 200 / 80 / 100 / 40)")
    parser.add_argument("--datasets", type=int, default=None, help="datasets (default 20 calibration, 3 libraries)")
    parser.add_argument("--eta", type=float, default=2.0, help="true eta of the recovery dataset")
    parser.add_argument("--delta-r-o", type=float, default=4.0, help="true couzin.delta_r_o of the couzin mode")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--statistic", action="append", default=None, help="starlings: a summary statistic to compare (repeatable)"
    )
    parser.add_argument(
        "--distance", choices=["informative", "mad"], default="informative", help="the fit's distance (flocksim fit's)"
    )
    parser.add_argument("--only", default=None, help="regimes: REGIME[,REGIME...] (default: every one)")
    parser.add_argument("--first", type=int, default=0, help="regimes: the first dataset's number")
    parser.add_argument("--population", type=int, default=None, help="regimes: particles per generation")
    parser.add_argument(
        "--final-effective", dest="final", type=int, default=FINAL_EFFECTIVE,
        help="flocksim fit's --final-effective (0: the last generation as large as the others, as before 8 Dec 2026)",
    )  # fmt: skip
    parser.add_argument("--csv", default=None, help="regimes: write the rows to this CSV ('-': standard output)")
    args = parser.parse_args()
    if args.mode == "regimes":
        run_regimes(args)
        return
    recovery = args.mode == "recovery"
    if args.mode == "couzin":
        print(json.dumps(fit_couzin(args, args.n or 60, args.frames or 30, args.simulations or 200), indent=1))
        return
    if args.mode == "sensitivity":
        print(json.dumps(starlings_sensitivity(args.n or 100, args.datasets or 4), indent=1))
        return
    if args.mode == "starlings":
        print(json.dumps(fit_starlings(args, args.n or 100, args.simulations or 200), indent=1))
        return
    n = args.n or (400 if recovery else 64)
    frames = args.frames or (60 if recovery else 30)
    sims = args.simulations or {"recovery": 200, "calibration": 80, "libraries": 100}[args.mode]
    count = 1 if recovery else (args.datasets or (20 if args.mode == "calibration" else 3))
    rng = np.random.default_rng(args.seed)
    truths = [args.eta] if recovery else [float(v) for v in rng.uniform(*PRIOR, size=count)]
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, dask_client(None, args.workers, 1) as client:
        for i, truth in enumerate(truths):
            path, params = dataset(Path(tmp), f"d{i}", n, frames, truth, args.seed + i)
            row = {"truth": truth, "pyabc": fit_pyabc(client, path, params, sims, args.seed + i, args.distance,
                                                      args.final)}  # fmt: skip
            if args.mode == "libraries":
                row["elfi"] = fit_elfi(path, params, sims, args.seed + i)
            for lib in ("pyabc", "elfi"):
                if lib in row:
                    r = row[lib]
                    r["covered"] = covered(r["ci95"], truth)
                    r["width"] = r["ci95"][1] - r["ci95"][0]
                    r["abs_error"] = abs(r["median"] - truth)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    summary = {}
    for lib in ("pyabc", "elfi"):
        got = [r[lib] for r in rows if lib in r]
        if got:
            summary[lib] = {
                "coverage": float(np.mean([g["covered"] for g in got])),
                "mean_width": float(np.mean([g["width"] for g in got])),
                "mean_abs_error": float(np.mean([g["abs_error"] for g in got])),
                "mean_simulations": float(np.mean([g["simulations"] for g in got])),
                "mean_wall_s": float(np.mean([g["wall_s"] for g in got])),
            }
    print(json.dumps({
        "benchmark": f"fit {args.mode}", "flocksim": __version__, "distance": args.distance,
        "machine": platform.machine(),
        "cpus": os.cpu_count(), "workers": args.workers, "birds": n, "frames": frames, "simulations": sims,
        "datasets": count, "summary": summary, "rows": rows, "wall_s": time.perf_counter() - started,
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
