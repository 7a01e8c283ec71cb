"""The stored reference curves: made by the independent NumPy references, read by the checks.

``flocksim validate --make-reference`` runs :mod:`flocksim.validate.reference` for every
protocol of :mod:`flocksim.validate.protocols` and writes one CSV per model into
docs/results/validation/ (one row per run and point, every number with all its digits);
the vicsek and couzin checks compare flocksim's runs with these rows. The files carry their
protocol in every row: rows made with other settings are refused, never silently compared.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from flocksim.atomic import atomic_path
from flocksim.validate.protocols import COUZIN, VICSEK, CouzinProtocol, VicsekProtocol
from flocksim.validate.reference import couzin_numpy, vicsek_numpy

VICSEK_FILE = "vicsek.csv"
COUZIN_FILE = "couzin.csv"
VICSEK_COLUMNS = ("protocol", "n", "relax", "measure", "every", "eta", "seed", "v_a")
COUZIN_COLUMNS = ("protocol", "n", "warmup", "hold", "every", "seed", "ramp", "delta_r_o", "P", "M")
MAKE_COMMAND = "flocksim validate --make-reference --jobs 2"


class ReferenceError(RuntimeError):
    """The stored reference curves are missing or were made with another protocol."""


def default_folder() -> Path:
    """docs/results/validation of the source checkout this package is imported from."""
    return Path(__file__).resolve().parents[3] / "docs" / "results" / "validation"


# ---- making the curves (NumPy references only) -------------------------------------------


def vicsek_run(protocol: VicsekProtocol, eta: float, seed: int) -> dict[str, object]:
    """One reference row: time-averaged v_a of one run."""
    p = protocol
    return _vicsek_row(p, eta, seed, vicsek_numpy.time_averaged_order(p.n, eta, seed, p.relax, p.measure, p.every))


def _vicsek_row(p: VicsekProtocol, eta: float, seed: int, v_a: float) -> dict[str, object]:
    return dict(zip(VICSEK_COLUMNS, (p.name, p.n, p.relax, p.measure, p.every, eta, seed, v_a), strict=True))


def couzin_run(protocol: CouzinProtocol, seed: int) -> list[dict[str, object]]:
    """The reference rows of one ramp: P and M per delta_r_o, up and down."""
    p = protocol
    out = couzin_numpy.ramp(p.n, seed, p.values, p.hold, p.warmup, p.every)
    rows = []
    for ramp in ("up", "down"):
        for k, value in enumerate(p.values):
            fields = (p.name, p.n, p.warmup, p.hold, p.every, seed, ramp, value, out[f"p_{ramp}"][k])
            rows.append(dict(zip(COUZIN_COLUMNS, (*fields, out[f"m_{ramp}"][k]), strict=True)))
    return rows


def _vicsek_task(args: tuple[int, float, int, int, int, int]) -> float:
    n, eta, seed, relax, measure, every = args
    return vicsek_numpy.time_averaged_order(n, eta, seed, relax, measure, every)


def _couzin_task(args: tuple[str, int]) -> list[dict[str, object]]:
    name, seed = args
    return couzin_run(COUZIN[name], seed)


def make_reference(
    folder: Path, models: Iterable[str], jobs: int = 1, on_done: Callable[[str], None] | None = None
) -> list[Path]:
    """Run the references for every protocol of ``models`` ("vicsek", "couzin") on ``jobs`` processes
    and write their CSVs into ``folder`` (each file replaced whole, only when complete)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with ProcessPoolExecutor(max_workers=jobs) if jobs > 1 else _InProcess() as pool:
        if "vicsek" in models:
            cases = [(p, eta, seed) for p in VICSEK.values() for eta in p.etas for seed in range(p.reference_seeds)]
            runs = list(dict.fromkeys((p.n, eta, seed, p.relax, p.measure, p.every) for p, eta, seed in cases))
            v_a = dict(zip(runs, pool.map(_vicsek_task, runs), strict=True))  # a run shared by protocols runs once
            rows = [
                _vicsek_row(p, eta, seed, v_a[(p.n, eta, seed, p.relax, p.measure, p.every)]) for p, eta, seed in cases
            ]
            written.append(write_csv(folder / VICSEK_FILE, VICSEK_COLUMNS, rows))
            if on_done:
                on_done(f"vicsek: {len(runs)} runs")
        if "couzin" in models:
            tasks = [(p.name, seed) for p in COUZIN.values() for seed in range(p.reference_seeds)]
            rows = [row for ramp in pool.map(_couzin_task, tasks) for row in ramp]
            written.append(write_csv(folder / COUZIN_FILE, COUZIN_COLUMNS, rows))
            if on_done:
                on_done(f"couzin: {len(tasks)} ramps")
    return written


