"""Inertial-spin alignment (docs/design.md §5.1; Cavagna et al. 2015, as the reference starling simulator has it).

Each agent carries a spin s (three components; z only in 2D). Per frame of
1/60 s: torque tau = mean over neighbours of h_i x h_j (unit headings), spin
s <- s + J tau - (eta/chi) s, angular velocity omega = s/chi clamped to
``max_turn`` rad per frame; the velocity is rotated by omega. A step of
``frames`` frames (world.dt / (1/60 s)) scales the per-frame increments by
``frames``, so that at dt = 1/60 s the update is exactly that simulator's.
In 2D the torque's z component is sin(theta_j - theta_i): positive when the
neighbour heads counterclockwise of the agent, which turns the agent
counterclockwise toward it.
"""

from __future__ import annotations

from flocksim.kernels.compile import device
from flocksim.kernels.vector import limit


@device
def heading_torque(hx, hy, hz, ux, uy, uz):
    """One neighbour's torque h x u on an agent with unit heading h from a neighbour with unit heading u."""
    return hy * uz - hz * uy, hz * ux - hx * uz, hx * uy - hy * ux


@device
def spin_update(sx, sy, sz, jtx, jty, jtz, decay, frames):
    """s + frames * (J tau - decay * s), with J tau given as (jtx, jty, jtz) and decay = eta/chi [per frame]."""
    return sx + frames * (jtx - decay * sx), sy + frames * (jty - decay * sy), sz + frames * (jtz - decay * sz)


@device
def without_component_along(sx, sy, sz, hx, hy, hz):
    """s minus its component along the unit vector h (a zero h leaves s unchanged).

    A spin along the heading would only roll the agent about its own
    direction of flight: it is removed so that s stays perpendicular to the
    heading, as in the inertial spin model.
    """
    d = sx * hx + sy * hy + sz * hz
    return sx - d * hx, sy - d * hy, sz - d * hz


@device
def turn_vector(sx, sy, sz, chi, max_turn, frames):
    """Rotation vector [rad] of one step: omega = s/chi, |omega| <= max_turn [rad/frame], times frames."""
    inv = 1.0 / chi
    wx, wy, wz = limit(sx * inv, sy * inv, sz * inv, max_turn)
    return wx * frames, wy * frames, wz * frames
