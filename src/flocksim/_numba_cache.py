"""Where numba caches compiled kernels.

numba's ``cache=True`` checks only the timestamp of the file that defines a
compiled function, not of the functions it calls in other files, so an edit to
``space.py`` could leave a stale kernel of ``grid.py`` in the cache. flocksim
therefore keys its cache folder on the contents of its kernel sources: every
module that uses numba and every flocksim module those import, transitively
(a kernel calls functions and freezes constants from them). An edit to any of
them starts a fresh cache; an edit elsewhere (the command line, the viewer, the
docs) keeps it, and so does a reinstall of the same version. A user's
NUMBA_CACHE_DIR wins.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

KEEP_OLD_CACHES = 3


JITTED = re.compile(r"numba\.(?:njit|jit)\b|^@(?:device|block_device|serial_kernel)\b", re.M)
"""A module that defines numba-compiled functions (the decorators of flocksim.kernels.compile included)."""
IMPORT = re.compile(r"^\s*(?:from\s+(flocksim(?:\.\w+)*)\s+import\s+(.+)|import\s+(flocksim(?:\.\w+)*))", re.M)
"""``from flocksim.x import a, b`` (groups 1, 2) or ``import flocksim.x`` (group 3)."""


def kernel_sources(package_dir: Path) -> list[Path]:
    """The modules whose contents key the cache: those that define numba-compiled functions, and every module of the
    package they import by name, transitively (not the packages above them: a package's
    ``__init__`` runs, but a kernel sees only what it imports); sorted."""
    modules = {_module_name(path, package_dir): path for path in package_dir.rglob("*.py")}
    todo = [name for name, path in modules.items() if JITTED.search(path.read_text(encoding="utf-8"))]
    found: set[str] = set()
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for match in IMPORT.finditer(modules[name].read_text(encoding="utf-8")):
            target = match.group(1) or match.group(3)
            candidates = [target]
            if match.group(2):  # from flocksim.x import y: y may be a module
                candidates += [f"{target}.{part.strip(' ()').split(' ')[0]}" for part in match.group(2).split(",")]
            todo.extend(candidate for candidate in candidates if candidate in modules and candidate not in found)
    return sorted(modules[name] for name in found)


def _module_name(path: Path, package_dir: Path) -> str:
    parts = ("flocksim", *path.relative_to(package_dir).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_digest(package_dir: Path) -> str:
    h = hashlib.sha256()
    for path in kernel_sources(package_dir):
        h.update(str(path.relative_to(package_dir)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def configure() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    import numba

    package_dir = Path(__file__).resolve().parent
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flocksim" / "numba"
    folder = base / source_digest(package_dir)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        old = sorted((p for p in base.iterdir() if p.is_dir() and p != folder), key=lambda p: p.stat().st_mtime)
        for stale in old[: max(len(old) - KEEP_OLD_CACHES, 0)]:
            shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        return  # read-only home: numba falls back to its own locations
    numba.config.CACHE_DIR = str(folder)
