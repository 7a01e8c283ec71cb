"""Vicsek near the transition: flocksim against the NumPy reference with many seeds and long runs.

One (N, eta) point of the Vicsek model (rho = 4, v0 = 0.03, r = 1, the paper's update), run by
flocksim (:func:`flocksim.validate.vicsek.vicsek_params`, its own random streams) and by the
independent reference (:mod:`flocksim.validate.reference.vicsek_numpy`) for seeds 0 .. seeds - 1
each: ``relax`` steps from a random start, then ``windows`` windows of ``window`` steps, v_a
sampled every ``every`` steps and averaged per window. One CSV row per side, seed and window
(docs/results/validation/vicsek-transition.csv), so the drift between early and late windows
shows whether the runs have relaxed, and a cheap slice (the first window of one seed) re-makes.

    python -m flocksim.validate.transition --seeds 24 --csv docs/results/validation/vicsek-transition.csv

prints, per side, the mean of the per-seed v_a with its standard error and the difference with
Welch's z, over all windows and over the first and second half of them.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from flocksim.validate.curves import write_csv

COLUMNS = ("side", "n", "eta", "relax", "window", "every", "seed", "index", "v_a")
MAX_SEEDS = 1000
MAX_STEPS = 10_000_000


@dataclass(frozen=True)
class TransitionProtocol:
    """The point and the run lengths [steps]."""

    n: int = 1000
    eta: float = 4.0
    relax: int = 2000
    window: int = 2000
    windows: int = 5
    every: int = 10

    def check(self) -> None:
        """ValueError naming the field when a size is out of range (checked before any run)."""
        if not 40 <= self.n <= 100_000:
            raise ValueError(f"--n: {self.n} is out of range; allowed: 40 to 100000")
        if not 0.0 <= self.eta <= 2 * math.pi:
            raise ValueError(f"--eta: {self.eta} is out of range; allowed: 0 to 2 pi")
        if not (1 <= self.every <= self.window and self.window % self.every == 0):
            raise ValueError(f"--every: {self.every} must divide --window ({self.window}); allowed: 1 to the window")
        if self.relax < 0 or self.windows < 1 or self.relax + self.window * self.windows > MAX_STEPS:
            raise ValueError(f"--relax/--window/--windows: at most {MAX_STEPS:,} steps in all; allowed: fewer")


def flocksim_windows(p: TransitionProtocol, seed: int) -> Iterator[float]:
    """flocksim's v_a per window of one run."""
    from flocksim.validate.runs import averaged_order, simulation
    from flocksim.validate.vicsek import vicsek_params

    sim = simulation(vicsek_params(p.n, p.eta), seed)
    sim.step(p.relax)
    for _ in range(p.windows):
        yield averaged_order(sim, p.window, p.every)[0]


def reference_windows(p: TransitionProtocol, seed: int) -> Iterator[float]:
    """The NumPy reference's v_a per window of one run (its own seeding)."""
    from flocksim.validate.reference.vicsek_numpy import VicsekReference

    run = VicsekReference(p.n, p.eta, seed)
    for _ in range(p.relax):
        run.step()
    for _ in range(p.windows):
        samples = []
        for _ in range(p.window // p.every):
            for _ in range(p.every):
                run.step()
            samples.append(run.order())
        yield float(np.mean(samples))


SIDES = {"flocksim": flocksim_windows, "reference": reference_windows}


def run_rows(p: TransitionProtocol, side: str, seed: int) -> list[dict[str, object]]:
    """The rows of one run (one per window)."""
    fields = (side, p.n, p.eta, p.relax, p.window, p.every, seed)
    return [dict(zip(COLUMNS, (*fields, k, v), strict=True)) for k, v in enumerate(SIDES[side](p, seed))]


def write_rows(path: Path, rows: list[dict[str, object]]) -> None:
    """The CSV, every float with all its digits, written whole or not at all."""
    write_csv(path, COLUMNS, rows)


def seed_means(rows: list[dict[str, object]], side: str, windows: range | None = None) -> np.ndarray:
    """Per-seed mean v_a of ``side`` over the windows ``windows`` (default: all), seeds in order."""
    per_seed: dict[int, list[float]] = {}
    for r in rows:
        if r["side"] == side and (windows is None or int(r["index"]) in windows):
            per_seed.setdefault(int(r["seed"]), []).append(float(r["v_a"]))
    return np.array([np.mean(per_seed[s]) for s in sorted(per_seed)])


def summary(rows: list[dict[str, object]], windows: int) -> list[str]:
    """Lines: per window range, each side's mean +- standard error (seeds) and Welch's z of the difference."""
    half = windows // 2
    lines = []
    for label, chosen in (("all windows", None), ("first half", range(half)), ("second half", range(half, windows))):
        f, r = seed_means(rows, "flocksim", chosen), seed_means(rows, "reference", chosen)
        se_f, se_r = np.std(f, ddof=1) / math.sqrt(len(f)), np.std(r, ddof=1) / math.sqrt(len(r))
        z = (f.mean() - r.mean()) / math.hypot(se_f, se_r)
        lines.append(
            f"{label}: flocksim {f.mean():.4f} +- {se_f:.4f} (sd {np.std(f, ddof=1):.4f}, {len(f)} seeds), "
            f"reference {r.mean():.4f} +- {se_r:.4f} (sd {np.std(r, ddof=1):.4f}, {len(r)} seeds), "
            f"difference {f.mean() - r.mean():+.4f}, z = {z:+.2f}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flocksim.validate.transition", description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=24, help="seeds 0 .. SEEDS - 1 per side")
    parser.add_argument("--n", type=int, default=TransitionProtocol.n)
    parser.add_argument("--eta", type=float, default=TransitionProtocol.eta)
    parser.add_argument("--relax", type=int, default=TransitionProtocol.relax)
    parser.add_argument("--window", type=int, default=TransitionProtocol.window)
    parser.add_argument("--windows", type=int, default=TransitionProtocol.windows)
    parser.add_argument("--every", type=int, default=TransitionProtocol.every)
    parser.add_argument("--csv", type=Path, required=True, help="output CSV (one row per side, seed and window)")
    args = parser.parse_args(argv)
    p = TransitionProtocol(args.n, args.eta, args.relax, args.window, args.windows, args.every)
    try:
        p.check()
        if not 2 <= args.seeds <= MAX_SEEDS:
            raise ValueError(f"--seeds: {args.seeds} is out of range; allowed: 2 to {MAX_SEEDS}")
    except ValueError as exc:
        parser.exit(2, f"error: {exc}\n")
    rows: list[dict[str, object]] = []
    for side in SIDES:
        for seed in range(args.seeds):
            rows += run_rows(p, side, seed)
            print(f"{side} seed {seed}: {np.mean([float(r['v_a']) for r in rows[-p.windows :]]):.4f}", flush=True)
    write_rows(args.csv, rows)
    for line in summary(rows, p.windows):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
