"""Where numba caches compiled kernels.

numba's ``cache=True`` checks only the timestamp of the file that defines a
compiled function, not of the functions it calls in other files, so an edit to
``space.py`` could leave a stale kernel of ``grid.py`` in the cache. flocksim
therefore keys its cache folder on the contents of its own source files: any
change to the package starts a fresh cache. A user's NUMBA_CACHE_DIR wins.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

KEEP_OLD_CACHES = 3


def source_digest(package_dir: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
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
