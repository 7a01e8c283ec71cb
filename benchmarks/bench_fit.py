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
- ``libraries``: the same datasets fitted by pyabc's ABC-SMC (what flocksim fit runs) and by ELFI's
  rejection sampler (Lintusaari et al. 2018) with the same statistics and budget (ELFI's distances
  scaled by the median absolute deviation of a pilot of 10 % of the budget); needs elfi installed
  (ELFI 0.8.6 uses ``np.Inf``, removed in NumPy 2: the script puts it back for ELFI's sake).

Usage: python benchmarks/bench_fit.py recovery [--n 400] [--frames 60] [--simulations 200]
       python benchmarks/bench_fit.py calibration [--datasets 20] [--n 64] [--simulations 80]
       python benchmarks/bench_fit.py couzin [--delta-r-o 4] [--n 60] [--simulations 200]
       python benchmarks/bench_fit.py starlings [--n 100] [--simulations 200] [--statistic NAME ...]
       python benchmarks/bench_fit.py sensitivity [--n 100] [--datasets 4]
       python benchmarks/bench_fit.py libraries [--datasets 3] [--n 64] [--simulations 100]
Every mode takes ``--distance informative|mad`` (flocksim fit's ``--distance``; default informative).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
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
from flocksim.inference import BURN_IN_DURATIONS, BURN_IN_MIN_STEPS, fit
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


def fit_pyabc(client, path: Path, params: dict, simulations: int, seed: int, distance: str) -> dict:
    started = time.perf_counter()
    result = fit(path, params, {"vicsek.eta": PRIOR}, simulations=simulations, client=client, seed=seed,
                 distance=distance)  # fmt: skip
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
                     distance=args.distance)  # fmt: skip
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
                     statistics=args.statistic, distance=args.distance)  # fmt: skip
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["recovery", "calibration", "libraries", "couzin", "starlings", "sensitivity"])
    parser.add_argument("--n", type=int, default=None, help="birds (default: 400 recovery, 64 otherwise)")
    parser.add_argument("--frames", type=int, default=None, help="frames (default: 60 recovery, 30 otherwise)")
    parser.add_argument("--simulations", type=int, default=None, help="budget per fit (default 200 / 80 / 100)")
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
    args = parser.parse_args()
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
            row = {"truth": truth, "pyabc": fit_pyabc(client, path, params, sims, args.seed + i, args.distance)}
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
