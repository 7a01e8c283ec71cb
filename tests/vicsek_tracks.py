"""Vicsek tracks made without flocksim: plain numpy, brute-force neighbours with the minimum image.

The tests and benchmarks/bench_fit.py fit flocksim's vicsek model to tracks from here, so the fit
is checked on data flocksim did not make. The update is the paper's (Vicsek et al. 1995): each
heading becomes the mean direction of the headings within r (the particle itself included), turned
by a uniform angle in [-eta/2, eta/2]; positions advance with the old heading, x(t+1) = x(t) + v0
dt h(t), and wrap into the box [0, L)^2. The CSV has columns frame,id,x,y,time (time in seconds).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


def vicsek_positions(
    n: int, side: float, eta: float, frames: int, burn_in: int, seed: int, speed: float = 0.03, radius: float = 1.0
) -> np.ndarray:
    """(frames, n, 2) positions in [0, side) after ``burn_in`` steps, one step (dt = 1 s) per frame."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, side, size=(n, 2))
    theta = rng.uniform(-np.pi, np.pi, size=n)
    out = np.empty((frames, n, 2))
    for step in range(burn_in + frames):
        if step >= burn_in:
            out[step - burn_in] = x
        d = x[:, None, :] - x[None, :, :]
        d -= side * np.round(d / side)
        near = (d**2).sum(axis=2) <= radius**2
        mean = np.arctan2(near @ np.sin(theta), near @ np.cos(theta))
        heading = np.stack([np.cos(theta), np.sin(theta)], axis=1)
        x = np.mod(x + speed * heading, side)
        theta = mean + rng.uniform(-eta / 2.0, eta / 2.0, size=n)
    return out


def write_tracks_csv(path: str | Path, positions: np.ndarray, dt: float = 1.0) -> Path:
    """Write (frames, n, 2) positions as a CSV of frame,id,x,y,time [s]."""
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["frame", "id", "x", "y", "time"])
        for f, frame in enumerate(positions):
            for i, (px, py) in enumerate(frame):
                writer.writerow([f, i, f"{px:.9g}", f"{py:.9g}", f"{f * dt:g}"])
    return path


def make_vicsek_tracks(
    path: str | Path, n: int, side: float, eta: float, frames: int = 60, burn_in: int = 200, seed: int = 1
) -> Path:
    """Tracks of an independent Vicsek flock into ``path`` (CSV)."""
    return write_tracks_csv(path, vicsek_positions(n, side, eta, frames, burn_in, seed))


def main() -> None:
    """``python tests/vicsek_tracks.py flock.csv --n 400 --side 10 --eta 2 --frames 100``."""
    import argparse

    parser = argparse.ArgumentParser(description="Write Vicsek tracks made without flocksim (a CSV).")
    parser.add_argument("output", help="CSV to write (frame,id,x,y,time)")
    parser.add_argument("--n", type=int, default=400, help="particles")
    parser.add_argument("--side", type=float, default=10.0, help="side of the periodic box [units]")
    parser.add_argument("--eta", type=float, default=2.0, help="noise width [rad]")
    parser.add_argument("--frames", type=int, default=100, help="frames, one step (1 s) apart")
    parser.add_argument("--burn-in", type=int, default=400, help="steps before the first frame")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    make_vicsek_tracks(args.output, args.n, args.side, args.eta, args.frames, args.burn_in, args.seed)


if __name__ == "__main__":
    main()
