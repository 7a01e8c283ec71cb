"""docs/design.md's layer map (§10) is the layers contract of pyproject.toml that ``lint-imports``
checks (./dev.sh test runs it): the same layers, top first, each with the same modules."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "layers" and c["containers"] == ["flocksim"]]
    assert contract["exhaustive"]
    return [{name.strip() for name in re.split(r"[|:]", layer)} for layer in contract["layers"]]


def documented_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    section = text[text.index("## 10. Layers") : text.index("## References")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [set(re.findall(r"`([^`]+)`", row.split(" | ")[0])) for row in rows]


def test_the_design_layer_map_is_the_contract():
    assert documented_layers() == contract_layers()


def test_every_module_of_the_package_has_a_layer():
    """The contract is exhaustive (lint-imports fails on a module left out); the map names the same."""
    package = ROOT / "src" / "flocksim"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in package.glob("*/__init__.py")}
    assert set().union(*documented_layers()) == modules
