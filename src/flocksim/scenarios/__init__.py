"""Shipped presets: TOML parameter files in ``presets/``, one per scene."""

from __future__ import annotations

from importlib import resources
from typing import Any

from flocksim.compile_notice import register_presets
from flocksim.components.registry import register_component
from flocksim.config import AnyParams, ConfigError, loads_toml


def _preset_files() -> dict[str, str]:
    folder = resources.files("flocksim.scenarios") / "presets"
    return {
        p.name.removesuffix(".toml"): p.read_text(encoding="utf-8")
        for p in folder.iterdir()
        if p.name.endswith(".toml")
    }


def preset_names() -> list[str]:
    return sorted(_preset_files())


def load_preset(name: str) -> AnyParams:
    """The parameters of a shipped preset (see ``flocksim presets``)."""
    files = _preset_files()
    if name not in files:
        raise ConfigError(f"preset: unknown preset {name!r}; allowed: {', '.join(sorted(files))}")
    return loads_toml(files[name], source=f"preset {name}")


def preset_descriptions() -> dict[str, str]:
    return {name: load_preset(name).description for name in preset_names()}


def _targets(sim: Any) -> Any:
    """The seek targets of a new simulation (:class:`flocksim.scenarios.targets.Targets`, imported
    only when a run seeks: it brings the navigation code)."""
    from flocksim.scenarios.targets import Targets

    return Targets(sim)


register_component("targets", order=40, wanted=lambda p: p.rules.seek.weight > 0.0, build=_targets)
register_presets(preset_names, load_preset)  # the compile notice compares a run's parameters with them
