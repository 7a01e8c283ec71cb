"""The viewer on the CUDA engine: q16 frames quantized on the GPU equal the host's, with no state copied."""

from __future__ import annotations

import numpy as np
import pytest

import cuda_sim
from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.protocol import HEADING_SCALE, Q16_STEPS, decode_frame, encode_frame, status_values

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]


def test_constants_match_the_protocol():
    from flocksim.engines import cuda_frames

    assert (cuda_frames.Q16_STEPS, cuda_frames.HEADING_SCALE) == (Q16_STEPS, HEADING_SCALE)


@pytest.mark.parametrize(("preset", "overrides"), [("starlings-3d", ["predator.enabled=true"]), ("minions", [])])
def test_q16_frame_from_the_gpu_equals_the_hosts(preset, overrides):
    params = apply_overrides(load_preset(preset), ["agents.n=50", *overrides])
    cpu = Simulation(params, seed=3, engine="cpu")
    gpu = Simulation(params, seed=3, engine="cuda")
    for sim in (cpu, gpu):
        sim.step(2)
        sim.remove_agents([5, 17])  # dead rows are left out of frames
        sim.step(1)
    status = status_values(cpu, 0.0, mean_neighbors=1.0)
    mirror = gpu.state.mirror
    before = mirror.downloads
    frame = encode_frame(gpu, 7, layout="q16", selected=0, status=status)
    assert mirror.downloads == before, "encoding copied state arrays from the GPU"
    assert frame == encode_frame(cpu, 7, layout="q16", selected=0, status=status)
    decoded = decode_frame(frame)
    assert decoded.n_agents == 48


def test_status_and_finite_check_on_the_gpu():
    params = apply_overrides(load_preset("vicsek"), ["agents.n=40"])
    cpu = Simulation(params, seed=1, engine="cpu")
    gpu = Simulation(params, seed=1, engine="cuda")
    for sim in (cpu, gpu):
        sim.step(2)
    mirror = gpu.state.mirror
    before = mirror.downloads
    a = status_values(cpu, 0.0, mean_neighbors=1.0)
    b = status_values(gpu, 0.0, mean_neighbors=1.0)
    assert mirror.downloads == before
    assert abs(a[0] - b[0]) < 1e-12 and np.array_equal(a[1:], b[1:])
    assert gpu.engine.state_is_finite(gpu.state)
    gpu.state.velocity[3, 1] = np.nan  # a NaN put in on the host reaches the GPU's check
    assert not gpu.engine.state_is_finite(gpu.state)
