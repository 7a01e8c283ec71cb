"""TOML in and out, dotted overrides, and one-line error messages naming the key and the allowed values."""

from __future__ import annotations

import math
from importlib import resources

import pytest

from flocksim.config import (
    ConfigError,
    apply_overrides,
    dumps_toml,
    load_toml,
    loads_toml,
    parse_override,
    save_toml,
    validate,
)
from flocksim.params import AbmFlockingParams, ReynoldsParams, parse_params
from flocksim.scenarios import load_preset, preset_names

PRESETS = ["crowd", "boids-2d", "starlings-2d", "starlings-3d", "abm-flocking-small", "abm-flocking-large", "enemies"]
PRESETS += ["vicsek", "couzin"]  # research models (issue 9)
PRESETS += ["minions", "crowd-maze"]  # game agents (issue 5)
PRESETS += ["reef", "starlings-3d-large"]  # viewer scenes (issue 6)
PRESETS += ["starlings-3d-waves"]  # turn waves (issue 13)
PRESETS += ["flappy-boids"]  # the game (issue 19)
PRESETS += ["starlings-2d-reference", "starlings-3d-reference", "starlings-3d-large-reference"]  # issue 25


def one_line(exc: pytest.ExceptionInfo[ConfigError]) -> str:
    message = str(exc.value)
    assert message.strip(), "empty error message"
    assert "\n" not in message and "\r" not in message, f"not one line: {message!r}"
    return message


def odd_params() -> ReynoldsParams:
    """Non-default values that are hard to print exactly: 0.1, 1/3, 1e-300, per-agent lists."""
    return parse_params(
        {
            "model": "reynolds",
            "seed": 2**63 - 1,
            "description": 'odd "floats" \\ and ünïcode',
            "world": {"dim": 3, "dt": 1 / 3, "bounds": {"kind": "ellipsoid", "size": [0.1, 1 / 3, 1e12 / 3]}},
            "agents": {
                "n": 3,
                "max_speed": 0.1,
                "min_speed": 1e-300,
                "max_force": 1 / 3,
                "mass": [0.1, 1 / 3, 1e-300],
                "radius": [0.0, 2 / 3, 1e-300],
                "init": {"kind": "aligned", "direction": [0.1, 1 / 3, -1e-300], "spread_deg": 1 / 3, "fill": 0.1},
            },
            "neighbors": {"mode": "topological", "k": 3},
            "rules": {
                "steering": "clamped-sum",
                "separation": {"weight": 1 / 3, "radius": 0.1, "form": "minion", "eps": 1e-300},
                "alignment": {"weight": 1e-300},
                "cohesion": {"radius": 7 / 3},
                "seek": {"weight": 0.1, "target": [1 / 3, -0.1, 1e-300], "arrival_radius": 0.3, "stop_radius": 0.1},
            },
        }
    )


# --- TOML round trip ----------------------------------------------------------------------------------


