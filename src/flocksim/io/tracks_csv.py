"""Tracks from plain CSV: one row per bird and frame, columns ``frame,id,x,y[,z][,time]``.

- The header is required and names each column once; allowed names: frame, id, x, y, z, time
  (any order; others are refused, so a misspelt column is never ignored).
- ``frame``: an integer frame number (rows of one frame need not be adjacent); ``id``: the bird's
  name (text); ``x``, ``y`` (``z`` for 3D) [units]; an empty or NaN coordinate means the bird was
  not seen in that frame, as does a missing row. A CSV cannot declare a sentinel value, so values
  that look like one are refused naming the line, never read as a position: an infinite
  coordinate, netCDF's default fill value (:data:`NETCDF_FILL`), and a row whose coordinates are
  all one of :data:`SENTINELS` (-999, -9999, -99999).
- ``time`` (optional) [s]: the frame's time; every row of a frame gives the same time and times
  increase with the frame number. Without it, time is the frame number divided by ``fps`` (or
  counted in frames when no ``fps`` is given).
- Frames missing from the file are frames where no bird was seen (the grid runs from the first
  frame to the last).
- Before it is parsed, the file is scanned in blocks: a NUL byte (binary data), bytes that are
  not UTF-8 or a line longer than :data:`MAX_LINE_BYTES` are refused (naming the line), and its rows are counted against
  :data:`~flocksim.io.resample.MAX_TRACK_VALUES` and the memory the parser will need
  (:data:`CSV_BYTES_PER_ROW` per row).
"""

from __future__ import annotations

import codecs
from pathlib import Path

import numpy as np

from flocksim import readable
from flocksim._extras import require
from flocksim.budgets import BudgetError, check_memory
from flocksim.io.resample import MAX_TRACK_VALUES, UNIFORM_RTOL, Samples, check_track_size

NETCDF_FILL = 9.969209968386869e36
"""netCDF's default fill value of doubles (that of floats reads as the same decimal number)."""
SENTINELS = (-999.0, -9999.0, -99999.0)
"""Values that stand for 'no data' in many tools: a row whose coordinates all hold one is refused."""

REQUIRED = ("frame", "id", "x", "y")
OPTIONAL = ("z", "time")
ALLOWED = REQUIRED + OPTIONAL
MAX_LINE_BYTES = 4096
"""Longest line of a track CSV [bytes]; a row of six numbers takes well under 200."""
CSV_BYTES_PER_ROW = 600
"""Peak memory of parsing one row into text cells and numbers [bytes] (measured with tracemalloc:
docs/reliability.md, "Field data")."""
SCAN_BLOCK = 1 << 20
"""Bytes read at a time by :func:`scan_lines`."""


class CsvTracksError(ValueError):
    """A CSV that is not a track file: one line naming the column (and line) and what is allowed."""


def _refuse_sentinels(coords: np.ndarray, axes: list[str], path: Path) -> None:
    """Refuse netCDF's fill value in any coordinate, and a row whose coordinates are all one of
    :data:`SENTINELS`: one line naming the line and the column(s)."""
    with np.errstate(over="ignore"):  # as written by a float or a double (9.96921e+36 or 9.969209968386869e+36)
        fill = (coords == NETCDF_FILL) | (coords.astype(np.float32) == np.float32(NETCDF_FILL))
    if fill.any():
        row, column = (int(i) for i in np.argwhere(fill)[0])
        raise CsvTracksError(
            f"{path}: line {row + 2}, column {axes[column]!r}: {coords[row, column]:g} is netCDF's fill value (no "
            "data), not a position; allowed: an empty or NaN coordinate for a bird not seen"
        )
    same = np.all(coords == coords[:, :1], axis=1) & np.isin(coords[:, 0], SENTINELS)
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise CsvTracksError(
            f"{path}: line {row + 2}, columns {', '.join(axes)}: all {coords[row, 0]:g}, a missing-data sentinel, not "
            "a position; allowed: an empty or NaN coordinate for a bird not seen"
        )


def _numbers(table, column: str, path: Path) -> np.ndarray:
    """The column as float64; a cell that is not a number raises, naming the line."""
    import pandas as pd

    raw = table[column]
    values = pd.to_numeric(raw, errors="coerce")
    bad = values.isna() & raw.notna() & (raw.astype(str).str.strip().str.lower() != "nan")
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise CsvTracksError(
            f"{path}: line {row + 2}, column {column!r}: {raw.iloc[row]!r} is not a number; allowed: a number"
            + (" or empty (not seen)" if column in ("x", "y", "z") else "")
        )
    return values.to_numpy(dtype=np.float64)


def _bird_names(ids) -> tuple[np.ndarray, np.ndarray]:
    """(names, index of each row's bird): whole-number ids in numeric order (as decimal text),
    other names in text order."""
    import pandas as pd

    numbers = pd.to_numeric(ids, errors="coerce").to_numpy(dtype=np.float64)
    if np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2**53):
        values, bird = np.unique(numbers.astype(np.int64), return_inverse=True)
        return np.array([str(v) for v in values]), bird
    names, bird = np.unique(ids.to_numpy().astype(str), return_inverse=True)
    return names, bird


