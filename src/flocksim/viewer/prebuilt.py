"""Kernels an install carries: ``flocksim compile --prebuilt``.

Compiles presets for the portable target (:mod:`flocksim._kernel_target`: x86-64-v3) into a fresh
cache folder, then puts that folder into the installed package as ``_prebuilt_kernels/cache`` with
a manifest: the kernel sources' digest, numba's and Python's versions, the architecture, the
presets, and each file's size and SHA-256. A wheel built afterwards from the checkout carries it
(pyproject.toml's package data); so does a Docker image that runs the command after its ``pip
install``. Where the manifest matches, the first import copies the files (each checked against its
SHA-256) into the user's cache and the kernels load without a compile on any CPU with the
baseline's features.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from flocksim._kernel_target import (
    BASELINE,
    BASELINE_FEATURES,
    ENV,
    MANIFEST,
    PREBUILT_FOLDER,
    host_has_baseline,
    runtime_tag,
)
from flocksim._numba_cache import PACKAGE_DIR, source_digest
from flocksim.viewer.compile_ahead import CompileAheadError, Outcome, _compile_one, compile_ahead


def file_digests(folder: Path) -> dict[str, dict[str, int | str]]:
    """Every file under ``folder``: its path relative to it (``/``-separated), size [bytes] and SHA-256."""
    found: dict[str, dict[str, int | str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        found[path.relative_to(folder).as_posix()] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return found


def check_destination(package_dir: Path) -> Path:
    """Where the prebuilt kernels go; refuses a destination that is a symlink or not a folder."""
    dest = package_dir / PREBUILT_FOLDER
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise CompileAheadError(f"--prebuilt: {dest} exists and is not a plain folder; it is left as it is")
    return dest


def write_prebuilt(compiled: Path, dest: Path, digest: str, presets: Sequence[str]) -> dict:
    """Put the cache folder ``compiled`` (kernels for the portable target of sources ``digest``) at
    ``dest`` as ``cache/`` with its manifest, replacing what was there only once the new one is
    complete; returns the manifest."""
    manifest = {
        "sources": digest,
        "target": BASELINE,
        **runtime_tag(),
        "presets": sorted(presets),
        "made_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": file_digests(compiled),
    }
    staging = dest.with_name(dest.name + f".new-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    shutil.copytree(compiled, staging / "cache")
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    if dest.exists():
        shutil.rmtree(dest)
    os.replace(staging, dest)
    return manifest


def make_prebuilt(
    names: Sequence[str],
    jobs: int,
    overrides: Sequence[str] = (),
    say: Callable[[str], None] = print,
    package_dir: Path = PACKAGE_DIR,
    compile_one: Callable[[str, Sequence[str], Mapping[str, str]], Outcome] = _compile_one,
) -> list[Outcome]:
    """Compile ``names`` for the portable target into a fresh folder and, when every preset
    compiled, replace ``package_dir``'s prebuilt kernels with it (the old ones stay until the new
    ones are complete). Returns the outcomes (:func:`compile_ahead`)."""
    if overrides:
        raise CompileAheadError("--prebuilt: no --set: the prebuilt kernels are the presets' own")
    if not host_has_baseline():
        raise CompileAheadError(
            f"--prebuilt: this CPU lacks {BASELINE}'s features ({', '.join(BASELINE_FEATURES)}); "
            "make the prebuilt kernels on an x86-64 CPU that has them"
        )
    dest = check_destination(package_dir)
    digest = source_digest(package_dir)
    with tempfile.TemporaryDirectory(prefix="flocksim-prebuilt-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES")}
        env.update({ENV: "portable", "NUMBA_CACHE_DIR": tmp})
        outcomes = compile_ahead(names, jobs, (), say, lambda name, _overrides: compile_one(name, (), env))
        if not all(o.ok for o in outcomes):
            return outcomes
        compiled = Path(tmp) / f"flocksim-{digest}-{BASELINE}"
        if not compiled.is_dir():
            raise CompileAheadError(f"--prebuilt: the compile left no cache in {compiled}")
        manifest = write_prebuilt(compiled, dest, digest, [o.name for o in outcomes])
    size = sum(f["bytes"] for f in manifest["files"].values())
    say(
        f"flocksim compile: prebuilt kernels for {len(outcomes)} presets in {dest} ({size / 1e6:.1f} MB, "
        f"{len(manifest['files'])} files): installs of these sources with numba {manifest['numba']} and Python "
        f"{manifest['python']} load them on any {BASELINE} CPU"
    )
    return outcomes
