"""The light install (``pip install flocksim``) and its extras: the core works with none of them; a
command or function that needs a missing one stops with one line naming it (exit status 2, no
traceback); ``flocksim --version``; help text shows ``flocksim[cuda]`` and the like literally.

A missing package is simulated in a fresh interpreter by a meta-path finder that refuses it (as
if it were not installed), so nothing imported earlier by the test process hides it."""

from __future__ import annotations

import ast
import math
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

import flocksim
from flocksim.cli import app

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "flocksim"
OPTIONAL = {
    "sweep": ("dask", "distributed", "pyarrow"),
    "plot": ("matplotlib",),
    "video": ("av", "matplotlib"),
    "field": ("xarray", "netCDF4", "pandas"),
    "notebook": ("anywidget", "traitlets"),
    "fit": ("pyabc", "dask", "distributed", "xarray", "netCDF4", "pandas", "sklearn"),
}
"""Each extra's modules, written out here so that a change to flocksim._extras.EXTRAS is a deliberate one."""
EVERY_OPTIONAL = sorted({m for modules in OPTIONAL.values() for m in modules})

BLOCKER = textwrap.dedent(
    """
    import sys

    class NotInstalled:
        '''Refuses these top-level modules and their submodules, as if they were not installed.'''

        def __init__(self, names):
            self.names = set(names)

        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in self.names:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled(sys.argv[1].split(",")))
    sys.argv = ["flocksim", *sys.argv[2:]]
    """
)


def run_without(blocked: list[str] | tuple[str, ...], code: str, *args: str, cwd: Path | None = None):
    """Run ``code`` in a fresh interpreter where the modules ``blocked`` cannot be imported;
    ``args`` become ``sys.argv[1:]``."""
    return subprocess.run(
        [sys.executable, "-c", BLOCKER + textwrap.dedent(code), ",".join(blocked), *args],
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )  # fmt: skip


CLI = "from flocksim.cli import main\nmain()\n"


PIP_NAMES = {"sklearn": "scikit-learn"}
"""Modules whose package pip installs has another name: the refusal names the package."""


def message(what: str, extra: str, missing: str) -> str:
    package = PIP_NAMES.get(missing, missing)
    return f"error: {what}: needs the {extra} extra ({package} is not installed): pip install 'flocksim[{extra}]'"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """A folder with a recorded run (run.zarr) and a CSV of tracks (tracks.csv)."""
    folder = tmp_path_factory.mktemp("inputs")
    run = ["run", "boids-2d", "--steps", "4", "--every", "2", "--set", "agents.n=20", "--out", str(folder / "run.zarr")]
    result = CliRunner().invoke(app, run)
    assert result.exit_code == 0, result.output
    rows = [f"{frame},{bird},{frame * 0.1 + bird:.2f},{bird * 0.5:.2f}" for frame in range(6) for bird in range(4)]
    (folder / "tracks.csv").write_text("frame,id,x,y\n" + "\n".join(rows) + "\n")
    return folder


# ----------------------------------------------------------------------------- each extra, missing

CASES = [
    # (extra, module made missing, the command's arguments, the output it must not leave behind)
    ("sweep", "pyarrow", ["sweep", "boids-separation", "-o", "s.parquet"], "s.parquet"),
    ("sweep", "distributed", ["sweep", "boids-separation", "-o", "s.parquet", "--workers", "1"], "s.parquet"),
    ("sweep", "pyarrow", ["plot", "s.parquet", "-x", "rules.separation.weight", "-y", "nnd_mean_mean"], "s.png"),
    ("plot", "matplotlib", ["plot", "run.zarr", "-o", "metrics.png"], "metrics.png"),
    ("plot", "matplotlib", ["analyze", "tracks.csv", "--fps", "25", "--plot", "a.png"], "a.png"),
    ("plot", "matplotlib", ["validate", "--quick", "--only", "vicsek", "-o", "report"], "report"),
    ("video", "av", ["render", "run.zarr", "-o", "flock.mp4", "--size", "64x48"], "flock.mp4"),
    ("field", "xarray", ["analyze", "tracks.csv", "--fps", "25"], None),
    ("field", "netCDF4", ["export", "run.zarr", "-o", "tracks.nc"], "tracks.nc"),
    ("fit", "pyabc", ["fit", "tracks.csv", "--preset", "vicsek", "--prior", "vicsek.eta", "-o", "f.json"], "f.json"),
]


