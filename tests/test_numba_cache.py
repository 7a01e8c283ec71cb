"""The numba cache folder is keyed on the kernel sources only (flocksim/_numba_cache.py)."""

from __future__ import annotations

from pathlib import Path

import flocksim
from flocksim._numba_cache import kernel_sources, source_digest

PACKAGE = Path(flocksim.__file__).resolve().parent


def _fake_package(root: Path) -> Path:
    """A package with a jitted module ``kernel`` importing ``helper`` (which imports ``deep``), and
    an unrelated ``command`` module that imports the kernel."""
    files = {
        "kernel.py": "import numba\nfrom flocksim.helper import SCALE\n\n@numba.njit(cache=True)\ndef f(x):\n"
        "    return SCALE * x\n",
        "helper.py": "from flocksim.deep import BASE\nSCALE = BASE * 2.0\n",
        "deep.py": "BASE = 1.5\n",
        "command.py": "from flocksim.kernel import f\nprint(f(1.0))\n",
        "__init__.py": "",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def test_kernel_sources_follow_the_imports_of_jitted_modules(tmp_path):
    package = _fake_package(tmp_path)
    assert [p.name for p in kernel_sources(package)] == ["deep.py", "helper.py", "kernel.py"]


def test_the_digest_changes_with_a_kernel_source_and_not_with_other_code(tmp_path):
    package = _fake_package(tmp_path)
    before = source_digest(package)
    (package / "command.py").write_text("print('edited')\n")
    assert source_digest(package) == before
    (package / "deep.py").write_text("BASE = 2.5\n")  # a constant a kernel freezes, two imports away
    assert source_digest(package) != before


def test_a_submodule_imported_from_the_package_does_not_make_its_init_a_source(tmp_path):
    package = _fake_package(tmp_path)
    (package / "__init__.py").write_text("from flocksim.command import f\n")  # a package that imports everything
    (package / "kernel.py").write_text(
        (package / "kernel.py")
        .read_text()
        .replace(
            "from flocksim.helper import SCALE",
            "from flocksim import helper, deep  # both modules\nSCALE = helper.SCALE",
        )
    )
    assert [p.name for p in kernel_sources(package)] == ["deep.py", "helper.py", "kernel.py"]
    (package / "kernel.py").write_text(
        "import numba\nfrom flocksim import helper, VERSION\n\n@numba.njit\ndef g():\n    return VERSION\n"
    )  # a name of __init__
    assert [p.name for p in kernel_sources(package)] == [
        "__init__.py",
        "command.py",
        "deep.py",
        "helper.py",
        "kernel.py",
    ]


def test_flocksims_kernel_sources():
    names = {str(p.relative_to(PACKAGE)) for p in kernel_sources(PACKAGE)}
    assert {"engines/cpu_reynolds_grid.py", "space.py", "kernels/compile.py", "params/common.py"} <= names
    assert not {"cli_run.py", "cli.py", "render/movie.py", "validate/suite.py", "__init__.py", "simulation.py"} & names
    assert not any(name.startswith("viewer/") for name in names)


PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
from numba.core import event

compiled = []


class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(1)

    def on_end(self, ev):
        pass


event.register("numba:compile", Count())
import flocksim

assert flocksim.__file__.startswith(sys.argv[1]), flocksim.__file__
from flocksim.neighbors.query import _cell

assert _cell(5, 3) == 2
from numba.core.registry import cpu_target

from flocksim import _numba_cache

cpu = cpu_target.target_context.codegen().magic_tuple()[1]
print(_numba_cache.target.name, cpu, len(compiled))  # the kernels' target, numba's CPU name, the compiles
"""


def _install_copy(root: Path) -> Path:
    """The package's sources copied to ``root`` (another install of the same version)."""
    import shutil

    ignore = shutil.ignore_patterns("__pycache__", "static", "_prebuilt_kernels")
    shutil.copytree(PACKAGE, root / "flocksim", ignore=ignore)
    return root


def test_one_compile_serves_every_install_of_the_same_sources(tmp_path):
    """Two installs of the same sources in different folders (a checkout and a wheel's venv): a
    kernel compiled by the first loads from the cache in the second, with the user's
    NUMBA_CACHE_DIR and with flocksim's own folder alike (numba alone keys its cache on the
    install's folder and compiled again)."""
    import os
    import subprocess
    import sys

    first, second = _install_copy(tmp_path / "a"), _install_copy(tmp_path / "b")
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    for where in ({"NUMBA_CACHE_DIR": str(tmp_path / "user")}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}):

        def compiles(root: Path, where: dict = where) -> int:
            done = subprocess.run(
                [sys.executable, str(script), str(root)], env={**env, **where}, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
            return int(done.stdout.split()[-1])

        assert compiles(first) >= 1  # an empty cache
        assert compiles(first) == 0
        assert compiles(second) == 0, where
