"""Build hook: every wheel carries the viewer's page, built from web/ (esbuild, pinned by package-lock.json).

The page (``src/flocksim/viewer/static/``) is a build output, never committed. Before setuptools copies
the package into a wheel, :class:`BuildPyWithPage` makes sure it is there:

- built and newer than every source in web/ (``./dev.sh setup`` builds it): used as it is;
- missing or older than a source: ``npm ci`` (when web/node_modules is missing or older than the
  lock file) and ``npm run build`` in web/, as ``./dev.sh`` does;
- older than a source with no npm on the PATH: used as it is, with a warning;
- missing with no npm on the PATH: the build stops with one error that says what to install.

An editable install (``pip install -e .``, what ``./dev.sh setup`` runs) skips the hook: the page is
served from the source tree and dev.sh builds it. Everything else (metadata; the version, from
src/flocksim/_version.py) is in pyproject.toml.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PAGE_FILES = ("index.html", "assets/main.js", "assets/main.css")
"""The built page's files, relative to the static folder (web/build.mjs writes them)."""
WEB_SOURCES = ("src", "index.html", "build.mjs", "package.json", "package-lock.json")
"""What the page is built from, relative to web/."""


class PageBuildError(RuntimeError):
    """The viewer's page is not built and cannot be built here."""


def _newest_mtime(paths: list[Path]) -> float:
    times = [p.stat().st_mtime for p in paths if p.is_file()]
    for p in paths:
        if p.is_dir():
            times.extend(f.stat().st_mtime for f in p.rglob("*") if f.is_file())
    return max(times, default=0.0)


def page_state(root: Path) -> str:
    """The page of the tree at ``root``: "current", "stale" (a web/ source is newer) or "missing"."""
    static = root / "src" / "flocksim" / "viewer" / "static"
    built = [static / name for name in PAGE_FILES]
    if not all(p.is_file() for p in built):
        return "missing"
    web = root / "web"
    newest_source = _newest_mtime([web / name for name in WEB_SOURCES])
    oldest_output = min(p.stat().st_mtime for p in built)
    return "stale" if newest_source > oldest_output else "current"


def ensure_page(root: Path, npm: str | None = None, log=print) -> str:
    """Make sure the built page of the tree at ``root`` can go into a wheel; returns what was done:
    "current" (used as built), "built" (npm ran) or "stale" (older than its sources, no npm: used).
    ``npm``: the npm executable (default: the one on the PATH). Raises :class:`PageBuildError`."""
    state = page_state(root)
    if state == "current":
        return "current"
    npm = npm if npm is not None else shutil.which("npm")
    web = root / "web"
    if npm is None:
        if state == "stale":
            log(
                "flocksim build: WARNING: npm not found; the viewer page in src/flocksim/viewer/static/ is older "
                "than web/ and goes into the wheel as it is"
            )
            return "stale"
        raise PageBuildError(
            "flocksim build: the viewer page (src/flocksim/viewer/static/) is not built and npm is not on the "
            "PATH to build it from web/. Install Node.js >= 18 with npm (Debian/Ubuntu: apt-get install nodejs "
            "npm) and build again, or build the page first with ./dev.sh setup."
        )
    if not (web / "package-lock.json").is_file():
        raise PageBuildError(f"flocksim build: {web / 'package-lock.json'} is missing: cannot build the viewer page")
    modules = web / "node_modules" / ".package-lock.json"
    if not modules.is_file() or modules.stat().st_mtime < (web / "package-lock.json").stat().st_mtime:
        log("flocksim build: npm ci in web/ (three.js, esbuild)")
        _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], web)
    log("flocksim build: building the viewer page (npm run build in web/)")
    _run([npm, "run", "--silent", "build"], web)
    if page_state(root) == "missing":
        raise PageBuildError("flocksim build: npm run build finished but the viewer page is incomplete")
    return "built"


def _run(command: list[str], cwd: Path) -> None:
    try:
        subprocess.run(command, cwd=cwd, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise PageBuildError(f"flocksim build: {' '.join(command)} in {cwd} failed: {exc}") from exc


class BuildPyWithPage(build_py):
    """setuptools' build_py that builds the viewer page first (not for editable installs)."""

    def run(self) -> None:
        if not getattr(self, "editable_mode", False):
            try:
                ensure_page(ROOT, log=lambda text: print(text, file=sys.stderr))
            except PageBuildError as exc:
                sys.exit(str(exc))
            # package data is listed lazily: drop a list taken before the page existed
            self.__dict__.pop("data_files", None)
        super().run()


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildPyWithPage})