def test_all_presets_ship():
    assert sorted(preset_names()) == sorted(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_round_trip_is_exact(name):
    params = load_preset(name)
    text = dumps_toml(params)
    again = loads_toml(text)
    assert type(again) is type(params)
    assert again == params
    assert dumps_toml(again) == text


@pytest.mark.parametrize("name", PRESETS)
def test_shipped_preset_file_loads_equal_to_load_preset(name, tmp_path):
    source = resources.files("flocksim.scenarios") / "presets" / f"{name}.toml"
    path = tmp_path / f"{name}.toml"
    path.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_toml(path) == load_preset(name)


def test_odd_float_round_trip_is_exact():
    params = odd_params()
    assert params.world.dt == 1 / 3
    assert params.agents.mass == [0.1, 1 / 3, 1e-300]
    text = dumps_toml(params)
    again = loads_toml(text)
    assert again == params
    assert again.agents.mass[1] == 1 / 3  # bit-exact, not approximately
    assert again.rules.separation.eps == 1e-300
    assert again.world.bounds.size[2] == 1e12 / 3
    assert again.seed == 2**63 - 1
    assert again.description == params.description
    assert dumps_toml(again) == text


def test_abm_round_trip_with_odd_values():
    params = AbmFlockingParams(seed=7)
    params = apply_overrides(params, ["flocking.vision=0.1", "flocking.match_factor=0.3333333333333333", "agents.n=3"])
    assert params.flocking.match_factor == 1 / 3
    text = dumps_toml(params)
    assert loads_toml(text) == params
    assert dumps_toml(loads_toml(text)) == text


def test_save_and_load_toml(tmp_path):
    params = odd_params()
    path = tmp_path / "odd.toml"
    save_toml(params, path)
    assert path.read_text(encoding="utf-8") == dumps_toml(params)
    loaded = load_toml(path)
    assert loaded == params
    save_toml(loaded, tmp_path / "again.toml")
    assert (tmp_path / "again.toml").read_bytes() == path.read_bytes()
    assert load_toml(str(path)) == params  # str paths too


def test_defaults_round_trip():
    for params in (ReynoldsParams(), AbmFlockingParams()):
        assert loads_toml(dumps_toml(params)) == params


def test_minimal_toml_fills_defaults():
    params = loads_toml("[agents]\nn = 12\n")
    assert isinstance(params, ReynoldsParams)
    assert params.agents.n == 12
    assert params.rules == ReynoldsParams().rules


# --- dotted overrides ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "value"),
    [
        ("rules.alignment.weight=0.5", ["rules", "alignment", "weight"], 0.5),
        ("agents.n = 12 ", ["agents", "n"], 12),
        ("world.bounds.size=[10, 20.5]", ["world", "bounds", "size"], [10, 20.5]),
        ("x=true", ["x"], True),
        ("x=false", ["x"], False),
        ('x="quoted text"', ["x"], "quoted text"),
        ("model=abm-flocking", ["model"], "abm-flocking"),
        ("description=bare words here", ["description"], "bare words here"),
        ("a.b=1e-300", ["a", "b"], 1e-300),
        ("a=0.1", ["a"], 0.1),
    ],
)
def test_parse_override(text, path, value):
    got_path, got_value = parse_override(text)
    assert got_path == path
    assert got_value == value
    assert type(got_value) is type(value)


@pytest.mark.parametrize("text", ["x=nan", "x=NaN", "x=inf", "x=-inf", "x=+inf", "x=Inf"])
def test_parse_override_reads_nan_and_inf_as_floats(text):
    _, value = parse_override(text)
    assert isinstance(value, float) and not math.isfinite(value)


def test_nested_override():
    base = load_preset("boids-2d")
    params = apply_overrides(base, ["rules.alignment.weight=0.5", "rules.separation.form=minion"])
    assert params.rules.alignment.weight == 0.5
    assert params.rules.separation.form == "minion"
    assert base.rules.alignment.weight == 1.0  # the input is not modified
    assert params.rules.cohesion == base.rules.cohesion


def test_override_ints_lists_and_strings():
    params = apply_overrides(
        load_preset("boids-2d"),
        [
            "agents.n=4",
            "agents.mass=[1, 2.5, 3, 4]",
            "world.bounds.size=[50, 60]",
            "world.bounds.kind=periodic",
            'neighbors.mode="topological"',
            "description=a run with spaces",
            "seed=99",
        ],
    )
    assert params.agents.n == 4
    assert params.agents.mass == [1.0, 2.5, 3.0, 4.0]
    assert params.world.bounds.size == [50.0, 60.0]
    assert params.world.bounds.kind == "periodic"
    assert params.neighbors.mode == "topological"
    assert params.description == "a run with spaces"
    assert params.seed == 99


def test_override_to_3d_with_matching_size():
    params = apply_overrides(load_preset("boids-2d"), ["world.dim=3", "world.bounds.size=[10, 20, 30]"])
    assert params.world.dim == 3 and params.world.bounds.size == [10.0, 20.0, 30.0]


def test_later_override_wins_and_none_is_identity():
    base = load_preset("crowd")
    assert apply_overrides(base, []) == base
    assert apply_overrides(base, ["agents.n=5", "agents.n=7"]).agents.n == 7


def test_boolean_override_is_a_wrong_type():
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["agents.n=true"])
    message = one_line(exc)
    assert "agents.n" in message and "allowed: >= 0" in message
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["rules.alignment.weight=false"])
    assert "rules.alignment.weight" in one_line(exc)
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["world.bounds.size=[true, 1]"])
    assert "world.bounds.size" in one_line(exc)


