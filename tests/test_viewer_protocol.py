"""The viewer's wire format: binary frames (round trip, quantization bounds, flags, size, fuzz)
and JSON control messages (valid ones parse, anything else is one ControlError)."""

from __future__ import annotations

import json
import math
import re
import struct
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flocksim import Simulation, apply_overrides, load_preset, preset_names
from flocksim.kernels.octahedral import MAX_ERROR_DEG
from flocksim.metrics.order import unit_headings
from flocksim.state import new_state
from flocksim.viewer import (
    STATUS_FIELDS,
    ControlError,
    NextControl,
    PauseControl,
    PointerControl,
    PresetControl,
    ProtocolError,
    ResetControl,
    ResumeControl,
    SetControl,
    TurnControl,
    choose_layout,
    decode_frame,
    encode_frame,
    error_reply,
    frame_size,
    parse_control,
    status_values,
)
from flocksim.viewer.controls import FIELDS, MAX_CONTROL_BYTES, ViewControl
from flocksim.viewer.protocol import (
    FLAG_NEIGHBOR,
    FLAG_OBSTACLE,
    FLAG_PREDATOR,
    FLAG_SELECTED,
    FLAG_TARGET,
    FLAG_TURNING,
    HEADER,
    HEADER_SIZE,
    MAGIC,
    Q16_THRESHOLD,
    VERSION,
    _extras,
    section_offsets,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def sim_of(preset: str, *overrides: str, steps: int = 3) -> Simulation:
    sim = Simulation(apply_overrides(load_preset(preset), list(overrides)))
    sim.step(steps)
    return sim


@pytest.fixture(scope="module")
def birds2d() -> Simulation:
    return sim_of("starlings-2d-reference", "agents.n=120")


@pytest.fixture(scope="module")
def birds3d() -> Simulation:
    """3D starlings with two predators and a spontaneous turn in progress."""
    sim = sim_of("starlings-3d-reference", "agents.n=150", "predator.enabled=true", "predator.count=2")
    turning = next(c for c in sim.components if c.name == "turning")
    turning.start_wave(sim)
    sim.step(2)
    assert sim.state.turning.any()
    return sim


@pytest.fixture(scope="module")
def enemies() -> Simulation:
    return sim_of("enemies", "agents.n=60")


def sent_rows(sim: Simulation) -> np.ndarray:
    return np.flatnonzero(sim.state.alive)


def nearest_ids(sim: Simulation, agent: int = 0) -> np.ndarray:
    row = int(np.flatnonzero(sim.state.ids == agent)[0])
    found = sim.query_nearest(sim.state.position[row], 8)
    return found[found != agent][:7]


# ------------------------------------------------------------------------------------ round trip


@pytest.mark.parametrize("name", ["birds2d", "birds3d", "enemies"])
def test_f32_round_trip_is_exact(name, request):
    sim: Simulation = request.getfixturevalue(name)
    data = encode_frame(sim, 41, layout="f32", steps_per_second=123.5)
    frame = decode_frame(data)
    rows = sent_rows(sim)
    m = len(rows)
    assert (frame.version, frame.layout, frame.dim, frame.frame_index) == (VERSION, "f32", sim.state.dim, 41)
    assert (frame.step, frame.time, frame.n_agents) == (sim.steps, sim.time, m)
    np.testing.assert_array_equal(frame.positions[:m], sim.state.position[rows].astype(np.float32))
    np.testing.assert_array_equal(frame.headings[:m], unit_headings(sim.state.velocity[rows]).astype(np.float32))
    true = np.concatenate([sim.state.position[rows], _extras(sim, sim.state.dim)[0]])  # float64
    np.testing.assert_array_equal(frame.positions, true.astype(np.float32))
    np.testing.assert_array_equal(frame.bbox_min, true.min(axis=0))
    np.testing.assert_array_equal(frame.bbox_max, true.max(axis=0))
    status = frame.status_dict
    assert list(status) == list(STATUS_FIELDS)
    assert status["remaining"] == m == sim.remaining
    assert status["caught"] == sim.caught
    assert status["steps_per_second"] == 123.5
    assert status["polarization"] == pytest.approx(sim.metrics()["polarization"])
    assert status["mean_neighbors"] == pytest.approx(sim.metrics()["mean_neighbors"])
    assert len(data) == frame_size(frame.n, frame.dim, "f32")


@pytest.mark.parametrize("name", ["birds2d", "birds3d", "enemies"])
def test_q16_round_trip_is_within_the_stated_bounds(name, request):
    sim: Simulation = request.getfixturevalue(name)
    exact = decode_frame(encode_frame(sim, 7, layout="f32"))
    data = encode_frame(sim, 7, layout="q16")
    frame = decode_frame(data)
    assert frame.layout == "q16"
    assert len(data) == frame_size(frame.n, frame.dim, "q16")
    rows = sent_rows(sim)
    extra_positions, extra_headings, _ = _extras(sim, sim.state.dim)
    true = np.concatenate([sim.state.position[rows], extra_positions])
    half_step = (frame.bbox_max - frame.bbox_min) / 65535 / 2
    assert (np.abs(frame.positions - true) <= half_step * (1 + 1e-9) + 1e-12).all()
    check_heading_error(
        np.concatenate([unit_headings(sim.state.velocity[rows]), extra_headings]), frame.headings, frame.dim
    )
    np.testing.assert_array_equal(frame.flags, exact.flags)
    np.testing.assert_array_equal(frame.status, exact.status)


def check_heading_error(true: np.ndarray, decoded: np.ndarray, dim: int) -> None:
    # 2D: |error vector| <= sqrt(2) x 0.5 / 127; 3D: octahedral codes (docs/protocol.md)
    bound = math.asin(math.sqrt(2) / 254) if dim == 2 else math.radians(MAX_ERROR_DEG)
    assert bound <= math.radians(0.96)
    zero = np.linalg.norm(true, axis=1) == 0
    assert (decoded[zero] == 0).all()
    cos = np.clip(np.einsum("ij,ij->i", true[~zero], decoded[~zero]), -1.0, 1.0)
    sin = np.linalg.norm(np.cross(np.pad(true[~zero], ((0, 0), (0, 3 - dim))),
                                  np.pad(decoded[~zero], ((0, 0), (0, 3 - dim)))), axis=1)  # fmt: skip
    assert (np.arctan2(sin, cos) <= bound + 1e-9).all()
    np.testing.assert_allclose(np.linalg.norm(decoded[~zero], axis=1), 1.0, atol=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_quantization_error_bounds_on_random_states(birds3d, birds2d, data):
    sim = Simulation(birds3d.params if data.draw(st.booleans()) else birds2d.params)
    dim = sim.state.dim
    n = data.draw(st.integers(1, 40))
    scale = data.draw(st.sampled_from([1e-3, 1.0, 1e3, 1e6]))
    coord = st.floats(-scale, scale, allow_nan=False, allow_infinity=False)
    pos = np.array(data.draw(st.lists(st.lists(coord, min_size=dim, max_size=dim), min_size=n, max_size=n)))
    comp = st.one_of(st.just(0.0), st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False))
    vel = np.array(data.draw(st.lists(st.lists(comp, min_size=dim, max_size=dim), min_size=n, max_size=n)))
    sim.state = new_state(pos, vel)
    sim.invalidate_queries()
    frame = decode_frame(encode_frame(sim, 0, layout="q16", status=[1, 2, 3, 4, 5]))
    true_pos = np.concatenate([pos, frame.positions[n:]])  # predators (if any) stay where they were
    half_step = (frame.bbox_max - frame.bbox_min) / 65535 / 2
    assert (np.abs(frame.positions[:n] - true_pos[:n]) <= half_step * (1 + 1e-9) + 1e-300).all()
    check_heading_error(unit_headings(vel), frame.headings[:n], dim)
    exact = decode_frame(encode_frame(sim, 0, layout="f32", status=[1, 2, 3, 4, 5]))
    np.testing.assert_array_equal(exact.positions[:n], pos.astype(np.float32))


# ------------------------------------------------------------------------------------ flags


def test_flags_select_agent_zero_its_seven_nearest_and_turning_birds(birds3d):
    frame = decode_frame(encode_frame(birds3d, 0))
    rows = sent_rows(birds3d)
    ids = birds3d.state.ids[rows]
    np.testing.assert_array_equal(frame.having(FLAG_SELECTED), np.flatnonzero(ids == 0))
    np.testing.assert_array_equal(ids[frame.having(FLAG_NEIGHBOR)], np.sort(nearest_ids(birds3d)))
    np.testing.assert_array_equal(frame.having(FLAG_TURNING), np.flatnonzero(birds3d.state.turning[rows]))
    assert len(frame.having(FLAG_TURNING)) > 0


def test_predators_are_appended_after_the_agents(birds3d):
    frame = decode_frame(encode_frame(birds3d, 0, layout="f32"))
    predators = next(c for c in birds3d.components if c.name == "predator")
    m = frame.n_agents
    assert frame.n == m + 2
    np.testing.assert_array_equal(frame.having(FLAG_PREDATOR), [m, m + 1])
    np.testing.assert_array_equal(frame.positions[m:], predators.position.astype(np.float32))
    np.testing.assert_allclose(frame.headings[m:], unit_headings(predators.velocity), atol=1e-6)
    assert not (frame.flags[:m] & (FLAG_PREDATOR | FLAG_OBSTACLE | FLAG_TARGET)).any()


def test_obstacles_and_targets_are_appended(enemies):
    frame = decode_frame(encode_frame(enemies, 0, layout="f32"))
    circles = enemies.params.obstacles.circles
    m = frame.n_agents
    obstacles = frame.having(FLAG_OBSTACLE)
    np.testing.assert_array_equal(obstacles, m + np.arange(len(circles)))
    np.testing.assert_array_equal(frame.positions[obstacles], np.array([c.center for c in circles], dtype=np.float32))
    assert (frame.headings[obstacles] == 0).all()
    np.testing.assert_array_equal(frame.having(FLAG_TARGET), [m + len(circles)])
    np.testing.assert_array_equal(frame.positions[-1], [60.0, 60.0])
    assert frame.n == m + len(circles) + 1


def test_segments_and_boxes_are_sent_at_their_centres():
    sim = sim_of(
        "starlings-2d-reference", "agents.n=30", "obstacles.segments=[{a = [0.0, 0.0], b = [10.0, 0.0]}]",
        "obstacles.boxes=[{min_corner = [20.0, 20.0], max_corner = [30.0, 40.0]}]", steps=0,
    )  # fmt: skip
    frame = decode_frame(encode_frame(sim, 0, layout="f32"))
    obstacles = frame.having(FLAG_OBSTACLE)
    np.testing.assert_array_equal(frame.positions[obstacles], [[5.0, 0.0], [25.0, 30.0]])
    np.testing.assert_array_equal(frame.headings[obstacles], [[1.0, 0.0], [0.0, 0.0]])


def test_dead_agents_are_not_sent_and_a_dead_selection_flags_nothing(birds2d):
    sim = Simulation(birds2d.params)
    sim.remove_agents([0, 5])
    frame = decode_frame(encode_frame(sim, 0))
    assert frame.n_agents == frame.n == sim.state.n - 2
    assert not (frame.flags & (FLAG_SELECTED | FLAG_NEIGHBOR)).any()
    other = decode_frame(encode_frame(sim, 0, selected=3))
    assert other.having(FLAG_SELECTED).tolist() == [2]  # ids 1, 2, 3, 4, 6...: id 3 is the third sent
    ids = sim.state.ids[sent_rows(sim)]
    np.testing.assert_array_equal(ids[other.having(FLAG_NEIGHBOR)], np.sort(nearest_ids(sim, 3)))
    assert not decode_frame(encode_frame(sim, 0, selected=None)).having(FLAG_SELECTED).size


# ------------------------------------------------------------------------------------ size, layout


def test_a_100k_starlings_3d_frame_fits_in_one_megabyte(birds3d):
    assert choose_layout(Q16_THRESHOLD) == "f32"
    assert choose_layout(Q16_THRESHOLD + 1) == "q16"
    assert choose_layout(100_000) == "q16"
    assert choose_layout(10_000) == "f32"
    size = frame_size(100_001, 3, "q16")  # 100 000 birds and a predator
    assert size == 96 + 600_008 + 200_008 + 100_008 + 40  # two bytes per heading (version 2)
    assert size <= 2**20
    # the formula is what encode_frame writes
    for layout in ("f32", "q16"):
        data = encode_frame(birds3d, 0, layout=layout)
        frame = decode_frame(data)
        assert len(data) == frame_size(frame.n, 3, layout)
        assert section_offsets(frame.n, 3, layout)[-1] == len(data)
    assert decode_frame(encode_frame(birds3d, 0)).layout == choose_layout(frame.n)


def test_sections_are_8_byte_aligned():
    for n in (0, 1, 7, 13, 100_001):
        for dim in (2, 3):
            for layout in ("f32", "q16"):
                assert all(o % 8 == 0 for o in section_offsets(n, dim, layout)[:4])


def test_status_values_order_and_override(birds2d):
    values = status_values(birds2d, 50.0, mean_neighbors=6.5)
    assert values.tolist()[1:] == [6.5, float(birds2d.caught), float(birds2d.remaining), 50.0]
    frame = decode_frame(encode_frame(birds2d, 0, status=values))
    np.testing.assert_array_equal(frame.status, values)
    with pytest.raises(ValueError, match="status"):
        encode_frame(birds2d, 0, status=[1.0, 2.0])
    with pytest.raises(ValueError, match="layout"):
        encode_frame(birds2d, 0, layout="f16")  # type: ignore[arg-type]


def test_header_layout_is_as_documented(birds2d):
    data = encode_frame(birds2d, 9, layout="q16", steps_per_second=1.0)
    fields = HEADER.unpack_from(data, 0)
    assert HEADER_SIZE == 96
    assert fields[:9] == (MAGIC, 2, 96, 1, 2, 5, birds2d.state.n, birds2d.state.n, 0)
    assert fields[9:12] == (9, birds2d.steps, birds2d.time)
    assert struct.unpack_from("<d", data, 40)[0] == birds2d.time
    assert fields[14] == 0.0 and fields[17] == 0.0  # 2D: the box's z is 0


# ------------------------------------------------------------------------------------ malformed frames


def decodes_or_protocol_error(data: bytes) -> None:
    try:
        decode_frame(data)
    except ProtocolError as exc:
        assert str(exc).startswith("frame: ")


@pytest.fixture(scope="module")
def valid_frames(birds2d, birds3d) -> list[bytes]:
    return [encode_frame(sim, 1, layout=layout) for sim in (birds2d, birds3d) for layout in ("f32", "q16")]


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes_raise_only_protocol_error(data):
    decodes_or_protocol_error(data)
    decodes_or_protocol_error(MAGIC + data)
    decodes_or_protocol_error(MAGIC + struct.pack("<H", VERSION) + data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_frames_raise_only_protocol_error(valid_frames, data):
    frame = bytearray(data.draw(st.sampled_from(valid_frames)))
    for _ in range(data.draw(st.integers(1, 4))):
        what = data.draw(st.sampled_from(["truncate", "extend", "byte", "header"]))
        if what == "truncate":
            frame = frame[: data.draw(st.integers(0, max(len(frame) - 1, 0)))]
        elif what == "extend":
            frame += data.draw(st.binary(min_size=1, max_size=16))
        elif what == "byte" and frame:
            frame[data.draw(st.integers(0, len(frame) - 1))] = data.draw(st.integers(0, 255))
        elif len(frame) >= HEADER_SIZE:
            at = data.draw(st.integers(0, HEADER_SIZE - 8))
            frame[at : at + 8] = data.draw(st.binary(min_size=8, max_size=8))
    decodes_or_protocol_error(bytes(frame))


def test_specific_malformed_frames_name_the_problem(valid_frames):
    good = valid_frames[0]
    cases = {
        "shorter than": good[:50],
        "bad magic": b"XXXX" + good[4:],
        "unsupported protocol version 1; this reader reads version 2": good[:4] + struct.pack("<H", 1) + good[6:],
        "needs": good[:-1],
        "unknown layout id 7": good[:8] + bytes([7]) + good[9:],
        "dim 4": good[:9] + bytes([4]) + good[10:],
        "n_agents": good[:16] + struct.pack("<I", 2**32 - 1) + good[20:],
        "header_size": good[:6] + struct.pack("<H", 90) + good[8:],
        "not finite": good[:40] + struct.pack("<d", math.nan) + good[48:],
    }
    for expected, data in cases.items():
        with pytest.raises(ProtocolError, match=expected):
            decode_frame(data)
    n = struct.unpack_from("<I", good, 12)[0]
    nan_position = good[:HEADER_SIZE] + struct.pack("<f", math.nan) + good[HEADER_SIZE + 4 :]
    with pytest.raises(ProtocolError, match="NaN"):
        decode_frame(nan_position)
    assert n > 0
    for bad in ("text", 12, None, [1, 2]):
        with pytest.raises(ProtocolError, match="expected bytes"):
            decode_frame(bad)  # type: ignore[arg-type]
    assert decode_frame(memoryview(good)).n == decode_frame(bytearray(good)).n


def test_a_larger_header_is_skipped():
    """Readers skip header fields they do not know (header_size > 96)."""
    sim = sim_of("starlings-2d-reference", "agents.n=20", steps=0)
    data = encode_frame(sim, 3, layout="q16")
    longer = data[:6] + struct.pack("<H", 104) + data[8:HEADER_SIZE] + bytes(8) + data[HEADER_SIZE:]
    a, b = decode_frame(data), decode_frame(longer)
    np.testing.assert_array_equal(a.positions, b.positions)
    np.testing.assert_array_equal(a.flags, b.flags)


# ------------------------------------------------------------------------------------ controls


@pytest.fixture(scope="module")
def params3d():
    return load_preset("starlings-3d-reference")


def test_valid_controls_parse(params3d):
    msg = parse_control(
        '{"type": "set", "changes": {"rules.alignment.weight": 0.5, "predator.enabled": true}}', params3d
    )
    assert isinstance(msg, SetControl)
    assert msg.params.rules.alignment.weight == 0.5 and msg.params.predator.enabled
    assert params3d.rules.alignment.weight == 1.0  # the current parameters are not modified
    msg = parse_control('{"type": "set", "changes": {"neighbors.mode": "metric", "agents.n": 2000}}', params3d)
    assert msg.params.neighbors.mode == "metric" and msg.params.agents.n == 2000
    msg = parse_control('{"type": "set", "changes": {"world.bounds.size": [100, 200.5, 300]}}', params3d)
    assert msg.params.world.bounds.size == [100.0, 200.5, 300.0]
    msg = parse_control(b'{"type": "preset", "name": "starlings-2d-reference"}', params3d)
    assert isinstance(msg, PresetControl) and msg.params.world.dim == 2 and msg.name == "starlings-2d-reference"
    assert isinstance(parse_control('{"type": "reset"}', params3d), ResetControl)
    assert isinstance(parse_control('{"type":"pause"}', params3d), PauseControl)
    assert isinstance(parse_control('{"type":"resume"}', params3d), ResumeControl)
    assert isinstance(parse_control('{"type":"next"}', params3d), NextControl)
    turn = parse_control('{"type": "turn", "direction": "right"}', params3d)
    assert isinstance(turn, TurnControl) and turn.direction == "right" and turn.angle_deg == -120.0
    assert parse_control('{"type": "turn", "direction": "left"}', params3d).angle_deg == 120.0
    pointer = parse_control('{"type": "pointer", "mode": "repel", "x": 1, "y": -2.5, "z": 3e2}', params3d)
    assert pointer == PointerControl(mode="repel", point=(1.0, -2.5, 300.0))
    assert parse_control('{"type": "pointer", "mode": "off"}', params3d) == PointerControl("off", None)
    params2d = load_preset("starlings-2d-reference")
    flat = parse_control('{"type": "pointer", "mode": "attract", "x": 1, "y": 2, "z": 9}', params2d)
    assert flat.point == (1.0, 2.0)
    for name in preset_names():
        assert parse_control(json.dumps({"type": "preset", "name": name}), params3d).name == name


def test_view_messages_carry_the_camera(params3d):
    text = '{"type": "view", "x": 1, "y": 2, "z": 3, "dx": 0, "dy": 0, "dz": -1, "fov_deg": 80}'
    view = parse_control(text, params3d)
    assert view == ViewControl(position=(1.0, 2.0, 3.0), direction=(0.0, 0.0, -1.0), fov_deg=80.0)
    no_cone = parse_control('{"type": "view", "x": 1, "y": 2, "z": 3}', params3d)
    assert no_cone == ViewControl((1.0, 2.0, 3.0), None, None)
    flat = parse_control('{"type": "view", "x": 4, "y": 5}', load_preset("starlings-2d-reference"))
    assert flat == ViewControl(position=(4.0, 5.0), direction=None, fov_deg=None)
    cases = {
        '{"type": "view", "x": 1, "y": 2}': "missing z",
        '{"type": "view", "x": 1, "y": 2, "z": 3, "dx": 1}': "missing dy",
        '{"type": "view", "x": 1, "y": 2, "z": 3, "dx": 0, "dy": 0, "dz": 0}': "all zeros",
        '{"type": "view", "x": 1, "y": 2, "z": 3, "fov_deg": 0}': "view.fov_deg: allowed: more than 0 up to 360",
        '{"type": "view", "x": 1, "y": 2, "z": 3, "fov_deg": 361}': "view.fov_deg",
        '{"type": "view", "x": NaN, "y": 2, "z": 3}': "NaN",
        '{"type": "view", "x": 1, "y": 2, "z": 3, "w": 4}': "unknown field 'w'",
    }
    for text, needle in cases.items():
        with pytest.raises(ControlError, match=needle):
            parse_control(text, params3d)


def test_a_bad_set_names_the_field_and_the_allowed_values(params3d):
    cases = {
        '{"type": "set", "changes": {"rules.alignment.weight": -1}}': ["rules.alignment.weight", ">= 0"],
        '{"type": "set", "changes": {"rules.alignment.weight": "heavy"}}': ["rules.alignment.weight"],
        '{"type": "set", "changes": {"rules.alignment.weight": 1e999}}': ["rules.alignment.weight", "finite"],
        '{"type": "set", "changes": {"rules.alignment.wieght": 1}}': ["rules.alignment.wieght", "weight"],
        '{"type": "set", "changes": {"neighbors.mode": "psychic"}}': ["neighbors.mode", "metric", "topological"],
        '{"type": "set", "changes": {"predator.enabled": 1.5}}': ["predator.enabled"],
        '{"type": "set", "changes": {"agents.n": true}}': ["agents.n", "true/false"],
        '{"type": "set", "changes": {"agents.n": null}}': ["agents.n", "null"],
        '{"type": "set", "changes": {"a=b": 1}}': ["dotted parameter key"],
        '{"type": "set", "changes": {}}': ["non-empty"],
        '{"type": "set", "changes": [1]}': ["changes"],
        '{"type": "set", "changes": {"description": "\\ud800"}}': ["description", "Unicode"],
    }
    for text, needles in cases.items():
        with pytest.raises(ControlError) as info:
            parse_control(text, params3d)
        message = str(info.value)
        assert "\n" not in message
        for needle in needles:
            assert needle in message, (text, message)
    reply = json.loads(error_reply("rules.alignment.weight: must be >= 0\nsecond line"))
    assert reply == {"type": "error", "message": "rules.alignment.weight: must be >= 0 second line"}


def test_strings_survive_the_set_exactly(params3d):
    text = 'a "quoted" \\ back\tslash\u0001 \u00e9 \U0001f426'
    msg = parse_control(json.dumps({"type": "set", "changes": {"description": text}}), params3d)
    assert msg.params.description == text


def test_invalid_messages_raise_control_error(params3d):
    cases = {
        "": "not valid JSON",
        "{": "not valid JSON",
        "[]": "JSON object",
        '"pause"': "JSON object",
        '{"type": "pause", "type": "reset"}': "duplicate",
        '{"type": "fly"}': "allowed: set, preset",
        "{}": "missing",
        '{"type": 3}': "unknown message type",
        '{"type": "pause", "extra": 1}': "unknown field 'extra'",
        '{"type": "preset", "name": "nope"}': "starlings-3d-reference",
        '{"type": "preset"}': "missing field 'name'",
        '{"type": "turn", "direction": "up"}': "left, right",
        '{"type": "turn", "direction": ["left"]}': "left, right",
        '{"type": "pointer", "mode": "attract", "x": 1, "y": 2}': "missing z",
        '{"type": "pointer", "mode": "attract", "x": NaN, "y": 2, "z": 0}': "NaN",
        '{"type": "pointer", "mode": "attract", "x": 1e400, "y": 2, "z": 0}': "finite",
        '{"type": "pointer", "mode": "attract", "x": true, "y": 2, "z": 0}': "number",
        '{"type": "pointer", "mode": "attract", "x": 1' + "0" * 400 + ', "y": 2, "z": 0}': "finite",
        '{"type": "pointer", "mode": "attract", "x": "1", "y": 2, "z": 0}': "number",
        '{"type": "pointer", "mode": "blink"}': "attract, repel, off",
        "[" * 100_000: "larger than",
        "[" * 20_000 + "]" * 20_000: "not valid JSON",
        '{"type": "pause", "x": Infinity}': "Infinity",
    }
    for text, needle in cases.items():
        with pytest.raises(ControlError, match=needle):
            parse_control(text, params3d, max_bytes=MAX_CONTROL_BYTES)
    with pytest.raises(ControlError, match="larger than the 64-byte limit"):
        parse_control('{"type": "set", "changes": {"description": "' + "x" * 100 + '"}}', params3d, max_bytes=64)
    with pytest.raises(ControlError, match="UTF-8"):
        parse_control(b'{"type": "pause"\xff}', params3d)
    with pytest.raises(ControlError, match="JSON text"):
        parse_control(12, params3d)  # type: ignore[arg-type]
    deep = '{"type": "set", "changes": {"description": ' + "[" * 40 + "]" * 40 + "}}"
    with pytest.raises(ControlError, match="nested deeper"):
        parse_control(deep, params3d)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
KEYS = ["rules.alignment.weight", "agents.n", "neighbors.mode", "neighbors.k", "predator.enabled", "model",
        "world.dim", "world.bounds.size", "turning.angle_deg", "rules", "obstacles.circles", "x.y", "seed"]  # fmt: skip


def parses_or_control_error(text: str | bytes, params) -> None:
    try:
        parse_control(text, params)
    except ControlError as exc:
        assert "\n" not in str(exc) and len(str(exc)) <= 500


@FUZZ
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_random_text_raises_only_control_error(params3d, text):
    parses_or_control_error(text, params3d)


@FUZZ
@given(
    st.fixed_dictionaries(
        {"type": st.sampled_from([*FIELDS, "bogus"]) | json_values},
        optional={
            "changes": st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=12), json_values, max_size=3)
            | json_values,
            "name": st.sampled_from(preset_names()) | json_values,
            "direction": st.sampled_from(["left", "right"]) | json_values,
            "mode": st.sampled_from(["attract", "repel", "off"]) | json_values,
            "x": st.floats() | json_values,
            "y": st.floats() | json_values,
            "z": st.floats() | json_values,
            "other": json_values,
        },
    )
)
def test_random_messages_raise_only_control_error(params3d, message):
    parses_or_control_error(json.dumps(message), params3d)


