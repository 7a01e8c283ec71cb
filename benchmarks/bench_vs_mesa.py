"""flocksim against Mesa 3's boid_flockers example, from the same initial state.

What is compared. Mesa ships ``mesa.examples.basic.boid_flockers`` (``BoidFlockers`` model,
``Boid`` agent on ``mesa.experimental.continuous_space.ContinuousSpace``, torus). Its rule is
the cross-framework Flocking benchmark that flocksim's ``abm-flocking`` model implements:
neighbours within ``vision`` (inclusive, minimum image), cohere = sum of offsets to them,
separate = minus the sum of offsets closer than ``separation`` (strict), match = sum of
their directions, each times its factor (0.03 / 0.015 / 0.05) and divided by the neighbour
count; direction <- normalize(direction + that); position += speed * direction, wrapped.
On the Mesa side the timed step is ``model.step()`` exactly as shipped (Mesa 3.3.1, pinned
in benchmarks/requirements-mesa.txt): agents activated in random order, each scanning all
agents' distances with NumPy, then the model's per-step heading/angle bookkeeping. On the
flocksim side it is ``Simulation.step()`` of the ``flocksim bench`` abm-flocking workload
(``flocksim.bench.abm_workload(2, n)``) with its default engine and neighbour search.

Why it is fair.

- Same parameters: by default (``--space workload``) both run flocksim's benchmark workload
  at size N (periodic square of side ``abm_side(2, n)``, vision 15, separation 1, speed 1,
  the factors above: about 12.6 neighbours per bird); ``--space example`` uses the Mesa
  example's own defaults instead (100 x 100 torus, vision 10, separation 2) on both sides.
- Same start: the Mesa model is built with those parameters and its agents' positions and
  directions are then overwritten with the flocksim Simulation's seeded initial state (unit
  headings; Mesa's own start uses non-unit directions).
- Same work per step: each side advances every bird once per step, and both time the same
  window of steps (``--warmup`` untimed steps from the common start, then ``--steps`` timed
  ones; flocks tighten as they form, so a later window would have more neighbours per
  bird). ``mean_neighbors`` at the window's end is reported for both (flocksim: its
  neighbour list; Mesa: the average length of the boids' ``neighbors`` lists) so the loads
  can be compared.
- The one rule difference: Mesa updates agents one after another in random order (each
  reads the positions already moved this step), flocksim synchronously (every bird reads
  step t). That changes the trajectory, not the cost, so the two runs are not compared
  number by number.
- Both sides are timed warm: Mesa in a fresh process after its ``--warmup`` untimed steps;
  flocksim after its kernels are compiled or loaded from the numba cache (reported
  separately as ``flocksim_compile_s``). Mesa's window runs once (it is slow);
  flocksim's, a few milliseconds or less, is replayed ``--flocksim-rounds`` times from a
  checkpoint for a stable median. flocksim runs with ``--threads`` (default
  NUMBA_NUM_THREADS or all cores); Mesa is single-threaded Python.

How. Mesa is not a dependency of flocksim: this script creates a separate virtual
environment (``--mesa-venv``, default benchmarks/.venv-mesa, gitignored) on first use,
installs benchmarks/requirements-mesa.txt into it (network needed once), and runs the Mesa
side there as a subprocess (this same file with ``--mesa-worker``) that reads the initial
state from a temporary .npz file and prints JSON. ``--mesa-python PY`` uses an existing
interpreter that has Mesa instead. The flocksim side runs in this process.

Usage: python benchmarks/bench_vs_mesa.py [--n 100 1000] [--steps 10] [--threads 2]
Prints one JSON object per N (one per line). No timing is asserted.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements-mesa.txt"
DEFAULT_VENV = HERE / ".venv-mesa"
EXAMPLE_SPACE = {"side": 100.0, "vision": 10.0, "separation": 2.0}
"""Mesa's BoidFlockers defaults (``--space example``)."""


# ---------------------------------------------------------------- Mesa side (runs in the Mesa venv)


def mesa_worker(state_file: str) -> int:
    """Time Mesa's BoidFlockers from the state in ``state_file``; print one JSON object."""
    import mesa
    from mesa.examples.basic.boid_flockers.model import BoidFlockers

    data = np.load(state_file)
    position, heading = data["position"], data["heading"]
    side, steps, warmup = float(data["side"]), int(data["steps"]), int(data["warmup"])
    n = position.shape[0]
    model = BoidFlockers(
        population_size=n,
        width=side,
        height=side,
        speed=float(data["speed"]),
        vision=float(data["vision"]),
        separation=float(data["separation"]),
        cohere=float(data["cohere"]),
        separate=float(data["separate"]),
        match=float(data["match"]),
        seed=int(data["seed"]),
    )
    # the same start as flocksim: agents are stored in creation order (space index = row)
    model.space.agent_positions[:] = position
    for row, agent in enumerate(model.space.active_agents):
        agent.direction = heading[row].copy()
    model.update_average_heading()
    model.calculate_angles()

    for _ in range(warmup):
        model.step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        model.step()
        times.append((time.perf_counter() - t0) * 1e3)
    print(
        json.dumps(
            {
                "mesa_ms_per_step_median": statistics.median(times),
                "mesa_ms_per_step_min": min(times),
                "mesa_steps_timed": steps,
                "mesa_mean_neighbors": sum(len(a.neighbors) for a in model.agents) / n if n else 0.0,
                "mesa_version": mesa.__version__,
                "mesa_python": platform.python_version(),
            }
        )
    )
    return 0


