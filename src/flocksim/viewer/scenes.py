"""How the viewer shows each shipped scene: the modes (2D, 3D) it is offered in, what its agents
are called, and the world drawn around them in 3D.

A scene is offered only in the modes where it has a meaning: people walk and game enemies chase
on the ground (2D only); Flappy Boids, the coral reef and Couzin's 3D school are 3D only. The
page disables the other mode's button (with the reason in its tooltip) and the server refuses a
``mode`` message for it. Parameters that started from no shipped scene are offered in both.

``look``: ``"sky"`` (birds at dusk) or ``"sea"`` (fish under water: water colour and depth fog, a
seabed, light from above, fish-shaped agents).
"""

from __future__ import annotations

from dataclasses import dataclass

from flocksim.viewer.controls import ControlError


@dataclass(frozen=True)
class SceneLook:
    """The viewer's presentation of one scene."""

    modes: tuple[int, ...] = (2, 3)
    """Dimensions the scene is offered in."""
    agent: str = "bird"
    """What one agent is called (the legend's "selected bird")."""
    look: str = "sky"
    """The 3D world drawn around the agents: "sky" or "sea"."""


DEFAULT = SceneLook()
SCENES: dict[str, SceneLook] = {
    "crowd": SceneLook(modes=(2,), agent="person"),
    "crowd-maze": SceneLook(modes=(2,), agent="person"),
    "enemies": SceneLook(modes=(2,), agent="enemy"),
    "minions": SceneLook(modes=(2,), agent="minion"),
    "couzin": SceneLook(modes=(3,), agent="fish", look="sea"),
    "reef": SceneLook(modes=(3,), agent="fish", look="sea"),
    "flappy-boids": SceneLook(modes=(3,), agent="fish", look="sea"),
    "vicsek": SceneLook(agent="particle"),
    "boids-2d": SceneLook(agent="boid"),
}


def scene_look(name: str | None) -> SceneLook:
    """The presentation of the shipped scene ``name`` (the default for None or an unlisted one)."""
    return SCENES.get(name or "", DEFAULT)


def check_mode(origin: str | None, dim: int) -> None:
    """ControlError (one line naming the field) when the scene ``origin`` is not offered in ``dim``."""
    modes = scene_look(origin).modes
    if dim not in modes:
        only = " and ".join(f"{d}D" for d in modes)
        allowed = ", ".join(map(str, modes))
        raise ControlError(f"mode.dim: the scene {origin} is shown in {only} only; allowed: {allowed}")
