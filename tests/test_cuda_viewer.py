"""The viewer on the CUDA engine: q16 frames quantized on the GPU equal the host's, with no state copied."""

from __future__ import annotations

import numpy as np
import pytest

import cuda_sim
from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.protocol import (
    BANK_LEVELS,
    HEADING_SCALE,
    Q16_STEPS,
    decode_frame,
    encode_frame,
    quantize_bank,
    status_values,
)

pytestmark = [pytest.mark.cuda_sim, cuda_sim.needs_numba_cuda]


def test_constants_match_the_protocol():
    from flocksim.engines import cuda_frames

    assert (cuda_frames.Q16_STEPS, cuda_frames.HEADING_SCALE) == (Q16_STEPS, HEADING_SCALE)
    assert cuda_frames.BANK_LEVELS == BANK_LEVELS


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
    assert (decoded.bank is not None) == (preset == "starlings-3d")  # banked flight: its bank section too


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


def test_bank_codes_from_the_gpu_equal_the_hosts():
    """Halves round to even, beyond the range clip to +-7, non-finite banks are 0, dead rows left out."""
    params = apply_overrides(load_preset("starlings-3d"), ["agents.n=12"])
    gpu = Simulation(params, seed=3, engine="cuda")
    span = 3.5  # [rad]: 7 / span = 2 exactly, so the halves below are exact halves
    banks = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 7.0, 9.0, -9.0, 3.2, 0.0, 1.0, 1.0]) / 2
    banks[10] = np.nan
    gpu.state.spin[:, 0] = banks
    gpu.remove_agents([11])
    codes = gpu.engine.quantized_banks(gpu.state, span)
    np.testing.assert_array_equal(codes, quantize_bank(banks[:11], span))
    np.testing.assert_array_equal(codes, [0, 2, 2, 0, -2, 7, 7, -7, 3, 0, 0])
