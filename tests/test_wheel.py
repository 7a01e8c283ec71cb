"""The distribution: ``python -m build`` makes an sdist and, from it, a wheel that carries the viewer page;
that wheel, installed into a fresh virtual environment, serves the page with ``flocksim serve``.

The build is the real one (isolated build environments from PyPI or the pip cache, ``npm ci`` and the
esbuild bundle inside the unpacked sdist), so a file missing from the sdist or the wheel fails here.
The fresh environment gets the wheel with ``--no-deps`` and sees this environment's site-packages through
a ``.pth`` line instead of installing the dependencies again: numba, pyarrow, dask and the rest are
hundreds of megabytes that CI would download and unpack on every run, while what this test guards is
the wheel's own content (the package, its presets and the built page). A ``.pth`` line adds a folder to
``sys.path`` after the environment's own site-packages without running that folder's ``.pth`` files, so
the editable install of this checkout is not active there: ``flocksim`` is imported from the wheel,
which the test checks.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from conftest import free_port, stop_process

ROOT = Path(__file__).resolve().parents[1]
PAGE = ("flocksim/viewer/static/index.html", "flocksim/viewer/static/assets/main.js")
WIDGET = ("flocksim/notebook/static/widget.js", "flocksim/notebook/static/widget.css")
"""The notebook widget's module, built with the page (web/build.mjs)."""


