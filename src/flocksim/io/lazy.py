"""Lazy reads of a trajectory store that fail as flocksim does: :func:`flocksim.io.open_run` gives
an xarray Dataset whose arrays are read only when used (``.values``, ``.load()``, ``.compute()``,
indexing, dask blocks); a chunk that is damaged or deleted by then raises :class:`TrajectoryError` naming the
array and the steps, the same line ``flocksim info --check`` prints, instead of zarr's own error.

:class:`CheckedZarrStore` is xarray's Zarr store with each variable's array wrapped in
:class:`CheckedArray`, which every lazy read goes through (xarray's documented backend-array
interface), so no read path bypasses it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flocksim._extras import require
from flocksim.io.store import TrajectoryError, TrajectoryStore, _decode_problem

require("field", "flocksim.io.open_run")  # before xarray: a missing extra is one line, as everywhere

from xarray.backends import BackendArray, ZarrStore  # noqa: E402
from xarray.core import indexing  # noqa: E402


def _span(item: Any, size: int) -> tuple[int, int]:
    """First and one-past-last index one item of an indexer reads on an axis of ``size``."""
    if isinstance(item, slice):
        first, last, step = item.indices(size)
        if step < 0:
            first, last = last + 1, first + 1
        return first, max(last, first)
    index = np.asarray(item).ravel()
    if index.size == 0:
        return 0, 0
    index = np.where(index < 0, index + size, index)
    return int(index.min()), int(index.max()) + 1


def _spans(key: Any, shape: tuple[int, ...]) -> list[tuple[int, int]]:
    items = tuple(key.tuple) + (slice(None),) * (len(shape) - len(key.tuple))
    return [_span(item, size) for item, size in zip(items, shape, strict=True)]


class CheckedArray(BackendArray):
    """A backend array whose reads raise :class:`TrajectoryError` (array and steps named) when a
    chunk they need is missing (zarr would give its fill value without a word) or fails to decode."""

    def __init__(self, inner: BackendArray, name: str, store: TrajectoryStore, timed: bool):
        self.inner = inner
        self.name = name
        self.store = store
        self.timed = timed
        self.shape = inner.shape
        self.dtype = inner.dtype

    def _damage(self, key: Any, exc: BaseException) -> TrajectoryError:
        problem = _decode_problem(exc)
        if not self.timed:
            return self.store.damaged(f"{self.name}, the whole array (no time axis): {problem}")
        first, last = _spans(key, self.shape)[0]
        where = self.store._bad_time_chunk(self.store.array(self.name), first, last)
        return self.store.damaged(f"{self.name}, {where}: {problem}")

    def _check_present(self, key: Any) -> None:
        """TrajectoryError when a chunk the read needs is missing (zarr would read its fill value)."""
        from flocksim.io.verify import chunk_keys

        if not self.shape:
            return
        arr = self.store.array(self.name)
        spans = _spans(key, self.shape)
        if any(last <= first for first, last in spans):
            return
        ranges = [range(first // c, (last - 1) // c + 1) for (first, last), c in zip(spans, arr.chunks, strict=True)]
        folder = self.store.path / self.name
        for chunk in chunk_keys((), arr.metadata.chunk_key_encoding.encode_chunk_key, ranges):
            if not (folder / chunk).is_file():
                if not self.timed:
                    raise self.store.damaged(f"{self.name}, the whole array (no time axis): chunk {chunk} is missing")
                raise self.store.damaged(f"{self.name}, {self.store._chunk_span(arr, chunk)}: chunk {chunk} is missing")

    def __getitem__(self, key: Any) -> Any:
        self._check_present(key)
        try:
            return self.inner[key]
        except Exception as exc:  # zarr raises many kinds for a chunk it cannot decode
            raise self._damage(key, exc) from None

    async def async_getitem(self, key: Any) -> Any:
        self._check_present(key)
        try:
            return await self.inner.async_getitem(key)
        except Exception as exc:
            raise self._damage(key, exc) from None


class CheckedZarrStore(ZarrStore):
    """xarray's :class:`~xarray.backends.ZarrStore` whose variables read through :class:`CheckedArray`;
    set :attr:`trajectory` (the opened :class:`TrajectoryStore`) before use."""

    trajectory: TrajectoryStore

    def open_store_variable(self, name: str) -> Any:
        variable = super().open_store_variable(name)
        wrapper = variable._data.array  # LazilyIndexedArray(ZarrArrayWrapper(zarr array))
        timed = bool(variable.dims) and variable.dims[0] == "time"
        checked = CheckedArray(wrapper, name, self.trajectory, timed)
        return type(variable)(variable.dims, indexing.LazilyIndexedArray(checked), variable.attrs, variable.encoding)


def open_checked(path: str, trajectory: TrajectoryStore, **kwargs: Any):
    """``xarray.open_zarr(path, consolidated=True, **kwargs)`` with every read checked (see the
    module docstring); ``kwargs`` are those of :func:`xarray.open_dataset` (chunks, decoding)."""
    import xarray as xr

    if "chunks" not in kwargs:  # as open_zarr: dask arrays in the store's chunks when dask is there
        try:
            import dask.array  # noqa: F401

            kwargs["chunks"] = {}
        except ImportError:
            kwargs["chunks"] = None
    store = CheckedZarrStore.open_group(path, mode="r", consolidated=True)
    store.trajectory = trajectory
    return xr.open_dataset(path, engine="zarr", backend_kwargs={"store": store}, **kwargs)
