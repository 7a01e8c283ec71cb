"""Processes that share a kernel cache compile each kernel once (flocksim/_compile_lock.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import pytest

from flocksim import _compile_lock
from flocksim._compile_lock import _lock_path, file_lock, lock_name

pytestmark = pytest.mark.skipif(_compile_lock.fcntl is None, reason="no fcntl: no lock")

PROBE = r"""
import pathlib, sys, time
from numba.core import event

here = pathlib.Path(sys.argv[1])
role = sys.argv[2]
compiles = []


class Compiles(event.Listener):
    def on_start(self, ev):
        if ev.data["dispatcher"].py_func.__name__ != "min_image":
            return
        compiles.append(1)
        if role == "first":  # hold the kernel's compile until the second process is about to need it
            (here / "first-compiling").touch()
            deadline = time.monotonic() + 120
            while not (here / "second-ready").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(2.5)

    def on_end(self, ev):
        pass


event.register("numba:compile", Compiles())
from flocksim.space import min_image

if role == "second":
    (here / "second-ready").touch()
assert min_image(0.75, 1.0) == -0.25
print(len(compiles))
"""


def _two_processes(tmp_path: Path, lock: str) -> tuple[int, int, str]:
    """A first process compiles ``min_image`` into an empty cache and holds its compile until a
    second process, started meanwhile, is about to call the kernel too; their compile counts and
    the second's stderr. ``lock``: FLOCKSIM_COMPILE_LOCK for both."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "FLOCKSIM_COMPILE_LOCK": lock}
    run = [sys.executable, str(script), str(tmp_path)]
    first = subprocess.Popen([*run, "first"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (tmp_path / "first-compiling").exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first process never compiled"
        time.sleep(0.02)
    second = subprocess.run([*run, "second"], env=env, capture_output=True, text=True, timeout=300)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, (err, second.stderr)
    return int(out.split()[-1]), int(second.stdout.split()[-1]), second.stderr


def test_a_second_process_waits_for_the_first_ones_compile_and_loads_it(tmp_path):
    first, second, said = _two_processes(tmp_path, "1")
    assert (first, second) == (1, 0), said
    assert said.count("another process is compiling min_image for the same cache; waiting for it") == 1, said


def test_without_the_lock_both_processes_compile(tmp_path):
    """The control: the same two processes without the lock compile the kernel twice."""
    assert _two_processes(tmp_path, "0")[:2] == (1, 1)


def test_the_lock_name_is_the_index_stem_and_the_signature_without_addresses():
    args = (numba.types.float64, numba.types.Array(numba.types.float64, 2, "C"))
    name = lock_name("space.min_image-40.py311.nbi", args, numba.types.float64)
    assert name.startswith("space.min_image-40.py311-") and name.endswith(".lock")
    assert name == lock_name("space.min_image-40.py311.nbi", args, numba.types.float64)
    assert name != lock_name("space.min_image-40.py311.nbi", args[:1], numba.types.float64)

    class Passed:  # a function passed as an argument prints with its address, which differs by process
        def __init__(self, address: str):
            self.address = address

        def __str__(self) -> str:
            return f"type(CPUDispatcher(<function f at {self.address}>))"

    assert lock_name("f.nbi", (Passed("0x7f01"),), None) == lock_name("f.nbi", (Passed("0x55aa"),), None)


def test_only_flocksims_kernels_not_yet_compiled_are_locked():
    from flocksim.space import min_image

    @numba.njit(cache=True)
    def outside(x):  # a user's cached function: numba's own locator, no lock
        return x + 1.0

    assert _lock_path(outside, (numba.types.float64,)) is None
    signature = (numba.types.float64, numba.types.float64)
    min_image.compile(signature)
    assert _lock_path(min_image, signature) is None  # compiled in this process: nothing to wait for
    path = _lock_path(min_image, (numba.types.float32, numba.types.float32))
    assert path is not None and Path(path).name.startswith("space.min_image-")


def test_a_held_lock_is_waited_for_up_to_the_limit_then_skipped(tmp_path, monkeypatch):
    monkeypatch.setattr(_compile_lock, "WAIT_LIMIT_S", 0.3)
    path = str(tmp_path / "k.lock")
    with file_lock(path, "k") as taken:
        assert taken
        started = time.monotonic()
        with file_lock(path, "k") as again:  # another open file: flock makes it wait, as another process
            assert not again
        assert time.monotonic() - started >= 0.3
    with file_lock(path, "k") as after:
        assert after


def test_a_lock_that_cannot_be_made_is_skipped(tmp_path):
    with file_lock(str(tmp_path / "missing" / "k.lock"), "k") as taken:
        assert not taken
