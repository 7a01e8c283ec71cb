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


def test_flocksims_kernel_sources():
    names = {str(p.relative_to(PACKAGE)) for p in kernel_sources(PACKAGE)}
    assert {"engines/cpu_reynolds_grid.py", "space.py", "kernels/compile.py", "params/common.py"} <= names
    assert not {"cli_run.py", "cli.py", "render/movie.py", "validate/suite.py"} & names
