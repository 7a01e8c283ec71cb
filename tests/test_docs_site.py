"""The documentation site builds with warnings as errors (broken links and anchors, docstrings mkdocstrings
cannot read, pages missing from the navigation) and carries the API reference (``./dev.sh docs`` serves it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        capture_output=True, text=True, timeout=600, cwd=ROOT, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip
    assert result.returncode == 0, "mkdocs build --strict failed:\n" + result.stderr[-5000:]
    return out


def test_every_doc_page_is_in_the_site(site):
    for page in (ROOT / "docs").rglob("*.md"):
        relative = page.relative_to(ROOT / "docs").with_suffix("")
        built = site / (relative.parent if relative.name == "index" else relative) / "index.html"
        assert built.is_file(), f"{page.relative_to(ROOT)} has no page in the site"


def test_the_api_reference_is_generated_from_the_docstrings(site):
    simulation = (site / "api" / "simulation" / "index.html").read_text(encoding="utf-8")
    # the docstring of Simulation.query_radius, rendered: the class and its methods are documented
    assert "flocksim.simulation.Simulation" in simulation
    assert "query_radius" in simulation and "reused when large enough" in simulation
    metrics = (site / "api" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "polarization" in metrics
    # the docstrings' Sphinx roles (:class:`X`) are shown as code (docs/_ext/sphinx_roles.py), not as typed
    for page in (site / "api").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not [role for role in (":class:", ":func:", ":mod:", ":meth:") if role in text], page


def test_the_design_page_numbers_the_behaviours(site):
    design = (site / "design" / "index.html").read_text(encoding="utf-8")
    for section in ("1.2 Two-phase steps", "3.4 Steering transform", "4.2 Shared by mass", "5.1 Inertial-spin"):
        assert section in design, section


def test_every_design_section_the_code_cites_exists():
    design = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^##+ (\d+(?:\.\d+)?)\.? ", design, re.MULTILINE))
    cited: dict[str, set[str]] = {}
    for path in [*(ROOT / "src").rglob("*.py"), *(ROOT / "docs").glob("*.md")]:
        text = path.read_text(encoding="utf-8")
        if "design.md" in text or path.name == "design.md":
            for number in re.findall(r"§(\d+(?:\.\d+)?)", text):
                cited.setdefault(number, set()).add(str(path.relative_to(ROOT)))
    assert len(cited) > 10, "the code no longer cites docs/design.md"
    missing = {number: sorted(paths) for number, paths in cited.items() if number not in sections}
    assert not missing, f"sections cited but not in docs/design.md: {missing}"