def test_switch_model_keeps_shared_sections():
    base = apply_overrides(load_preset("boids-2d"), ["world.bounds.kind=periodic", "seed=5", "agents.n=77"])
    params = apply_overrides(base, ["model=abm-flocking"])
    assert isinstance(params, AbmFlockingParams)
    assert params.world == base.world
    assert params.seed == 5
    assert params.description == base.description
    assert params.neighbors == base.neighbors
    assert params.agents.n == 77
    assert params.agents.init == base.agents.init
    assert params.flocking == AbmFlockingParams().flocking


def test_switch_model_then_set_its_own_sections():
    params = apply_overrides(load_preset("boids-2d"), ["model=abm-flocking", "flocking.vision=3", "agents.n=40"])
    assert isinstance(params, AbmFlockingParams)
    assert params.flocking.vision == 3.0 and params.agents.n == 40
    back = apply_overrides(params, ["model=reynolds", "rules.alignment.weight=0.25"])
    assert isinstance(back, ReynoldsParams)
    assert back.rules.alignment.weight == 0.25
    assert back.world == params.world and back.agents.n == 40


def test_switch_to_same_model_changes_nothing():
    base = load_preset("starlings-3d")
    assert apply_overrides(base, ["model=reynolds"]) == base


# --- error messages -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("override", "key", "allowed"),
    [
        ("agents.foo=1", "agents.foo", "max_speed"),
        ("rules.alignment.wieght=1", "rules.alignment.wieght", "weight"),
        ("foo=1", "foo", "world"),
        ("foo.bar=1", "foo", "rules"),
        ("world.bounds.shape=box", "world.bounds.shape", "kind"),
        ("flocking.vision=3", "flocking", "rules"),  # a section of the other model
    ],
)
def test_unknown_key_names_key_and_lists_allowed_keys(override, key, allowed):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [override])
    message = one_line(exc)
    assert message.startswith(f"{key}:")
    assert "unknown key" in message
    assert allowed in message.split("allowed", 1)[1]


def test_key_below_a_value_is_an_error():
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["agents.n.x=1"])
    assert "agents.n" in one_line(exc)


@pytest.mark.parametrize(
    ("override", "key", "allowed"),
    [
        ("agents.n=abc", "agents.n", ">= 0 and <= 50000000"),
        ("agents.n=2.5", "agents.n", ">= 0 and <= 50000000"),
        ("agents.max_speed=fast", "agents.max_speed", "> 0 and <= 1e+09"),
        ("world.bounds.size=big", "world.bounds.size", "each > 0"),
        ("world.bounds.kind=sphere", "world.bounds.kind", "box | ellipsoid | periodic | open"),
        ("world.dim=4", "world.dim", "2 | 3"),
        ("neighbors.mode=voronoi", "neighbors.mode", "metric | topological"),
        ("rules.steering=sum", "rules.steering", "reynolds | clamped-sum"),
        ("rules=3", "rules", ""),
    ],
)
def test_wrong_type_names_key_and_allowed_values(override, key, allowed):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [override])
    message = one_line(exc)
    assert message.startswith(f"{key}:"), message
    assert allowed in message


@pytest.mark.parametrize(
    ("override", "key", "allowed"),
    [
        ("agents.n=-1", "agents.n", "allowed: >= 0 and <= 50000000"),
        ("world.dt=0", "world.dt", "allowed: >= 1e-06 and <= 10"),
        ("world.dt=11", "world.dt", "allowed: >= 1e-06 and <= 10"),
        ("rules.alignment.weight=-0.5", "rules.alignment.weight", "allowed: >= 0 and <= 1e+06"),
        ("neighbors.k=0", "neighbors.k", "allowed: >= 1 and <= 1024"),
        ("agents.init.spread_deg=181", "agents.init.spread_deg", "allowed: >= 0 and <= 180"),
        ("seed=-1", "seed", "allowed: >= 0"),
    ],
)
def test_out_of_range_names_key_and_allowed_range(override, key, allowed):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [override])
    message = one_line(exc)
    assert message.startswith(f"{key}:"), message
    assert allowed in message


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", "+inf"])
@pytest.mark.parametrize("key", ["agents.max_speed", "world.dt", "rules.separation.weight"])
def test_nan_and_inf_overrides_rejected(key, value):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [f"{key}={value}"])
    message = one_line(exc)
    assert message.startswith(f"{key}:")
    assert "finite" in message


