"""The viewer draws banked birds rolled about their heading (docs/viewer.md, "Banking"): seen from
below and beside, as one sees a murmuration, a banked bird shows more of its wings, so a band of
banked birds reads as a dark band (agitation waves, docs/starlings.md). Chromium with SwiftShader,
as tests/test_viewer_browser.py; the frames are made here with ``encode_frame`` and drawn through
the page's test hook (``drawFrame``), so only the bank differs between the pictures."""

from __future__ import annotations

import math

import numpy as np

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.protocol import decode_frame, encode_frame
from test_viewer_browser import hook, open_page, pytestmark, query, served, server_url, wait  # noqa: F401

VIEW_DIRECTION = np.array([0.35, -0.3, 1.0]) / np.linalg.norm([0.35, -0.3, 1.0])
"""web/src/viewcamera.js: from the flock toward a fresh 3D camera (in front, 16 degrees below)."""


def frames_of(banks_deg: list[float | None]) -> list[bytes]:
    """One starlings-3d flock (150 birds) flying level across the camera's view (heading horizontal
    and square to the view direction, so a level bird's wings point at the camera and are seen
    nearly edge-on), each frame with every bird banked by the given angle (None: no bank section)."""
    sim = Simulation(apply_overrides(load_preset("starlings-3d"), ["agents.n=150"]), seed=3)
    across = np.cross(VIEW_DIRECTION, [0.0, 1.0, 0.0])
    sim.state.velocity[:] = 10.0 * across / np.linalg.norm(across)
    out = []
    for deg in banks_deg:
        sim.state.spin[:, 0] = 0.0 if deg is None else math.radians(deg)
        out.append(encode_frame(sim, 0, bank=deg is not None))
    return out


def test_banked_birds_show_more_wing_than_level_ones(open_page):  # noqa: F811 (the fixture, imported)
    level, banked, other_side, plain = frames_of([0.0, 60.0, -60.0, None])
    assert decode_frame(banked).bank is not None and decode_frame(plain).bank is None
    page = open_page(query("starlings-3d", "agents.n=150", "predator.enabled=false"))
    page.click("#pause")
    wait(page, "flocksim.paused === true && flocksim.settled")
    draw = "(bytes) => flocksim.drawFrame(bytes)"
    pixels = {name: page.evaluate(draw, list(data))["foreground"] for name, data in
              [("level", level), ("banked", banked), ("other_side", other_side), ("plain", plain)]}  # fmt: skip
    again = page.evaluate(draw, list(level))["foreground"]
    assert again == pixels["level"], (again, pixels)  # the same camera for every picture
    assert pixels["plain"] == pixels["level"], pixels  # level birds: as without a bank section
    assert pixels["level"] > 300, pixels  # the flock is in the picture
    # a wing seen from 16 degrees below, edge on, shows sin(16) of its area; banked 60 degrees
    # toward or away from the camera: 0.70 or 0.97 of it (the body's share is the same)
    assert pixels["banked"] > 1.5 * pixels["level"], pixels
    assert pixels["other_side"] > 1.5 * pixels["level"], pixels
    assert hook(page, "paused") is True