def _git_checkout() -> bool:
    try:
        subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return True


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """The sdist and the wheel ``python -m build`` makes of this checkout (the wheel is built from the sdist)."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed (./dev.sh test installs it): the wheel cannot be built from the sdist")
    if not _git_checkout():
        pytest.skip("not a git checkout: the sdist lists the files git tracks")
    out = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    sdists, wheels = list(out.glob("flocksim-*.tar.gz")), list(out.glob("flocksim-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in out.iterdir())
    return {"sdist": sdists[0], "wheel": wheels[0], "log": result.stderr}


def test_the_wheel_is_built_from_the_sdist_with_npm(dist):
    # the sdist has no page, so building its wheel ran npm (setup.py says so on stderr)
    assert "building the viewer page" in dist["log"], dist["log"][-3000:]
    # the built page and widget are package data, not packages setuptools would warn about ignoring
    for warning in ("would be ignored", "absent from the `packages`"):
        assert warning not in dist["log"], dist["log"][-5000:]


def test_the_sdist_holds_the_web_sources_and_no_built_page(dist):
    with tarfile.open(dist["sdist"]) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    web = ("web/package.json", "web/package-lock.json", "web/build.mjs", "web/index.html", "web/src/main.js")
    for needed in ("setup.py", "pyproject.toml", "PKG-INFO", "src/flocksim/scenarios/presets/boids-2d.toml", *web):
        assert needed in names, needed
    assert not [n for n in names if "viewer/static" in n or "notebook/static" in n or "node_modules" in n]


def test_the_wheel_holds_the_page_and_a_version_from_git(dist):
    with zipfile.ZipFile(dist["wheel"]) as whl:
        names = set(whl.namelist())
        metadata = next(whl.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    page = (*PAGE, "flocksim/viewer/static/assets/main.css", *WIDGET)
    for needed in (*page, "flocksim/scenarios/presets/starlings-3d.toml"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("web/", "tests/", "docs/"))]
    version = re.search(r"^Version: (.+)$", metadata, re.MULTILINE).group(1)
    assert dist["wheel"].name.startswith(f"flocksim-{version}-")
    assert "unknown" not in version, f"{version}: the fallback version, but this is a git checkout"


def test_the_wheel_serves_the_page_from_a_fresh_venv(dist, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # the dependencies: this environment's site-packages, after the fresh one's own (see the module docstring)
    Path(purelib, "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", "--no-index",
         str(dist["wheel"])],
        check=True, timeout=300,
    )  # fmt: skip
    where = subprocess.run(
        [python, "-c", "import flocksim; print(flocksim.__file__); print(flocksim.__version__)"],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    ).stdout.split()  # fmt: skip
    assert Path(where[0]).is_relative_to(venv), f"flocksim imported from {where[0]}, not from the wheel"
    assert dist["wheel"].name.startswith(f"flocksim-{where[1]}-")

    with zipfile.ZipFile(dist["wheel"]) as whl:
        page = {name: whl.read(name) for name in PAGE}
    port = free_port()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}  # the warm-up's kernels stay in tmp_path
    server = subprocess.Popen(
        [venv / "bin" / "flocksim", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        index = _get_when_up(f"http://127.0.0.1:{port}/", server)
        assert index.status_code == 200, index.text[:300]
        assert index.content == page[PAGE[0]]
        script = re.search(r'<script[^>]*src="\.?/?(assets/[^"]+\.js)"', index.text)
        assert script, index.text[:500]
        bundle = httpx.get(f"http://127.0.0.1:{port}/{script.group(1)}", timeout=30)
        assert bundle.status_code == 200
        assert "javascript" in bundle.headers["content-type"]
        assert bundle.content == page[PAGE[1]]
    finally:
        stop_process(server, 30)


def _get_when_up(url: str, server: subprocess.Popen, timeout: float = 120.0) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(url, timeout=10)
        except httpx.TransportError:
            if server.poll() is not None:
                pytest.fail(f"flocksim serve exited with {server.returncode}: {server.stdout.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"flocksim serve did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.2)


# ----------------------------------------------------------------------------- the build hook alone


@pytest.fixture(scope="module")
def hook():
    """setup.py as a module (its ``setup()`` call runs only as ``__main__``)."""
    spec = importlib.util.spec_from_file_location("flocksim_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tree(root: Path, built: bool, source_age: float) -> Path:
    """A minimal checkout at ``root``: web/ sources ``source_age`` seconds old, with or without a built page."""
    (root / "web" / "src").mkdir(parents=True)
    for name in ("web/src/main.js", "web/index.html", "web/build.mjs", "web/package.json", "web/package-lock.json"):
        (root / name).write_text("x")
        os.utime(root / name, (time.time() - source_age,) * 2)
    if built:
        for name in ("index.html", "assets/main.js", "assets/main.css"):
            path = root / "src/flocksim/viewer/static" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("built")
    return root


def test_hook_uses_a_current_page_without_npm(hook, tmp_path):
    root = _tree(tmp_path, built=True, source_age=100)
    assert hook.ensure_page(root, npm=None) == "current"


def test_hook_stops_with_one_clear_error_without_npm_and_page(hook, tmp_path, monkeypatch):
    root = _tree(tmp_path, built=False, source_age=100)
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    with pytest.raises(hook.PageBuildError, match=r"not built and npm is not on the PATH.*apt-get install nodejs npm"):
        hook.ensure_page(root)


def test_hook_uses_a_stale_page_without_npm_with_a_warning(hook, tmp_path, monkeypatch):
    root = _tree(tmp_path, built=True, source_age=-100)  # sources newer than the page
    monkeypatch.setenv("PATH", str(tmp_path / "no-such-bin"))
    said = []
    assert hook.ensure_page(root, log=said.append) == "stale"
    assert "older than web/" in said[0]


def test_hook_runs_npm_ci_and_build_when_the_page_is_missing(hook, tmp_path):
    root = _tree(tmp_path, built=False, source_age=100)
    calls = tmp_path / "calls"
    npm = tmp_path / "npm"  # a stand-in npm that records its arguments and "builds" the page
    npm.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        'if [ "$1" = run ]; then d=../src/flocksim/viewer/static; mkdir -p $d/assets; '
        "touch $d/index.html $d/assets/main.js $d/assets/main.css; fi\n"
    )
    npm.chmod(0o755)
    assert hook.ensure_page(root, npm=str(npm), log=lambda _: None) == "built"
    assert calls.read_text().splitlines() == ["ci --no-audit --no-fund --loglevel=error", "run --silent build"]
    assert hook.page_state(root) == "current"
