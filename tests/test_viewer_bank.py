"""The viewer frame's bank section (docs/protocol.md, "Bank section"): the bank angles of birds in
3D banked flight, a 4-bit code per agent over the model's largest bank, flagged in the header's
``sections`` field; frames of other models are what they were before the section existed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.viewer.frame_decode import unpack_bank_codes
from flocksim.viewer.protocol import (
    HEADER,
    SECTION_BANK,
    ProtocolError,
    banks,
    decode_frame,
    encode_frame,
    frame_size,
    pack_bank_codes,
    quantize_bank,
    section_offsets,
)


@pytest.fixture(scope="module")
def banked() -> Simulation:
    """starlings-3d (banked flight) with a predator: a bird in the frame's extras has no bank."""
    sim = Simulation(apply_overrides(load_preset("starlings-3d"), ["agents.n=64", "predator.enabled=true"]), seed=4)
    sim.step(2)
    return sim


@pytest.fixture(scope="module")
def level() -> Simulation:
    """starlings-3d-reference: point-mass flight, no bank."""
    sim = Simulation(apply_overrides(load_preset("starlings-3d-reference"), ["agents.n=40"]), seed=4)
    sim.step(2)
    return sim


def test_bank_codes_by_hand():
    deg = math.pi / 180
    span = 60 * deg  # starlings-3d's max_bank
    # code = round(bank / 60 deg x 7): 60 -> 7; -30 -> -3.5 -> -4 (halves to even); 20 -> 2.33 -> 2;
    # 4 -> 0.47 -> 0; beyond the range clipped to +-7; non-finite: 0
    banks_rad = np.array([60 * deg, -30 * deg, 20 * deg, 4 * deg, 0.0, 100 * deg, -2.0, np.nan])
    codes = quantize_bank(banks_rad, span)
    assert codes.dtype == np.int8
    np.testing.assert_array_equal(codes, [7, -4, 2, 0, 0, 7, -7, 0])
    # two a byte, low half first, 4-bit two's complement: (7, -4) -> 0x7 | 0xC << 4 = 0xC7
    packed = pack_bank_codes(codes)
    np.testing.assert_array_equal(packed, [0xC7, 0x02, 0x70, 0x09])
    np.testing.assert_array_equal(unpack_bank_codes(packed, len(codes)), codes)
    np.testing.assert_array_equal(pack_bank_codes(np.array([-7], dtype=np.int8)), [0x09])


@pytest.mark.parametrize("layout", ["f32", "q16"])
def test_bank_round_trip_within_half_a_code(banked, layout):
    state = banked.state
    saved = state.spin[:, 0].copy()
    rng = np.random.default_rng(1)
    try:
        span = math.radians(banked.params.rules.flight.max_bank)  # 60 degrees
        state.spin[:, 0] = rng.uniform(-span, span, state.n)
        state.spin[:3, 0] = np.radians([60.0, -60.0, 0.0])
        data = encode_frame(banked, 5, layout=layout)
        frame = decode_frame(data)
        alive = np.flatnonzero(state.alive)
        assert frame.bank is not None and frame.bank.shape == (frame.n_agents,) == (len(alive),)
        assert frame.n > frame.n_agents  # the predator: an extra without a bank
        assert frame.bank_range == span
        error = np.abs(frame.bank - state.spin[alive, 0])
        assert error.max() <= span / 14 + 1e-12  # half a code: 60 / 14 = 4.29 degrees
        assert error.max() > 0.8 * span / 14  # 64 random angles: the codes are not the floats
        np.testing.assert_allclose(np.degrees(frame.bank[:3]), [60.0, -60.0, 0.0], atol=1e-12)
        assert HEADER.unpack_from(data, 0)[8] == SECTION_BANK
        assert len(data) == frame_size(frame.n, 3, layout, n_agents=frame.n_agents, sections=SECTION_BANK)
    finally:
        state.spin[:, 0] = saved


def test_the_bank_section_only_appends(banked):
    """A banked frame is the frame without the section, with the sections bit set and the bank
    section (range, codes padded to 8 bytes) appended: positions, headings, flags and status are
    where they were."""
    with_bank = encode_frame(banked, 3, layout="q16", steps_per_second=60.0)
    without = encode_frame(banked, 3, layout="q16", steps_per_second=60.0, bank=False)
    frame = decode_frame(without)
    assert frame.bank is None
    end = section_offsets(frame.n, 3, "q16")[-1]
    assert len(without) == end == frame_size(frame.n, 3, "q16")
    assert len(with_bank) == end + 8 + 32  # the range, then 64 agents in 32 bytes (a multiple of 8)
    assert frame_size(100_000, 3, "q16", n_agents=100_000, sections=SECTION_BANK) == 950_144  # < 10^6
    assert with_bank[:20] == without[:20] and with_bank[24:end] == without[24:end]
    assert HEADER.unpack_from(without, 0)[8] == 0


def test_a_level_model_sends_no_bank_and_its_frame_is_unchanged(level):
    """Point-mass flight (and any 2D model) has no bank: the frame is the version-2 frame as it was,
    the header's sections field 0 and its length the four sections' end."""
    assert not banks(level)
    data = encode_frame(level, 1)
    frame = decode_frame(data)
    assert frame.bank is None
    assert HEADER.unpack_from(data, 0)[8] == 0
    assert len(data) == section_offsets(frame.n, 3, frame.layout)[-1]
    assert data == encode_frame(level, 1, bank=False)
    flat = Simulation(apply_overrides(load_preset("starlings-2d"), ["agents.n=20"]), seed=1)
    assert flat.params.rules.flight.mode == "banked" and not banks(flat)  # 2D: seen from above
    assert decode_frame(encode_frame(flat, 0)).bank is None
    forced = decode_frame(encode_frame(level, 1, bank=True))  # asked for: sent
    assert forced.bank is not None and forced.bank.shape == (forced.n_agents,)


def test_frames_with_unknown_sections_or_a_missing_bank_are_refused(banked):
    data = bytearray(encode_frame(banked, 0))
    data[20] = 3  # a sections bit this reader does not know: it cannot tell the frame's length
    with pytest.raises(ProtocolError, match="unknown sections"):
        decode_frame(bytes(data))
    plain = bytearray(encode_frame(banked, 0, bank=False))
    plain[20] = SECTION_BANK  # flagged, but no section
    with pytest.raises(ProtocolError, match="a bank section"):
        decode_frame(bytes(plain))
    end = len(plain)
    for span in (0.0, -1.0, math.nan, math.inf, 4.0):  # a range outside (0, pi]
        bad = bytearray(data)
        bad[20] = SECTION_BANK
        bad[end : end + 8] = np.float64(span).tobytes()
        with pytest.raises(ProtocolError, match="bank range"):
            decode_frame(bytes(bad))
