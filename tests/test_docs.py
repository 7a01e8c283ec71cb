"""The documentation stays true: the generated parameter reference, the preset list, and no internal citations."""

import re
import subprocess
from pathlib import Path

import pytest

from flocksim import preset_names
from flocksim.schema_docs import markdown_reference

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_parameter_reference_is_current():
    text = (DOCS / "parameters.md").read_text(encoding="utf-8")
    assert text.endswith(markdown_reference()), "regenerate with: flocksim schema --markdown"


def test_every_preset_is_documented():
    text = (DOCS / "presets.md").read_text(encoding="utf-8")
    for name in preset_names():
        assert name in text, f"docs/presets.md does not describe {name}"


ROOT = DOCS.parent
# What a user reads: docs, README, the package (docstrings, CLI help, presets), the page, benchmarks, examples.
USER_FACING = ["docs", "README.md", "CHANGELOG.md", "src", "web/src", "web/index.html", "benchmarks", "examples"]
# Citations of the project's internal planning documents, which live outside the repository: "SP" "EC 3.4",
# "seed" " 003", "seeds 000, 001" (also broken across a line), "seeds/", "ARCHITECTURE" (the examples are split
# so that a plain grep for such citations finds nothing in the repository).
INTERNAL_CITATION = re.compile(r"\bSPEC\b|[Ss]eeds?\s+00\d|seeds/|\bARCHITECTURE\b")


def _tracked_text_files(paths: list[str]) -> list[Path]:
    """Tracked files under ``paths`` (per ``git ls-files``) whose bytes decode as UTF-8 text without NUL bytes."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    files = []
    for name in listed.decode("utf-8").split("\0"):
        if not name or not (ROOT / name).is_file():
            continue
        data = (ROOT / name).read_bytes()
        if b"\0" in data:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        files.append(ROOT / name)
    return files


def test_no_internal_planning_citations():
    files = _tracked_text_files(USER_FACING)
    assert any(f.name == "README.md" for f in files), "git ls-files listed none of the user-facing files"
    offending: dict[str, list[str]] = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        for match in INTERNAL_CITATION.finditer(text):
            number = text.count("\n", 0, match.start()) + 1
            line = lines[number - 1]
            offending.setdefault(str(path.relative_to(ROOT)), []).append(f"{number}: {line.strip()[:100]}")
    report = "\n".join(f"{name} ({len(hits)}):\n    " + "\n    ".join(hits) for name, hits in offending.items())
    assert not offending, (
        "these files cite the internal spec or source documents (cite docs/ or the published papers instead):\n"
        + report
    )


def _section(text: str, heading: str) -> str:
    """The text under the Markdown heading ``heading`` (e.g. "## Guides"), up to the next of its level."""
    level = heading.split(" ")[0]
    start = text.index(f"\n{heading}\n")
    end = text.find(f"\n{level} ", start + len(heading) + 2)
    return text[start : end if end >= 0 else len(text)]


def test_every_guide_is_listed_on_the_home_page_and_in_the_readme():
    """index.md's guides and the README's documentation list name every page (they left out fit,
    field data and notebooks)."""
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "index.md")
    assert {"fitting.md", "field-data.md", "notebook.md", "install.md"} <= set(pages)
    guides = _section((DOCS / "index.md").read_text(encoding="utf-8"), "## Guides")
    readme = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Documentation")
    assert [p for p in pages if f"]({p})" not in guides] == [], "docs/index.md, Guides: add the page"
    assert [p for p in pages if f"`docs/{p}`" not in readme] == [], "README.md, Documentation: add the page"