class _InProcess:
    """``map`` in this process (``jobs = 1``), with the executor's context-manager interface."""

    map = staticmethod(map)

    def __enter__(self) -> _InProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def write_csv(path: Path, columns: tuple[str, ...], rows: list[dict[str, object]]) -> Path:
    """A CSV of ``rows``, every float with all its digits (repr), written whole or not at all."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: repr(v) if isinstance(v, float) else v for k, v in row.items()})
    with atomic_path(path) as tmp:
        tmp.write_text(text.getvalue(), encoding="utf-8")
    return path


# ---- reading them ------------------------------------------------------------------------


def _read(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise ReferenceError(f"reference curves not found: {path}; make them with: {MAKE_COMMAND}")
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _stale(path: Path, protocol: str, what: str) -> ReferenceError:
    return ReferenceError(
        f"{path}: no complete {protocol!r} reference for {what}: made with another protocol? "
        f"Re-make them with: {MAKE_COMMAND}"
    )


def vicsek_reference(protocol: VicsekProtocol, folder: Path | None = None) -> dict[float, list[float]]:
    """v_a per eta (one value per reference seed, seeds 0, 1, ...) of ``protocol``."""
    path = (folder or default_folder()) / VICSEK_FILE
    p = protocol
    wanted = (p.name, str(p.n), str(p.relax), str(p.measure), str(p.every))
    found: dict[tuple[float, int], float] = {}
    for row in _read(path):
        if tuple(row[k] for k in VICSEK_COLUMNS[:5]) == wanted:
            found[(float(row["eta"]), int(row["seed"]))] = float(row["v_a"])
    out = {}
    for eta in p.etas:
        values = [found.get((eta, seed)) for seed in range(p.reference_seeds)]
        if any(v is None for v in values):
            raise _stale(path, p.name, f"eta = {eta:g}")
        out[eta] = [float(v) for v in values if v is not None]
    return out


def couzin_reference(protocol: CouzinProtocol, folder: Path | None = None) -> dict[str, np.ndarray]:
    """P and M of ``protocol``: keys p_up, m_up, p_down, m_down, each (reference seeds, values)."""
    path = (folder or default_folder()) / COUZIN_FILE
    p = protocol
    wanted = (p.name, str(p.n), str(p.warmup), str(p.hold), str(p.every))
    shape = (p.reference_seeds, len(p.values))
    out = {key: np.full(shape, np.nan) for key in ("p_up", "m_up", "p_down", "m_down")}
    index = {v: k for k, v in enumerate(p.values)}
    for row in _read(path):
        if tuple(row[k] for k in COUZIN_COLUMNS[:5]) != wanted:
            continue
        seed, value = int(row["seed"]), float(row["delta_r_o"])
        if seed < p.reference_seeds and value in index:
            out[f"p_{row['ramp']}"][seed, index[value]] = float(row["P"])
            out[f"m_{row['ramp']}"][seed, index[value]] = float(row["M"])
    if any(np.isnan(a).any() for a in out.values()):
        raise _stale(path, p.name, "the Couzin ramps")
    return out
