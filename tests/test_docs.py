"""The documentation stays true: the generated parameter reference and the preset list."""

from pathlib import Path

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