@pytest.mark.parametrize(("extra", "missing", "args", "output"), CASES, ids=lambda v: v if isinstance(v, str) else None)
def test_a_command_without_its_extra_stops_with_one_line_naming_it(files, tmp_path, extra, missing, args, output):
    for name in ("run.zarr", "tracks.csv"):
        (tmp_path / name).symlink_to(files / name)
    result = run_without([missing], CLI, *args, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.splitlines() == [message(f"flocksim {args[0]}", extra, missing)], result.stderr
    assert result.stdout == ""
    if output is not None:
        assert not (tmp_path / output).exists()


def test_the_notebook_widget_without_its_extra_names_it():
    code = """
        import flocksim
        sim = flocksim.Simulation(flocksim.load_preset("boids-2d"), seed=1)
        try:
            flocksim.widget(sim)
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    result = run_without(["anywidget"], code)
    assert result.returncode == 0, result.stderr
    expected = message("flocksim.widget", "notebook", "anywidget").removeprefix("error: ")
    assert result.stdout.strip() == f"MissingExtraError {expected}"


@pytest.mark.parametrize(
    ("extra", "missing", "call", "what"),
    [
        ("field", "xarray", "flocksim.io.open_run('run.zarr')", "flocksim.io.open_run"),
        ("field", "pandas", "flocksim.io.open_tracks('tracks.csv', fps=25)", "flocksim.io.open_tracks"),
        ("video", "av", "flocksim.render.render_run('run.zarr', 'f.mp4')", "flocksim.render.render_run"),
        ("plot", "matplotlib", "flocksim.plotting.plot_metrics('run.zarr', 'm.png')", "flocksim.plotting.plot_metrics"),
        ("sweep", "dask", "import flocksim.sweep", "flocksim.sweep"),
        ("fit", "pyabc", "flocksim.fit('tracks.csv', 'vicsek', ['vicsek.eta'])", "flocksim.fit"),
        ("fit", "sklearn", "flocksim.fit('tracks.csv', 'vicsek', ['vicsek.eta'])", "flocksim.fit"),  # scikit-learn
    ],
)
def test_an_api_function_without_its_extra_names_it(files, tmp_path, extra, missing, call, what):
    for name in ("run.zarr", "tracks.csv"):
        (tmp_path / name).symlink_to(files / name)
    code = f"""
        import flocksim, flocksim.io, flocksim.plotting, flocksim.render
        try:
            {call}
        except ImportError as exc:
            print(type(exc).__name__, exc)
        """
    result = run_without([missing], code, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"MissingExtraError {message(what, extra, missing).removeprefix('error: ')}"


# ----------------------------------------------------------------------------- the core, with no extra


def test_the_core_works_with_no_extra_installed(tmp_path):
    code = """
        import flocksim
        from starlette.testclient import TestClient
        from typer.testing import CliRunner
        from flocksim.cli import app
        from flocksim.viewer.server import create_app

        runner = CliRunner()
        for args in (["--help"], ["--version"], ["presets"], ["show", "boids-2d"],
                     ["run", "boids-2d", "--steps", "3", "--set", "agents.n=30", "--out", "run.zarr"],
                     ["info", "run.zarr"]):
            result = runner.invoke(app, args)
            assert result.exit_code == 0, (args, result.output, result.exception)
        with TestClient(create_app(sps=0, port=8000)) as client:
            page = client.get("/")
            assert page.status_code == 200 and "<html" in page.text.lower(), page.text[:200]
        print("ok")
        """
    result = run_without(EVERY_OPTIONAL, code, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")


def _top_level_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """The modules imported when the file is imported: module-level statements, also inside if/try."""
    found = []
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.If) and not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
    return found


def _first_require_line(tree: ast.Module) -> float:
    """The line of the module's first top-level ``require(...)`` call (inf: none)."""
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id == "require":
                return node.lineno
    return math.inf


def test_optional_packages_are_imported_only_where_needed():
    """An optional package is imported inside the function that needs it, after the module's own
    top-level ``require`` of its extra, or at the top of a module of flocksim.sweep or
    flocksim.notebook, packages whose __init__ checks their extra first."""
    guarded = (PACKAGE / "sweep", PACKAGE / "notebook")
    eager = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent in guarded:
            continue
        tree = ast.parse(path.read_text(), str(path))
        required_at = _first_require_line(tree)
        for line, module in _top_level_imports(tree):
            if module.partition(".")[0] in EVERY_OPTIONAL and line < required_at:
                eager.append(f"{path.relative_to(ROOT)}:{line}: import {module}")
    assert not eager, eager
    for folder in guarded:
        init = (folder / "__init__.py").read_text()
        assert re.search(r"^require\(\"\w+\", \"flocksim\.\w+\"\)$", init, re.MULTILINE), folder


# ----------------------------------------------------------------------------- packaging metadata


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_extras_are_declared_and_all_holds_every_one():
    from flocksim._extras import EXTRAS

    assert EXTRAS == OPTIONAL
    extras = _project()["optional-dependencies"]
    for extra in OPTIONAL:
        assert extra in extras, extra
    everything = re.fullmatch(r"flocksim\[([\w,]+)\]", extras["all"][0].replace(" ", ""))
    assert len(extras["all"]) == 1 and everything, extras["all"]
    assert set(everything.group(1).split(",")) == set(OPTIONAL)
    for kept in ("cuda", "dev", "bench"):
        assert kept in extras


def test_install_md_lists_the_packages_of_every_extra():
    """docs/install.md's table of extras names each package pyproject.toml gives the extra (its
    `bench` row said scipy alone, without pykdtree and warp-lang)."""
    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `([a-z]+)` \| ([^|]+) \|", text, flags=re.MULTILINE))
    extras = _project()["optional-dependencies"]
    assert set(rows) == set(extras), "docs/install.md: one row per extra"
    for extra, requirements in extras.items():
        if extra in ("all", "dev"):  # "every extra above"; the dev row names the main tools only
            continue
        listed = {re.split(r"[\[ ]", item.strip(), maxsplit=1)[0].lower() for item in rows[extra].split(",")}
        for requirement in requirements:
            name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()
            assert name in listed, f"docs/install.md: [{extra}] does not name {name}"


def test_library_dependencies_are_ranges_not_pins():
    project = _project()
    declared = [*project["dependencies"], *(r for reqs in project["optional-dependencies"].values() for r in reqs)]
    pinned = [r for r in declared if "==" in r.partition(";")[0]]  # the version, not an environment marker
    assert not pinned, f"exact pins belong in requirements/constraints.txt: {pinned}"
    core = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in project["dependencies"]}
    heavy = {"dask", "distributed", "pyarrow", "matplotlib", "av", "xarray", "netcdf4", "pandas", "anywidget"}
    assert not core & heavy, f"in the core dependencies: {sorted(core & heavy)}"