@FUZZ
@given(json_values)
def test_random_json_raises_only_control_error(params3d, value):
    parses_or_control_error(json.dumps(value), params3d)


PYTHON_TERMS = re.compile(r"\bNone\b|ValueError|RecursionError|TypeError")


def test_refusals_are_in_the_users_terms_not_pythons(params3d):
    """Before: "not valid JSON (RecursionError)", "not valid JSON (ValueError)", "set: invalid change
    (ValueError: ...)" and set_view's "allowed: a non-zero vector, or None"."""
    from flocksim.components.detail import _unit_axis

    cases = {
        "[" * 20_000 + "]" * 20_000: "message: not valid JSON (nested too deeply to read)",
        '{"type": "pause", "x": 1' + "0" * 5000 + "}": "message: not valid JSON (a number of more than "
        f"{sys.get_int_max_str_digits()} digits)",
    }
    for text, expected in cases.items():
        with pytest.raises(ControlError) as info:
            parse_control(text, params3d, max_bytes=MAX_CONTROL_BYTES)
        assert str(info.value) == expected
    with pytest.raises(ValueError) as info:
        _unit_axis([0.0, 0.0, 0.0], 3)
    assert str(info.value) == (
        "set_view: direction must not be all zeros; allowed: a non-zero vector, or no direction (no view cone)"
    )
    from flocksim.viewer.controls import plain_reason  # new: the reason of a refused change, in words

    assert plain_reason(ValueError("speed must be  > 0\n (got -1)")) == "speed must be > 0 (got -1)"
    assert plain_reason(RecursionError("maximum recursion depth exceeded")) == "nested too deeply"
    for message in [*cases.values(), str(info.value), plain_reason(ValueError("x"))]:
        assert not PYTHON_TERMS.search(message), message
