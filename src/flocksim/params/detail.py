"""Level of detail: agents far from a focus (the camera) or outside its view cone refresh their
steering less often (docs/parameters.md, "Level of detail")."""

from __future__ import annotations

from pydantic import Field

from flocksim.params.fields import Strict, Vector, quantity


class Detail(Strict):
    """Level of detail (off by default; a parameter of the reynolds model, on the cpu engine only).

    An alive agent is *near* when it lies within ``near`` of the focus and, when a view cone is
    given (``view_direction`` not empty), inside the cone of full angle ``fov_deg`` around
    ``view_direction`` with its apex at the focus; distances are plain differences of world
    coordinates (no periodic image). Near agents search their neighbours and evaluate their rules
    every step. Every other agent does so only on the steps where ``(step + id) % far_every == 0``
    (``step``: the number of steps taken before this one, ``id``: its stable id, so the work is
    spread evenly over the steps); on the steps between it keeps its last steering acceleration
    (and inertial-spin torque and speed limit) and still moves every step. An agent without a kept
    acceleration (the first step, a spawned agent) refreshes. ``Simulation.set_view`` moves the
    focus and the cone at run time (the viewer's camera).
    """

    enabled: bool = Field(False, description="Update far agents less often; allowed: true | false.")
    near: float = quantity(
        50.0, "units", "Radius around the focus within which agents update every step", ge=0.0, le=1e12
    )
    far_every: int = quantity(
        4, "steps", "Agents outside the near radius or the view cone refresh their steering every this many steps "
        "(1: every step, the result of detail off)", ge=1, le=1000,
    )  # fmt: skip
    focus: Vector = Field(
        [],
        description="Focus point, one number per axis [units]; allowed: world.dim numbers, or empty for the "
        "centre of world.bounds (box and periodic: size / 2; ellipsoid and open: the origin).",
        json_schema_extra={"unit": "units"},
    )
    view_direction: Vector = Field(
        [],
        description="Axis of the view cone (normalised) [dimensionless]; allowed: world.dim numbers, not all "
        "zero, or empty for no cone (only the distance counts).",
        json_schema_extra={"unit": "dimensionless"},
    )
    fov_deg: float = quantity(90.0, "deg", "Full angle of the view cone", gt=0.0, le=360.0)


def check_detail(detail: Detail, dim: int) -> None:
    """ValueError naming the field when ``detail`` does not fit world.dim."""
    if not detail.enabled:
        return
    for name in ("focus", "view_direction"):
        value = getattr(detail, name)
        if value and len(value) != dim:
            raise ValueError(f"detail.{name}: needs {dim} numbers (world.dim = {dim}) or none, got {len(value)}")
    if detail.view_direction and not any(abs(c) > 0.0 for c in detail.view_direction):
        raise ValueError("detail.view_direction: must not be all zeros; allowed: a non-zero vector, or empty")