def test_the_constraints_file_pins_every_extra_package():
    pins = {
        line.split("==")[0].strip().lower().replace("_", "-")
        for line in (ROOT / "requirements" / "constraints.txt").read_text().splitlines()
        if "==" in line and not line.lstrip().startswith("#")
    }
    extras = _project()["optional-dependencies"]
    for extra in (*OPTIONAL, "cuda", "dev", "bench"):
        for requirement in extras[extra]:
            name = re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
            assert name in pins, f"[{extra}] {name} is not pinned in requirements/constraints.txt"


# ----------------------------------------------------------------------------- --version and help text


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_package_version(flag):
    result = CliRunner().invoke(app, [flag])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"flocksim {flocksim.__version__}\n"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", flocksim.__version__)


def _changelog_sections() -> list[str]:
    """CHANGELOG.md's section headings, top first: ``Unreleased`` or a version (its date left off)."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    return [heading.split(" (")[0].strip() for heading in re.findall(r"^## (.+)$", text, flags=re.MULTILINE)]


def test_the_version_is_the_changelogs_latest_release_or_a_dev_version_after_it():
    """A clone without git tags reported 0.1.0.dev495+g..., which PEP 440 orders before the 0.1.0
    of CHANGELOG.md's latest section: the version now lives in the source."""
    from packaging.version import Version

    sections = _changelog_sections()
    released = [Version(s) for s in sections if s != "Unreleased"]
    assert released, sections
    latest, version = released[0], Version(flocksim.__version__)
    if version.is_devrelease:
        assert sections[0] == "Unreleased", f"{version}: a development version needs an Unreleased section on top"
        assert version > latest, f"{version} is ordered before the latest release, {latest}"
        assert Version(version.base_version) not in released, f"{version.base_version} is already released"
    else:
        assert sections[0] == str(version), f"the release {version} needs CHANGELOG.md's first section; {sections[0]}"
    assert not version.local, f"{version}: no local part (+g<hash>) in a version kept in the source"


def test_the_installed_metadata_carries_the_sources_version():
    """What pip reports is what ``flocksim --version`` says: the build reads src/flocksim/_version.py
    (``[tool.setuptools.dynamic]``), not git tags. A stale install fails here: ``./dev.sh setup``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("flocksim")
    except PackageNotFoundError:
        pytest.skip("flocksim is imported from a source tree, not installed")
    assert installed == flocksim.__version__, "reinstall: ./dev.sh setup (or pip install -e .)"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "flocksim._version.__version__"}
    assert "setuptools_scm" not in project["tool"], "setuptools-scm would set the version from git tags"


RICH_TAG = re.compile(r"(?<!\\)\[[a-zA-Z#/@][^\[\]]*\]")
"""What rich's markup takes for a tag and swallows: an opening bracket not escaped by a backslash."""


def _help_texts() -> list[tuple[str, str]]:
    root = typer.main.get_command(app)
    texts = [("flocksim", root.help or "")]
    for name, command in root.commands.items():
        texts.append((name, command.help or ""))
        texts += [(f"{name} {p.name}", getattr(p, "help", None) or "") for p in command.params]
    return texts


def test_no_help_text_has_brackets_that_rich_markup_would_swallow():
    swallowed = [(where, RICH_TAG.findall(text)) for where, text in _help_texts() if RICH_TAG.search(text)]
    assert not swallowed, swallowed


def test_run_help_shows_the_cuda_extra_literally():
    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    assert result.exit_code == 0, result.output
    assert "pip install 'flocksim[cuda]'" in result.stdout, result.stdout