def scan_lines(path: Path) -> int:
    """Rows after the header line, counted block by block without holding more than a block;
    refuses a NUL byte or a line longer than :data:`MAX_LINE_BYTES` (naming the line)."""
    lines = 0  # newlines before the current block
    length = 0  # bytes of the current line so far
    decoder = codecs.getincrementaldecoder("utf-8")()  # a BOM is UTF-8 too
    try:
        with path.open("rb") as handle:
            while block := handle.read(SCAN_BLOCK):
                nul = block.find(b"\0")
                if nul >= 0:
                    line = lines + block.count(b"\n", 0, nul) + 1
                    raise CsvTracksError(f"{path}: line {line}: a NUL byte (binary data); allowed: CSV text")
                held = len(decoder.getstate()[0])  # bytes of a character cut by the previous block
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as exc:  # exc.start counts from the bytes held back
                    line = lines + block.count(b"\n", 0, max(exc.start - held, 0)) + 1
                    raise CsvTracksError(f"{path}: line {line}: not UTF-8 text; allowed: CSV text in UTF-8") from None
                ends = np.flatnonzero(np.frombuffer(block, dtype=np.uint8) == 10)
                starts = np.concatenate(([-1 - length], ends[:-1]))
                long = np.flatnonzero(ends - starts - 1 > MAX_LINE_BYTES)
                if len(long):
                    _too_long(path, lines + int(long[0]) + 1)
                length = length + len(block) if len(ends) == 0 else len(block) - int(ends[-1]) - 1
                if length > MAX_LINE_BYTES:
                    _too_long(path, lines + len(ends) + 1)
                lines += len(ends)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise CsvTracksError(f"{path}: line {lines + 1}: not UTF-8 text (it ends inside a character)") from None
    except OSError as exc:
        raise CsvTracksError(f"{path}: cannot be read ({exc.strerror})") from None
    rows = max(lines + (length > 0) - 1, 0)
    if rows > MAX_TRACK_VALUES:
        raise BudgetError(
            f"{path}: {readable.count(rows)} rows, more than the budget of {readable.count(MAX_TRACK_VALUES)} rows; "
            "allowed: a shorter file"
        )
    check_memory(rows * CSV_BYTES_PER_ROW, f"{path}: {readable.count(rows)} rows", "allowed: a shorter file")
    return rows


def _table_problem(text: str, columns: int) -> str:
    """The parser's complaint about a table, in words (a row with extra fields is the usual one)."""
    import re

    extra = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", text)
    if extra:
        return f"line {extra.group(2)}: {extra.group(3)} fields; allowed: {columns}, one per header column"
    return "not a CSV table; allowed: rows of comma-separated fields, one per header column"


def _too_long(path: Path, line: int) -> None:
    raise CsvTracksError(
        f"{path}: line {line}: longer than {readable.count(MAX_LINE_BYTES)} bytes; allowed: rows of "
        "frame,id,x,y[,z][,time] (CSV text)"
    )


def _header(path: Path) -> list[str]:
    """The column names of the first line (stripped)."""
    import csv

    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            first = next(csv.reader(handle), None)
    except UnicodeDecodeError:
        raise CsvTracksError(f"{path}: line 1: not UTF-8 text; allowed: CSV text in UTF-8") from None
    except OSError as exc:
        raise CsvTracksError(f"{path}: cannot be read ({exc.strerror})") from None
    except csv.Error:
        raise CsvTracksError(f"{path}: line 1: not a CSV header line; allowed: frame,id,x,y[,z][,time]") from None
    if not first:
        raise CsvTracksError(f"{path}: empty; allowed: a header line frame,id,x,y[,z][,time] and rows")
    return [c.strip() for c in first]


