"""Static obstacles of the reynolds model: circles (spheres, cylinders), walls and boxes."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from flocksim.params.fields import Strict, quantity

MAX_OBSTACLE_COORDINATE = 1e12
"""Largest magnitude of an obstacle's coordinate [units]. Float64 positions there still resolve
about 1e-4 units; the obstacle grid spans every obstacle, and a span past float's range (a wall
from -1e308 to 1e308) made its extent infinite and its sizing loop endless."""

Point = list[Annotated[float, Field(ge=-MAX_OBSTACLE_COORDINATE, le=MAX_OBSTACLE_COORDINATE)]]


def _point(doc: str) -> Any:
    return Field(
        description=f"{doc} [units]; allowed: as many finite numbers as world.dim, each from -1e12 to 1e12.",
        min_length=2,
        max_length=3,
        json_schema_extra={"unit": "units"},
    )


class Circle(Strict):
    """A round obstacle: circle (2D), sphere (3D), vertical cylinder (planar 3D)."""

    center: Point = _point("Centre")
    body_radius: float = quantity(0.5, "units", "Solid radius (agents are kept out of it)", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the centre", ge=0.0, le=1e9)


class Segment(Strict):
    """A wall: the segment from ``a`` to ``b`` thickened by ``body_radius`` (a capsule)."""

    a: Point = _point("First end")
    b: Point = _point("Second end")
    body_radius: float = quantity(0.25, "units", "Half thickness of the wall", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the segment", ge=0.0, le=1e9)


class Box(Strict):
    """A solid axis-aligned box from ``min_corner`` to ``max_corner`` (level geometry)."""

    min_corner: Point = _point("Lowest corner")
    max_corner: Point = _point("Highest corner")
    body_radius: float = quantity(0.0, "units", "Rounding added around the box (solid)", ge=0.0, le=1e9)
    influence_radius: float = quantity(2.0, "units", "Steering range, from the box's surface", ge=0.0, le=1e9)


class Obstacles(Strict):
    """Static obstacles: circles/spheres, wall segments and boxes.

    Each has a core (a point, a segment, a solid box), a body radius around the core (the
    solid part: overlap resolution keeps agents' bodies out of it, as an infinite mass) and an
    influence radius around the core (steering, rules.avoid). Kept in their own grid whose
    cell size follows the largest influence radius. Not available in periodic space.
    """

    circles: list[Circle] = Field(
        [],
        description="Circles/spheres; allowed: a list of tables {center = [x, y(, z)], body_radius >= 0, "
        "influence_radius >= 0} [units].",
    )
    segments: list[Segment] = Field(
        [],
        description="Wall segments; allowed: a list of tables {a = [x, y(, z)], b = [x, y(, z)], body_radius >= 0, "
        "influence_radius >= 0} [units].",
    )
    boxes: list[Box] = Field(
        [],
        description="Boxes; allowed: a list of tables {min_corner = [x, y(, z)], max_corner = [x, y(, z)], "
        "body_radius >= 0, influence_radius >= 0} [units].",
    )

    def count(self) -> int:
        return len(self.circles) + len(self.segments) + len(self.boxes)
