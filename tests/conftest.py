"""Fixtures shared by several test files."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a seed from each test's name), so a suite
# that passed passes again on a fresh machine; HYPOTHESIS_PROFILE=explore draws new examples each
# run, to search for new failures (benchmarks/soak_reliability.py fuzzes at length).
settings.register_profile("repeatable", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` (and what is in it) read-only for this process: a read-only bind mount of it as
    root (permission bits do not stop root), permission bits otherwise."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")] if p.is_dir()}
        for p in modes:
            p.chmod(stat.S_IMODE(modes[p]) & ~0o222)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(stat.S_IMODE(mode))
        return
    mount = ["mount", "--bind", str(folder), str(folder)]
    if subprocess.run(mount, capture_output=True).returncode != 0:
        pytest.skip("a read-only folder needs a bind mount here (root without mount rights)")
    try:
        remount = ["mount", "-o", "remount,bind,ro", str(folder)]
        if subprocess.run(remount, capture_output=True).returncode != 0:
            pytest.skip("cannot remount a bind mount read-only here")
        yield
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, check=True)


@pytest.fixture
def read_only() -> Callable[[Path], contextlib.AbstractContextManager[None]]:
    """``with read_only(folder):`` makes ``folder`` unwritable (as a read-only file system would)."""
    return _read_only


def stop_process(process: subprocess.Popen, timeout: float) -> None:
    """Terminate ``process`` and wait for it; kill it if it has not exited within ``timeout`` s."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium: the browser tests drive it (Playwright cannot download browsers here)."""
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def full_detail(query: str) -> str:
    """A viewer page's query string with ``detail=full``: the page draws at full detail whatever
    its renders take (docs/viewer.md, "Level of detail"), so tests that measure its pixels see
    the same picture on a loaded machine as on a quiet one."""
    return query + ("&" if "?" in query else "?") + "detail=full"


@contextlib.contextmanager
def launched_chromium() -> Iterator[object]:
    """Debian's chromium under Playwright with SwiftShader WebGL, closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """One chromium for the module (SwiftShader WebGL), for the browser tests."""
    with launched_chromium() as b:
        yield b


def free_port() -> int:
    """A loopback TCP port that was free a moment ago."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_in_thread(app, port: int, **config) -> Iterator[None]:
    """``app`` served by uvicorn on the loopback ``port`` in a daemon thread, until the block ends.
    ``config``: more ``uvicorn.Config`` settings."""
    import threading
    import time

    import uvicorn

    settings = {"log_level": "warning", "ws_per_message_deflate": False, **config}
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **settings))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the viewer server did not start")
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=15)


HEAVY_FILES = (
    "test_viewer_browser.py",
    "test_viewer_bank_browser.py",
    "test_viewer_detail.py",
    "test_viewer_lod_browser.py",
    "test_flappy_browser.py",
    "test_viewer_scenes.py",
    "test_notebook_browser.py",
    "test_notebook.py",
    "test_notebook_kernel.py",
    "test_cuda_ptx.py",
    "test_wheel.py",
    "test_docs_site.py",
)
"""Test files that drive a browser, a Jupyter kernel, a wheel build in a fresh venv, the
documentation site's build or a PTX compile of every kernel: the ``heavy`` tests, with those
marked ``slow``."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the heavy tests, so that ``pytest -m "not heavy"`` is the quick subset for development."""
    for item in items:
        if item.path.name in HEAVY_FILES or item.get_closest_marker("slow") is not None:
            item.add_marker(pytest.mark.heavy)