@pytest.mark.parametrize("value", ["[1, nan]", "[inf, 1]"])
def test_nan_and_inf_inside_list_override_rejected(value):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [f"world.bounds.size={value}"])
    message = one_line(exc)
    assert "world.bounds.size" in message and "finite" in message


def test_cross_field_errors_are_one_line():
    cases = [
        ["world.bounds.size=[1, 2, 3]"],
        ["world.dim=3"],
        ["agents.min_speed=100"],
        ["agents.mass=[1, 2]"],
        ["agents.init.speed_min=0.9", "agents.init.speed_max=0.1"],
        ["rules.seek.arrival_radius=1", "rules.seek.stop_radius=2"],
    ]
    for overrides in cases:
        with pytest.raises(ConfigError) as exc:
            apply_overrides(load_preset("boids-2d"), overrides)
        one_line(exc)
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["world.bounds.size=[1, 2, 3]"])
    assert "world.bounds.size" in str(exc.value) and "world.dim" in str(exc.value)


@pytest.mark.parametrize("text", ["agents.n", "=3", "a..b=1", ".a=1", ""])
def test_malformed_override(text):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [text])
    assert "KEY=VALUE" in one_line(exc)


@pytest.mark.parametrize("model", ["nope", "3", "Reynolds"])
def test_unknown_model_lists_models(model):
    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), [f"model={model}"])
    message = one_line(exc)
    assert message.startswith("model:")
    assert "reynolds" in message and "abm-flocking" in message
    with pytest.raises(ConfigError) as exc:
        validate({"model": model})
    assert "abm-flocking" in one_line(exc)


def test_validate_messages():
    with pytest.raises(ConfigError) as exc:
        validate({"agents": {"n": -5}})
    assert one_line(exc).startswith("agents.n:")
    with pytest.raises(ConfigError) as exc:
        validate({"world": {"bounds": {"oops": 1}}})
    message = one_line(exc)
    assert message.startswith("world.bounds.oops:") and "kind" in message
    with pytest.raises(ConfigError) as exc:
        validate({"model": "abm-flocking", "flocking": {"vision": 0}})
    assert one_line(exc).startswith("flocking.vision:")
    with pytest.raises(ConfigError) as exc:
        validate({"world": {"dt": math.nan}})
    assert "world.dt" in one_line(exc)


def test_unknown_preset_lists_presets():
    with pytest.raises(ConfigError) as exc:
        load_preset("boids-3d")
    message = one_line(exc)
    assert "boids-3d" in message
    for name in PRESETS:
        assert name in message


# --- unreadable files ---------------------------------------------------------------------------------


def test_toml_syntax_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('model = "reynolds"\n[world\ndt = 1\n', encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    message = one_line(exc)
    assert str(path) in message and "TOML" in message


def test_toml_unterminated_multiline_string(tmp_path):
    path = tmp_path / "ml.toml"
    path.write_text('description = """\nline one\nline two\n', encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    assert str(path) in one_line(exc)


def test_missing_file(tmp_path):
    path = tmp_path / "missing.toml"
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    assert str(path) in one_line(exc)


def test_directory(tmp_path):
    path = tmp_path / "dir.toml"
    path.mkdir()
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    assert str(path) in one_line(exc)


@pytest.mark.parametrize(
    "payload",
    [bytes(range(256)), b"\xff\xfe\x00\x01\x02binary\n\x00", b"\x00\x00\x00\x00", b"model = \x00\n"],
    ids=["all-bytes", "bom-like", "nuls", "nul-in-value"],
)
def test_binary_garbage(tmp_path, payload):
    path = tmp_path / "garbage.toml"
    path.write_bytes(payload)
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    assert str(path) in one_line(exc)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('model = "nope"\n', "model"),
        ("bogus = 1\n", "bogus"),
        ("[agents]\nn = -1\n", "agents.n"),
        ('[agents]\nn = "abc"\n', "agents.n"),
        ("[agents]\nn = true\n", "agents.n"),
        ("[world]\ndt = nan\n", "world.dt"),
        ("[world]\ndt = inf\n", "world.dt"),
        ("[world]\ndt = -inf\n", "world.dt"),
        ('model = "abm-flocking"\n[rules]\n', "rules"),
    ],
)
def test_invalid_toml_content_names_key(tmp_path, text, key):
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as exc:
        load_toml(path)
    assert one_line(exc).startswith(f"{key}:")
