"""Sweep results in Parquet: one tidy row per run, written as the runs finish.

While a sweep runs, finished rows are flushed (at most ``flush_s`` seconds after they
arrive) into a journal folder beside the output, ``<output>.parts/``, one small Parquet
file per flush, each written to a temporary name and renamed, so a sweep killed at any
moment (SIGKILL included) loses at most the rows of the last ``flush_s`` seconds. When the
sweep ends or is interrupted, the journal and any earlier output are merged into the
output file (written to a temporary name, then renamed) and the journal is removed.
``--resume`` reads both the output and a journal left by a killed sweep.

The file's schema metadata key ``flocksim.sweep`` holds JSON: the sweep's fingerprint
(what a row means), name, TOML text, base parameters, and the number of runs.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from flocksim.atomic import OutputError, atomic_path, check_output
from flocksim.config import dumps_toml
from flocksim.sweep.spec import Sweep, SweepError
from flocksim.sweep.task import STATUS_LOST

META_KEY = b"flocksim.sweep"
_ARROW_TYPES = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64(), "str": pa.string()}


def results_schema(sweep: Sweep) -> pa.Schema:
    """Columns: the axes (dotted keys), seed, the summaries, status, error, steps, wall_s,
    compile_s, worker, flocksim_version, task_id."""
    fields = [pa.field(a.key, _ARROW_TYPES[a.arrow_kind]) for a in sweep.spec.axes]
    fields += [pa.field("seed", pa.int64())]
    fields += [pa.field(c, pa.float64()) for c in sweep.summary_columns]
    fields += [
        pa.field("status", pa.string()),
        pa.field("error", pa.string()),
        pa.field("steps", pa.int64()),
        pa.field("wall_s", pa.float64()),
        pa.field("compile_s", pa.float64()),
        pa.field("worker", pa.string()),
        pa.field("flocksim_version", pa.string()),
        pa.field("task_id", pa.string()),
    ]
    meta = {
        "fingerprint": sweep.fingerprint,
        "name": sweep.name,
        "sweep": sweep.to_toml(),
        "base": dumps_toml(sweep.base),
        "runs": sweep.n_tasks,
        "log_axes": [a.key for a in sweep.spec.axes if a.kind == "log"],
    }
    return pa.schema(fields, metadata={META_KEY: json.dumps(meta).encode()})


def sweep_metadata(path: str | Path) -> dict[str, Any]:
    """The ``flocksim.sweep`` metadata of a results file; :class:`SweepError` if it has none."""
    path = Path(path)
    try:
        schema = pq.read_schema(path)
    except (OSError, pa.ArrowException) as exc:
        raise SweepError(f"{path}: not a readable Parquet file ({exc.__class__.__name__}: {exc})") from None
    raw = (schema.metadata or {}).get(META_KEY)
    if raw is None:
        raise SweepError(f"{path}: not a flocksim sweep results file (no {META_KEY.decode()} metadata)")
    return json.loads(raw)


def read_results(path: str | Path) -> pa.Table:
    """A results file as a pyarrow Table (``.to_pandas()`` for a DataFrame)."""
    sweep_metadata(path)
    return pq.read_table(path)


class ResultsStore:
    """Rows of one sweep: those already on disk (for ``--resume``), and new ones.

    ``add`` keeps a row; ``flush`` writes pending rows to the journal; ``finalize`` merges
    everything into the output file. A ``task_id`` is kept once: a row with status
    ``lost`` is replaced by a later row of the same task.
    """

    def __init__(self, sweep: Sweep, path: str | Path, resume: bool = False, force: bool = False, flush_s: float = 1.0):
        self.sweep = sweep
        self.path = Path(path)
        self.parts = self.path.with_name(self.path.name + ".parts")
        self.schema = results_schema(sweep)
        self.flush_s = flush_s
        self._pending: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._part_no = 0
        self._check_output(resume, force)
        target = Path(os.path.realpath(self.path))
        for leftover in target.parent.glob(f".{target.name}.*.tmp"):
            leftover.unlink(missing_ok=True)  # from a sweep killed while writing the output
        self.previous = self._read_previous() if resume else None
        if not resume:
            shutil.rmtree(self.parts, ignore_errors=True)
            if force and self.path.is_file() and not self.path.is_symlink():
                self.path.unlink()  # a link, FIFO or device stays; the results go through it
        self.done: set[str] = set()
        if self.previous is not None:
            status = self.previous.column("status").to_pylist()
            ids = self.previous.column("task_id").to_pylist()
            self.done = {t for t, s in zip(ids, status, strict=True) if s != STATUS_LOST}
        self.parts.mkdir(exist_ok=True)
        self._part_no = len(list(self.parts.glob("part-*.parquet")))

    # --- checks and reading ---------------------------------------------------------------------------

    def _check_output(self, resume: bool, force: bool) -> None:
        path = self.path
        if path.suffix != ".parquet":
            raise SweepError(f"-o: {path} does not end in .parquet; allowed: a path ending in .parquet")
        try:
            check_output("-o", path)
        except OutputError as exc:
            raise SweepError(str(exc)) from None
        if not os.access(path.parent, os.W_OK | os.X_OK):  # the journal of finished rows sits beside it
            raise SweepError(f"-o: directory {path.parent} is not writable")
        if not resume and not force and (path.is_file() or self.parts.exists()):  # a FIFO or device is no clobber
            raise SweepError(
                f"-o: {path} already exists; allowed: --resume to continue that sweep, --force to replace it, "
                "or another path"
            )

    def _read_previous(self) -> pa.Table | None:
        tables = []
        sources = ([self.path] if self.path.is_file() else []) + sorted(self.parts.glob("part-*.parquet"))
        for leftover in self.parts.glob(".*.tmp") if self.parts.is_dir() else []:
            leftover.unlink()
        for source in sources:
            meta = sweep_metadata(source)
            if meta.get("fingerprint") != self.sweep.fingerprint:
                raise SweepError(
                    f"--resume: {source} holds results of a different sweep (its base parameters, axis keys or "
                    "types, steps or summaries differ); allowed: the same sweep (more values or seeds are fine), "
                    "or another -o path"
                )
            tables.append(pq.read_table(source))
        if not tables:
            return None
        return _dedupe(pa.concat_tables([self._conform(t) for t in tables], promote_options="permissive"))

    def _conform(self, table: pa.Table) -> pa.Table:
        """``table`` with this sweep's columns and types (a column missing there becomes null)."""
        columns = []
        for field in self.schema:
            if field.name in table.column_names:
                columns.append(table.column(field.name).cast(field.type))
            else:
                columns.append(pa.nulls(len(table), field.type))
        return pa.Table.from_arrays(columns, schema=self.schema)

    # --- writing --------------------------------------------------------------------------------------

    def add(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        if time.monotonic() - self._last_flush >= self.flush_s:
            self.flush()

    def flush(self) -> None:
        """Write pending rows as one journal file (atomically)."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        table = self._table(self._pending)
        target = self.parts / f"part-{self._part_no:06d}.parquet"
        _write_atomic(table, target)
        self._part_no += 1
        self._pending = []

    def _table(self, rows: Iterable[dict[str, Any]]) -> pa.Table:
        return pa.Table.from_pylist(list(rows), schema=self.schema)

    def finalize(self, order: list[str]) -> pa.Table:
        """Merge earlier output, journal and pending rows into the output file, rows in
        ``order`` of task ids first (the sweep's order) and any others after; remove the journal."""
        self.flush()
        tables = [self.previous] if self.previous is not None else []
        tables += [pq.read_table(p) for p in sorted(self.parts.glob("part-*.parquet"))]
        if not tables:  # nothing ran and nothing was there: leave no file behind
            shutil.rmtree(self.parts, ignore_errors=True)
            return self._table([])
        table = _dedupe(pa.concat_tables([self._conform(t) for t in tables]))
        rank = {tid: i for i, tid in enumerate(order)}
        ids = table.column("task_id").to_pylist()
        indices = sorted(range(len(ids)), key=lambda i: (rank.get(ids[i], len(rank)), i))
        table = table.take(pa.array(indices, type=pa.int64())).replace_schema_metadata(self.schema.metadata)
        _write_atomic(table, self.path)
        shutil.rmtree(self.parts, ignore_errors=True)
        return table


def _dedupe(table: pa.Table) -> pa.Table:
    """Keep one row per task_id: the last one that is not ``lost`` (else the last one)."""
    ids = table.column("task_id").to_pylist()
    status = table.column("status").to_pylist()
    keep: dict[str, int] = {}
    for i, (tid, s) in enumerate(zip(ids, status, strict=True)):
        if tid not in keep or s != STATUS_LOST or status[keep[tid]] == STATUS_LOST:
            keep[tid] = i
    return table.take(pa.array(sorted(keep.values()), type=pa.int64()))


def _write_atomic(table: pa.Table, path: Path) -> None:
    with atomic_path(path, suffix=".tmp") as tmp:
        pq.write_table(table, tmp)