def read_csv_samples(path: str | Path, fps: float | None = None) -> Samples:
    """The samples of a track CSV (see the module docstring); :class:`CsvTracksError` for a bad file."""
    require("field", "flocksim.io.tracks_csv.read_csv_samples")
    import pandas as pd

    path = Path(path)
    scan_lines(path)
    columns = _header(path)
    unknown = [c for c in columns if c not in ALLOWED]
    if unknown:
        raise CsvTracksError(
            f"{path}: header: unknown column {unknown[0]!r}; allowed: {', '.join(ALLOWED)} "
            "(frame, id, x, y required; a header line is required)"
        )
    if len(set(columns)) != len(columns):
        twice = next(c for c in columns if columns.count(c) > 1)
        raise CsvTracksError(f"{path}: header: column {twice!r} appears twice; allowed: each column once")
    try:
        table = pd.read_csv(
            path,
            dtype=str,
            keep_default_na=False,
            na_values=[""],
            skipinitialspace=True,
            header=0,
            names=columns,
            encoding="utf-8-sig",
        )
    except UnicodeDecodeError:  # found by scan_lines first, naming its line
        raise CsvTracksError(f"{path}: not UTF-8 text; allowed: CSV text in UTF-8") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        raise CsvTracksError(f"{path}: {_table_problem(str(exc), len(columns))}") from None
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise CsvTracksError(f"{path}: header: missing column {missing[0]!r}; required: {', '.join(REQUIRED)}")
    if len(table) == 0:
        raise CsvTracksError(f"{path}: no rows; allowed: at least one row of frame,id,x,y")
    frame = _numbers(table, "frame", path)
    bad = ~np.isfinite(frame) | (frame != np.round(frame))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise CsvTracksError(
            f"{path}: line {row + 2}, column 'frame': {table['frame'].iloc[row]!r} is not an integer frame number"
        )
    ids = table["id"].fillna("").astype(str).str.strip()
    if (ids == "").any():
        row = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise CsvTracksError(f"{path}: line {row + 2}, column 'id': empty; allowed: a bird's name or number")
    axes = ["x", "y", "z"] if "z" in columns else ["x", "y"]
    coords = np.stack([_numbers(table, a, path) for a in axes], axis=1)
    infinite = np.isinf(coords).any(axis=1)
    if infinite.any():
        row = int(np.flatnonzero(infinite)[0])
        raise CsvTracksError(f"{path}: line {row + 2}: an infinite coordinate; allowed: a finite number or empty")
    _refuse_sentinels(coords, axes, path)
    frames = frame.astype(np.int64)
    names, bird = _bird_names(ids)
    first = int(frames.min())
    span = int(frames.max()) - first + 1
    check_track_size(span, len(names), len(axes), f"{path}: frames {first} to {first + span - 1}")
    slot = frames - first
    key = slot * len(names) + bird
    order = np.argsort(key, kind="stable")
    dup = np.flatnonzero(np.diff(key[order]) == 0)
    if len(dup):
        row = int(order[dup[0] + 1])
        raise CsvTracksError(
            f"{path}: line {row + 2}: bird {str(names[bird[row]])!r} appears twice in frame {frames[row]}; "
            "allowed: one row per bird and frame"
        )
    position = np.full((span, len(names), len(axes)), np.nan)
    position[slot, bird] = coords
    position[~np.all(np.isfinite(position), axis=2)] = np.nan  # a half-given point is not seen
    seen_frames = np.zeros(span, dtype=bool)
    seen_frames[slot] = True
    if "time" in columns:
        if fps is not None:
            raise CsvTracksError(
                f"--fps: {path} has a time column; allowed: leave --fps out (the file's times are used), "
                "--fps only for files without one"
            )
        time = _frame_times(_numbers(table, "time", path), slot, span, seen_frames, path, first)
        seen = np.flatnonzero(seen_frames)
        if len(seen) > 1:
            step = (time[seen[-1]] - time[seen[0]]) / (seen[-1] - seen[0])
            if np.max(np.abs(time[seen] - (time[seen[0]] + (seen - seen[0]) * step))) <= UNIFORM_RTOL * step:
                grid = time[seen[0]] + (np.arange(span) - seen[0]) * step  # frames on one clock: keep them all
                return Samples(grid, np.ones(span - 1, dtype=bool), position, None, names, "s")
        linked = np.diff(seen) == 1
        return Samples(time[seen], linked, position[seen], None, names, "s")
    scale = 1.0 if fps is None else 1.0 / fps
    time = (first + np.arange(span)) * scale
    return Samples(time, np.ones(span - 1, dtype=bool), position, None, names, "frames" if fps is None else "s")


def _frame_times(
    values: np.ndarray, slot: np.ndarray, span: int, seen: np.ndarray, path: Path, first: int
) -> np.ndarray:
    """One time per frame (NaN for frames without rows); refuses disagreeing or unordered times."""
    bad = ~np.isfinite(values)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise CsvTracksError(f"{path}: line {row + 2}, column 'time': missing or not finite; allowed: seconds")
    time = np.full(span, np.nan)
    time[slot] = values
    differs = np.flatnonzero(values != time[slot])
    if len(differs):
        row = int(differs[0])
        raise CsvTracksError(
            f"{path}: line {row + 2}, column 'time': frame {first + slot[row]} has two times "
            f"({values[row]:g} and {time[slot[row]]:g}); allowed: one time per frame"
        )
    ordered = time[seen]
    if len(ordered) > 1 and np.any(np.diff(ordered) <= 0):
        k = int(np.flatnonzero(np.diff(ordered) <= 0)[0])
        frames = first + np.flatnonzero(seen)
        raise CsvTracksError(
            f"{path}: column 'time': frame {frames[k + 1]} is not later than frame {frames[k]}; "
            "allowed: times that increase with the frame number"
        )
    return time
