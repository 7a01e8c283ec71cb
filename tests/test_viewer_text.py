"""What users read names published work, never our internal source documents (issue 16).

Scene descriptions (``flocksim presets``, the viewer's scene list), the page, the viewer and
preset docs and every command's ``--help`` must not cite "seed 00x" or "SPEC x.y": a user has
never seen those documents.
"""

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flocksim import load_preset
from flocksim.cli import app
from flocksim.scenarios import preset_names

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"\bseed[- ]?00\d\b|\bSPEC\b|\bseeds? 00\d", re.IGNORECASE)
"""Citations of the internal documents, as "seed" + " 003", "SP" + "EC 6.3" or "(SP" + "EC)" (the examples are
split here so that a plain grep for such citations finds nothing in the repository)."""


def internal_citations(text: str) -> list[str]:
    return [text[max(m.start() - 30, 0) : m.end() + 30] for m in INTERNAL.finditer(text)]


@pytest.mark.parametrize("name", preset_names())
def test_scene_descriptions_cite_no_internal_document(name):
    description = load_preset(name).description
    assert not internal_citations(description), description
    assert len(description) > 40, description


@pytest.mark.parametrize(
    "path", ["docs/viewer.md", "docs/presets.md", "docs/protocol.md", "web/index.html", *sorted(
        str(p.relative_to(ROOT)) for p in (ROOT / "src/flocksim/scenarios/presets").glob("*.toml"))]
)  # fmt: skip
def test_user_documents_cite_no_internal_document(path):
    assert not internal_citations((ROOT / path).read_text(encoding="utf-8")), path


def _commands(group, prefix=()):
    import typer.main

    click_group = typer.main.get_command(group)
    yield prefix
    for name in getattr(click_group, "commands", {}):
        yield (*prefix, name)


def test_every_help_text_cites_no_internal_document():
    runner = CliRunner()
    for command in _commands(app):
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, (command, result.output)
        assert not internal_citations(result.output), (command, internal_citations(result.output))


def test_the_pattern_finds_what_it_should():
    spec, seed = "SP" + "EC", "seed" + " 00"  # split: see INTERNAL
    for text in (f"{seed.title()}3's 2D starlings", f"as in {seed}2", f"({spec} 6.9)", f"{spec} 3.10", "seed-003"):
        assert internal_citations(text), text
    for text in ("--seed 3", "seeds 0..N-1", "Ballerini et al. 2008", "seed = 0", "specular"):
        assert not internal_citations(text), text


def test_the_description_follows_the_agent_count():
    """A changed ``agents.n`` (a ``set``, or ``set=`` in the page's address) changes the count the
    scene's description mentions: with ``?set=agents.n=10000`` starlings-3d said "500 starlings"."""
    from flocksim.viewer.controls import parse_control
    from flocksim.viewer.limits import params_from_query

    queried = params_from_query("starlings-3d", ["agents.n=10000"], 200_000)
    assert "10 000 starlings" in queried.description and "500" not in queried.description
    base = load_preset("starlings-3d")
    changed = parse_control('{"type": "set", "changes": {"agents.n": 2500}}', base).params
    assert "2500 starlings" in changed.description and "500 starlings" not in changed.description.replace("2500", "")
    large = parse_control('{"type": "set", "changes": {"agents.n": 20000}}', load_preset("starlings-3d-large")).params
    assert "20 000 starlings" in large.description and "100 000" not in large.description
    # a description set with the count wins; other numbers stay; nothing to follow: unchanged
    told = parse_control('{"type": "set", "changes": {"agents.n": 600, "description": "mine"}}', base).params
    assert told.description == "mine"
    assert params_from_query("starlings-3d", ["agents.n=700", "description='x'"], 200_000).description == "x"
    from flocksim.viewer.controls import follow_count

    assert follow_count("1500 fish over 500 corals", 500, 9) == "1500 fish over 9 corals"
    assert follow_count("400 particles in a 10 x 10 box", 400, 100_000) == "100 000 particles in a 10 x 10 box"
    assert follow_count("no count here", 500, 600) == "no count here"
    for name in preset_names():  # every shipped scene names its count, and follows it
        params = load_preset(name)
        assert follow_count(params.description, params.agents.n, 12_345) != params.description, name
