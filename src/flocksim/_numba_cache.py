"""Where numba caches compiled kernels.

numba's ``cache=True`` checks only the timestamp of the file that defines a
compiled function, not of the functions it calls in other files, so an edit to
``space.py`` could leave a stale kernel of ``grid.py`` in the cache. flocksim
therefore keys its cache folder on the contents of its kernel sources: every
module that uses numba and every flocksim module those import, transitively
(a kernel calls functions and freezes constants from them). An edit to any of
them starts a fresh cache; an edit elsewhere (the command line, the viewer, the
docs) keeps it, and so does a reinstall of the same version. A user's
NUMBA_CACHE_DIR wins: flocksim's kernels then go to a folder ``flocksim-DIGEST``
inside it, keyed the same way.

numba files a function's cache under a hash of the absolute folder of its source
file, so the same kernels installed twice (a checkout and a wheel's venv) were
compiled twice. :class:`PackageCacheLocator` files flocksim's kernels under their
folder inside the package instead (``kernels/``, ``neighbors/``, ...): one compile
serves every install of the same sources on a machine (numba's own source stamp is
the file's content hash, and each entry is keyed on the CPU it was compiled for).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
from pathlib import Path

from flocksim._kernel_target import ENV, KernelTargetError, Target, apply, choose, copy_prebuilt

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
            candidates = _imported_modules(match, modules)
            todo.extend(candidate for candidate in candidates if candidate not in found)
    return sorted(modules[name] for name in found)


def _imported_modules(match: re.Match[str], modules: dict[str, Path]) -> list[str]:
    """The package's modules an :data:`IMPORT` match brings in: ``import flocksim.x`` the module x;
    ``from flocksim.x import a, b`` the submodules among a and b, and x itself only if some name is
    not a submodule (``from flocksim import _numba_inline`` does not make the package's ``__init__``,
    which imports everything, a kernel source)."""
    if match.group(3):
        return [match.group(3)] if match.group(3) in modules else []
    target = match.group(1)
    names = [part.strip(" ()").split(" ")[0] for part in match.group(2).split(",")]
    names = [n for n in names if n and not n.startswith("#")]
    submodules = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
    needs_target = len(submodules) < len(names) and target in modules
    return submodules + ([target] if needs_target else [])


def _module_name(path: Path, package_dir: Path) -> str:
    parts = ("flocksim", *path.relative_to(package_dir).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def source_digest(package_dir: Path) -> str:
    h = hashlib.sha256()
    for path in kernel_sources(package_dir):
        h.update(str(path.relative_to(package_dir)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


PACKAGE_DIR = Path(__file__).resolve().parent
_package_folder: str | None = None
"""Where flocksim's kernels are cached (set by :func:`configure`; None: numba's own choice)."""


def package_subpath(py_file: str, package_dir: Path = PACKAGE_DIR) -> str | None:
    """The cache subfolder of the kernels defined in ``py_file``: its folder inside the package
    (``flocksim/kernels``), the same for every install; None for a file outside the package."""
    try:
        relative = Path(py_file).resolve().relative_to(package_dir)
    except ValueError:
        return None
    return str(Path("flocksim", *relative.parent.parts))


def _register_locator(folder: str) -> None:
    """File flocksim's kernels under ``folder``, by their place in the package (numba's locator
    classes are tried in order: this one first, for flocksim's files only)."""
    global _package_folder
    _package_folder = folder
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # _CacheImpl before 0.61
    UserProvidedCacheLocator = getattr(caching, "UserProvidedCacheLocator", None) or getattr(
        caching, "_UserProvidedCacheLocator", None
    )
    if impl is None or UserProvidedCacheLocator is None:  # a numba without these: its own locations
        return

    class PackageCacheLocator(UserProvidedCacheLocator):
        """numba's user-folder locator, keyed on the file's place in the package, not on disk."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = os.path.join(_package_folder, package_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            if _package_folder is None or package_subpath(py_file) is None:
                return None
            return super(UserProvidedCacheLocator, cls).from_function(py_func, py_file)

    locators = impl._locator_classes
    locators[:] = [c for c in locators if c.__name__ != "PackageCacheLocator"]
    locators.insert(0, PackageCacheLocator)


target: Target = Target("host", "not configured yet")
"""The CPU flocksim's kernels compile for in this process (set by :func:`configure`)."""


def configure() -> None:
    """Choose the kernels' CPU target (:mod:`flocksim._kernel_target`) and their cache folder: under
    NUMBA_CACHE_DIR when the user set it, else ``~/.cache/flocksim/numba`` (XDG_CACHE_HOME), a folder
    per kernel sources and target, the oldest beyond :data:`KEEP_OLD_CACHES` removed. A prebuilt
    cache the install carries seeds a new portable folder."""
    global target
    digest = source_digest(PACKAGE_DIR)
    try:
        target = choose(digest, PACKAGE_DIR)
    except KernelTargetError as exc:  # read at import: one line, and the default, rather than no flocksim at all
        print(f"flocksim: {exc}; using auto", file=sys.stderr)
        target = choose(digest, PACKAGE_DIR, {**os.environ, ENV: "auto"})
    if not apply(target):
        target = Target("host", "numba compiled code before flocksim was imported")
    name = digest + target.cache_suffix
    user_folder = os.environ.get("NUMBA_CACHE_DIR")
    if user_folder:
        folder = Path(user_folder) / f"flocksim-{name}"
        _seed(folder, target.prebuilt)
        _register_locator(str(folder))
        return
    import numba

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flocksim" / "numba"
    folder = base / name
    try:
        _seed(folder, target.prebuilt)
        folder.mkdir(parents=True, exist_ok=True)
        old = sorted(
            (p for p in base.iterdir() if p.is_dir() and p != folder and ".seeding-" not in p.name),
            key=lambda p: p.stat().st_mtime,
        )
        for stale in old[: max(len(old) - KEEP_OLD_CACHES, 0)]:
            shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        return  # read-only home: numba falls back to its own locations
    numba.config.CACHE_DIR = str(folder)
    _register_locator(str(folder))


def _seed(folder: Path, prebuilt: Path | None) -> None:
    """Copy a prebuilt cache's files, each checked, into a cache ``folder`` that does not exist yet
    (a folder that exists holds the user's own compiles: left as it is). A copy that fails or finds
    a damaged file leaves no folder behind (one line says so), so that numba compiles afresh."""
    if prebuilt is None or folder.exists():
        return
    partial = folder.with_name(folder.name + f".seeding-{os.getpid()}")
    try:
        problem = copy_prebuilt(prebuilt, partial)
        if problem is None:
            os.replace(partial, folder)
            return
        print(f"flocksim: the prebuilt kernels in {prebuilt} are not used: {problem}", file=sys.stderr)
    except OSError:
        pass
    shutil.rmtree(partial, ignore_errors=True)