# ---------------------------------------------------------------- driver (runs in flocksim's venv)


def ensure_mesa_venv(venv: Path) -> Path:
    """The venv's python, created and filled from requirements-mesa.txt unless already done."""
    python = venv / "bin" / "python"
    stamp = venv / ".requirements-installed"
    wanted = REQUIREMENTS.read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    print(f"bench_vs_mesa: installing {REQUIREMENTS.name} into {venv} (once)", file=sys.stderr)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, stdout=sys.stderr)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)], check=True, stdout=sys.stderr
    )
    stamp.write_text(wanted)
    return python


def flocksim_params(n: int, space: str, seed: int):
    from flocksim.bench import abm_workload
    from flocksim.config import to_dict, validate

    params = abm_workload(2, n, "metric", seed=seed)
    if space == "example":
        d = to_dict(params)
        d["world"]["bounds"]["size"] = [EXAMPLE_SPACE["side"]] * 2
        d["flocking"]["vision"] = EXAMPLE_SPACE["vision"]
        d["flocking"]["separation"] = EXAMPLE_SPACE["separation"]
        d["description"] = f"Mesa boid_flockers defaults, N = {n}"
        params = validate(d)
    return params


def run_case(n: int, args: argparse.Namespace, mesa_python: str) -> dict:
    import numba

    from flocksim.simulation import Simulation

    params = flocksim_params(n, args.space, args.seed)
    sim = Simulation(params, threads=args.threads)
    f = params.flocking
    side = float(params.world.bounds.size[0])
    velocity = sim.state.velocity
    heading = velocity / np.linalg.norm(velocity, axis=1, keepdims=True)

    with tempfile.TemporaryDirectory() as tmp:
        state_file = str(Path(tmp) / "state.npz")
        np.savez(
            state_file,
            position=sim.state.position,
            heading=heading,
            side=side,
            speed=f.speed,
            vision=f.vision,
            separation=f.separation,
            cohere=f.cohere_factor,
            separate=f.separate_factor,
            match=f.match_factor,
            seed=args.seed,
            steps=args.steps,
            warmup=args.warmup,
        )
        done = subprocess.run(
            [mesa_python, str(Path(__file__).resolve()), "--mesa-worker", state_file],
            check=True,
            capture_output=True,
            text=True,
        )
    mesa = json.loads(done.stdout.strip().splitlines()[-1])

    # the same window as Mesa's (steps warmup+1 .. warmup+steps from the common start),
    # replayed --flocksim-rounds times through checkpoint / restore
    compile_s = sim.warm_up()
    start = sim.checkpoint()
    times = []
    for _ in range(args.flocksim_rounds):
        sim.restore(start)
        sim.step(args.warmup)
        for _ in range(args.steps):
            t0 = time.perf_counter()
            sim.step(1)
            times.append((time.perf_counter() - t0) * 1e3)
    f_median = statistics.median(times)
    return {
        "workload": "abm-flocking" if args.space == "workload" else "boid_flockers-defaults",
        "dim": 2,
        "n": n,
        "side": side,
        "vision": f.vision,
        "separation": f.separation,
        "window": [args.warmup, args.warmup + args.steps],
        "threads": args.threads if args.threads is not None else numba.get_num_threads(),
        "flocksim_ms_per_step_median": f_median,
        "flocksim_ms_per_step_min": min(times),
        "flocksim_steps_timed": len(times),
        "flocksim_compile_s": compile_s,
        "flocksim_mean_neighbors": float(sim.neighbors().counts.mean()) if n else 0.0,
        **mesa,
        "ratio": mesa["mesa_ms_per_step_median"] / f_median,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--n", type=int, nargs="+", default=[100, 1000], help="flock sizes, one JSON line each")
    parser.add_argument(
        "--space",
        choices=("workload", "example"),
        default="workload",
        help="workload: flocksim's abm-flocking benchmark sizes; example: Mesa's defaults (100x100, vision 10)",
    )
    parser.add_argument("--steps", type=int, default=10, help="timed steps (the same window on both sides)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps before the window (each side)")
    parser.add_argument("--flocksim-rounds", type=int, default=20, help="times flocksim replays the window")
    parser.add_argument("--threads", type=int, default=None, help="flocksim threads (default: numba's)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mesa-venv", type=Path, default=DEFAULT_VENV, help="venv for Mesa (created on demand)")
    parser.add_argument("--mesa-python", default=None, help="use this interpreter (with Mesa) instead of --mesa-venv")
    parser.add_argument("--mesa-worker", metavar="STATE_NPZ", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.mesa_worker:
        return mesa_worker(args.mesa_worker)
    if min(args.n) < 2 or args.steps < 1 or args.flocksim_rounds < 1:
        parser.error("--n >= 2, --steps >= 1 and --flocksim-rounds >= 1")
    mesa_python = args.mesa_python or str(ensure_mesa_venv(args.mesa_venv))
    for n in args.n:
        try:
            row = run_case(n, args, mesa_python)
        except subprocess.CalledProcessError as e:
            print(f"bench_vs_mesa: the Mesa side failed (N = {n}):\n{e.stderr}", file=sys.stderr)
            return 1
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
