"""Which CPU flocksim's kernels are compiled for: this machine's own, or a portable baseline.

numba compiles for the CPU it runs on (``znver3``, ``skylake-avx512``, ...) and files every compiled
kernel in its cache under that CPU's name and feature list, so a cache filled on one model of CPU is
of no use on another. The portable target compiles for x86-64-v3 (AVX2, FMA, BMI2: x86-64 CPUs
since about 2015), the same code on every machine that has those features, so one compile (kernels
shipped inside a wheel, a Docker image, a cluster's shared cache folder) loads on all of them.

``FLOCKSIM_KERNEL_TARGET`` chooses:

- ``auto`` (the default): portable when this install carries prebuilt kernels (``flocksim compile
  --prebuilt``) for its own sources, numba and Python, and this CPU has the baseline's features;
  this machine's CPU otherwise;
- ``host``: this machine's CPU;
- ``portable``: the baseline, where this CPU has its features (this machine's CPU otherwise).

A NUMBA_CPU_NAME of the user's own wins over all three. The choice is made once, before the first
kernel compiles (numba fixes its code generator then). Measured on a 2-core AMD EPYC (Zen 3): the
same results bit for bit, and steps within 5 % of the host target's (docs/benchmarks.md, "A cache
a wheel can carry").
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

ENV = "FLOCKSIM_KERNEL_TARGET"
CHOICES = ("auto", "host", "portable")
BASELINE = "x86-64-v3"
"""LLVM's name for the x86-64 psABI level 3."""
BASELINE_FEATURES = ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
"""The CPU features x86-64-v3 requires beyond the older levels (SSE4.2, POPCNT, CX16 included there)."""
X86_64 = ("x86_64", "amd64")
PREBUILT_FOLDER = "_prebuilt_kernels"
"""Inside the package: ``manifest.json`` and ``cache/``, a kernel cache folder for the portable target."""
MANIFEST = "manifest.json"


class KernelTargetError(ValueError):
    """FLOCKSIM_KERNEL_TARGET names no target."""


@dataclass(frozen=True)
class Target:
    """The chosen target: ``name`` "host", "portable" or "user" (the user's NUMBA_CPU_NAME),
    ``why`` in words, and ``prebuilt`` the prebuilt cache folder to seed from (None: none)."""

    name: str
    why: str
    prebuilt: Path | None = None

    @property
    def cache_suffix(self) -> str:
        """Appended to the cache folder's name: the portable target's kernels apart from the host's."""
        return f"-{BASELINE}" if self.name == "portable" else ""


def runtime_tag() -> dict[str, str]:
    """What a prebuilt cache must match besides the sources: numba's version (its cache index is
    versioned), Python's (the cache files are named for it) and the machine's architecture."""
    import numba

    return {
        "numba": numba.__version__,
        "python": f"{sys.version_info.major}.{sys.version_info.minor}",
        "machine": platform.machine().lower(),
    }


def host_has_baseline() -> bool:
    """This CPU runs x86-64-v3 code: an x86-64 machine with every feature in :data:`BASELINE_FEATURES`."""
    if platform.machine().lower() not in X86_64:
        return False
    import llvmlite.binding as ll

    try:
        features = ll.get_host_cpu_features()
    except RuntimeError:  # llvmlite cannot read this CPU's features
        return False
    return all(features.get(name, False) for name in BASELINE_FEATURES)


def read_manifest(prebuilt: Path) -> dict | None:
    """The prebuilt cache's manifest, or None when there is none or it cannot be read."""
    try:
        manifest = json.loads((prebuilt / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def prebuilt_matches(prebuilt: Path, digest: str) -> bool:
    """The prebuilt cache at ``prebuilt`` was compiled for these kernel sources (``digest``), this
    numba, this Python and this architecture, for the portable target."""
    manifest = read_manifest(prebuilt)
    if manifest is None or not (prebuilt / "cache").is_dir():
        return False
    wanted = {"sources": digest, "target": BASELINE, **runtime_tag()}
    return all(manifest.get(key) == value for key, value in wanted.items())


def choose(digest: str, package_dir: Path, environ: dict[str, str] | None = None) -> Target:
    """The target for this process (see the module's docstring); raises :class:`KernelTargetError`
    for a FLOCKSIM_KERNEL_TARGET that names none."""
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_CPU_NAME"):
        return Target("user", f"NUMBA_CPU_NAME={environ['NUMBA_CPU_NAME']} (set by you)")
    asked = (environ.get(ENV) or "auto").strip().lower()
    if asked not in CHOICES:
        raise KernelTargetError(f"{ENV}={environ.get(ENV)!r}: expected one of {', '.join(CHOICES)}")
    if asked == "host":
        return Target("host", f"{ENV}=host")
    prebuilt = package_dir / PREBUILT_FOLDER
    carried = prebuilt_matches(prebuilt, digest)
    if asked == "auto" and not carried:
        return Target("host", "no prebuilt kernels for these sources, numba and Python in this install")
    if not host_has_baseline():
        return Target("host", f"this CPU lacks {BASELINE}'s features ({', '.join(BASELINE_FEATURES)})")
    seed = prebuilt if carried else None
    why = "prebuilt kernels in this install" if asked == "auto" else f"{ENV}=portable"
    return Target("portable", why, seed)


def apply(target: Target) -> bool:
    """Make numba compile for ``target`` from now on; False (and nothing changed) when numba's CPU
    code generator already exists (something compiled before flocksim was imported), which fixes
    the target it compiles for."""
    if target.name != "portable":
        return True
    import numba
    from numba.core.registry import cpu_target

    if "_toplevel_target_context" in vars(cpu_target):
        return False
    numba.config.CPU_NAME = BASELINE
    numba.config.CPU_FEATURES = ""  # the baseline's own features, none added or removed
    return True


def copy_prebuilt(prebuilt: Path, dest: Path) -> str | None:
    """Copy the prebuilt cache's files listed in its manifest into ``dest`` (a new folder), each
    checked against the manifest's size and SHA-256 as it is read; returns None when all were
    copied, else what was wrong (``dest`` is then incomplete: the caller removes it)."""
    manifest = read_manifest(prebuilt) or {}
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return f"{prebuilt / MANIFEST} lists no files"
    source = (prebuilt / "cache").resolve()
    for relative, expected in files.items():
        path = (source / relative).resolve()
        if not path.is_relative_to(source) or not isinstance(expected, dict):
            return f"{relative}: not a file of the prebuilt cache"
        try:
            data = path.read_bytes()
        except OSError as exc:
            return f"{relative}: {exc.strerror or exc}"
        if len(data) != expected.get("bytes") or hashlib.sha256(data).hexdigest() != expected.get("sha256"):
            return f"{relative}: its size or SHA-256 differs from the manifest's"
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return None
