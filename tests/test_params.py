"""The parameter schema: units and ranges documented, defaults valid, strict validation."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from flocksim.config import ConfigError
from flocksim.params import (
    MODEL_NAMES,
    AbmFlockingParams,
    CouzinParams,
    ReynoldsParams,
    VicsekParams,
    params_json_schema,
    parse_params,
)
from flocksim.scenarios import load_preset, preset_names

SCHEMA = params_json_schema()
DEFS = SCHEMA["$defs"]
MODELS = {
    "reynolds": ReynoldsParams,
    "abm-flocking": AbmFlockingParams,
    "vicsek": VicsekParams,
    "couzin": CouzinParams,
}
UNIT = re.compile(r"\[([^\]]+)\]")
BOUND = re.compile(r"(>=|<=|>|<) ([-+0-9.e]+)")


def _ref_name(ref: str) -> str:
    assert ref.startswith("#/$defs/"), ref
    return ref.removeprefix("#/$defs/")


def _reachable_models() -> set[str]:
    """Every $defs model reachable from the schema root, walking $ref recursively."""
    seen: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                name = _ref_name(node["$ref"])
                if name not in seen:
                    seen.add(name)
                    walk(DEFS[name])
            for key, value in node.items():
                if key != "$defs":
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(SCHEMA)
    return seen


def _all_fields() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (model, name, prop)
        for model in sorted(_reachable_models())
        for name, prop in DEFS[model].get("properties", {}).items()
    ]


FIELDS = _all_fields()
FIELD_IDS = [f"{model}.{name}" for model, name, _ in FIELDS]


def _choices(prop: dict[str, Any]) -> list[Any] | None:
    if "enum" in prop:
        return prop["enum"]
    if "const" in prop:
        return [prop["const"]]
    return None


def _is_numeric(prop: dict[str, Any]) -> bool:
    alternatives = [prop, *prop.get("anyOf", [])]
    types = [alt.get("type") for alt in alternatives] + [alt.get("items", {}).get("type") for alt in alternatives]
    return any(t in ("number", "integer") for t in types)


# --- the JSON Schema documents every field ----------------------------------------------------------


def test_schema_root_is_a_discriminated_union_over_every_model():
    assert SCHEMA["discriminator"]["propertyName"] == "model"
    assert set(SCHEMA["discriminator"]["mapping"]) == set(MODEL_NAMES)
    refs = {_ref_name(alt["$ref"]) for alt in SCHEMA["oneOf"]}
    assert refs == {cls.__name__ for cls in MODELS.values()}


def test_every_defined_model_is_reachable_and_walked():
    assert _reachable_models() == set(DEFS)
    assert len(FIELDS) > 40  # every model's fields, not an empty walk


def test_every_model_forbids_extra_keys_in_the_schema():
    for name in _reachable_models():
        assert DEFS[name].get("additionalProperties") is False, name


@pytest.mark.parametrize(("model", "name", "prop"), FIELDS, ids=FIELD_IDS)
def test_field_description_states_unit_or_choices_and_allowed_values(model, name, prop):
    description = prop.get("description", "")
    assert description.strip(), f"{model}.{name} has no description"
    assert "\n" not in description
    if "$ref" in prop:
        return  # a section: its own fields are checked where the walk reaches its model
    choices = _choices(prop)
    if choices is not None:
        # a list of choices: every allowed value is named in the description
        for value in choices:
            assert str(value) in description, f"{model}.{name}: choice {value!r} missing from {description!r}"
        return
    assert "allowed:" in description, f"{model}.{name}: no 'allowed:' in {description!r}"
    if _is_numeric(prop):
        unit = UNIT.search(description)
        assert unit, f"{model}.{name}: no [unit] in {description!r}"
        assert prop.get("unit") == unit.group(1), f"{model}.{name}: 'unit' key disagrees with {description!r}"


@pytest.mark.parametrize(("model", "name", "prop"), FIELDS, ids=FIELD_IDS)
def test_allowed_range_in_description_matches_schema_bounds(model, name, prop):
    """The numbers after 'allowed:' are the bounds the schema (and the validator) enforce."""
    description = prop.get("description", "")
    if "allowed:" not in description or not any(k in prop for k in ("minimum", "exclusiveMinimum", "maximum")):
        return
    allowed = description.split("allowed:", 1)[1]
    stated = {op: float(num.rstrip(".")) for op, num in BOUND.findall(allowed)}
    if "minimum" in prop:
        assert stated.get(">=") == pytest.approx(prop["minimum"]), (model, name, allowed)
    if "exclusiveMinimum" in prop:
        assert stated.get(">") == pytest.approx(prop["exclusiveMinimum"]), (model, name, allowed)
    if "maximum" in prop:
        assert stated.get("<=") == pytest.approx(prop["maximum"]), (model, name, allowed)


# --- defaults and the discriminated union -----------------------------------------------------------


@pytest.mark.parametrize("cls", [ReynoldsParams, AbmFlockingParams])
def test_defaults_validate(cls):
    params = cls()
    again = parse_params(params.model_dump(mode="json"))
    assert type(again) is cls
    assert again == params


def test_missing_model_key_means_reynolds():
    assert type(parse_params({})) is ReynoldsParams
    assert parse_params({}) == ReynoldsParams()


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_model_key_picks_the_model(name):
    params = parse_params({"model": name})
    assert type(params) is MODELS[name]
    assert params.model == name


def test_union_validates_each_model_with_its_own_sections():
    abm = parse_params({"model": "abm-flocking", "flocking": {"vision": 7.0}, "agents": {"n": 12}})
    assert isinstance(abm, AbmFlockingParams)
    assert abm.flocking.vision == 7.0
    assert abm.agents.n == 12
    rey = parse_params({"model": "reynolds", "rules": {"alignment": {"weight": 0.25}}})
    assert isinstance(rey, ReynoldsParams)
    assert rey.rules.alignment.weight == 0.25
    # a section of the other model is an unknown key here
    with pytest.raises(ValidationError):
        parse_params({"model": "reynolds", "flocking": {"vision": 7.0}})
    with pytest.raises(ValidationError):
        parse_params({"model": "abm-flocking", "rules": {}})
    # abm agents have no speed limits
    with pytest.raises(ValidationError):
        parse_params({"model": "abm-flocking", "agents": {"max_speed": 3.0}})


@pytest.mark.parametrize("model", ["boids", "Reynolds", "", 3, None])
def test_unknown_model_rejected(model):
    with pytest.raises(ValidationError):
        parse_params({"model": model})


@pytest.mark.parametrize("name", preset_names())
def test_presets_are_valid_parameters(name):
    params = load_preset(name)
    assert type(parse_params(params.model_dump(mode="json"))) is type(params)
    assert params.description


# --- strictness: unknown keys, NaN/inf, lengths -------------------------------------------------------


def _section_paths(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for key, value in data.items():
        if isinstance(value, dict):
            paths += _section_paths(value, (*prefix, key))
    return paths


def _get(data: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _unknown_key_cases() -> list[tuple[str, tuple[str, ...]]]:
    cases = []
    for name, cls in MODELS.items():
        for path in _section_paths(cls().model_dump(mode="json")):
            cases.append((name, path))
    return cases


@pytest.mark.parametrize(
    ("model", "path"), _unknown_key_cases(), ids=lambda v: ".".join(v) or "<top>" if isinstance(v, tuple) else v
)
def test_unknown_key_rejected_at_every_level(model, path):
    data = MODELS[model]().model_dump(mode="json")
    _get(data, path)["bogus_key"] = 1
    with pytest.raises(ValidationError) as info:
        parse_params(data)
    errors = info.value.errors()
    assert any(e["type"] == "extra_forbidden" and e["loc"][-1] == "bogus_key" for e in errors), errors


def _float_leaves(data: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    leaves = []
    for key, value in data.items():
        if isinstance(value, dict):
            leaves += _float_leaves(value, (*prefix, key))
        elif isinstance(value, float):
            leaves.append((*prefix, key))
    return leaves


def _float_cases() -> list[tuple[str, tuple[str, ...]]]:
    return [(name, path) for name, cls in MODELS.items() for path in _float_leaves(cls().model_dump(mode="json"))]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize(("model", "path"), _float_cases(), ids=lambda v: ".".join(v) if isinstance(v, tuple) else v)
def test_nan_and_inf_rejected_in_every_float_field(model, path, bad):
    data = MODELS[model]().model_dump(mode="json")
    _get(data, path[:-1])[path[-1]] = bad
    with pytest.raises(ValidationError):
        parse_params(data)


LIST_CASES = {
    "bounds.size": lambda x: {"world": {"bounds": {"size": [1.0, x]}}},
    "init.direction": lambda x: {"agents": {"init": {"direction": [1.0, x, 0.0]}}},
    "seek.target": lambda x: {"rules": {"seek": {"target": [x, 0.0]}}},
    "mass": lambda x: {"agents": {"n": 3, "mass": [1.0, x, 1.0]}},
    "radius": lambda x: {"agents": {"n": 3, "radius": [1.0, 1.0, x]}},
    "scalar mass": lambda x: {"agents": {"mass": x}},
    "scalar radius": lambda x: {"agents": {"radius": x}},
}


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("case", list(LIST_CASES))
def test_nan_and_inf_rejected_inside_lists_and_per_agent_values(case, bad):
    parse_params(LIST_CASES[case](0.5))  # the same shape with a finite value is fine
    with pytest.raises(ValidationError):
        parse_params(LIST_CASES[case](bad))


def test_nan_rejected_on_assignment():
    params = ReynoldsParams()
    with pytest.raises(ConfigError, match=r"^agents\.max_speed: must be a finite number"):
        params.agents.max_speed = math.nan
    with pytest.raises(ConfigError, match=r"^world\.dt: must be a finite number"):
        params.world.dt = math.inf


def one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text and "pydantic" not in text and "http" not in text, text
    return text


def test_an_invalid_assignment_from_python_is_one_line_naming_the_field():
    """As --set says it: the dotted key, what is wrong, the allowed values and the value given;
    the value is left as it was."""
    params = load_preset("boids-2d")
    with pytest.raises(ConfigError) as exc:
        params.rules.alignment.weight = -1
    assert one_line(exc) == (
        "rules.alignment.weight: Input should be greater than or equal to 0; allowed: >= 0 and <= 1e+06; got -1"
    )
    assert params.rules.alignment.weight == load_preset("boids-2d").rules.alignment.weight
    with pytest.raises(ConfigError) as exc:
        params.world.bounds.kind = "torus"
    assert one_line(exc).startswith("world.bounds.kind: ")
    with pytest.raises(ConfigError) as exc:
        params.world.dt = "fast"
    assert one_line(exc).startswith("world.dt: Input should be a valid number")
    copy = params.model_copy(deep=True)  # a copy's blocks know their keys too
    with pytest.raises(ConfigError, match=r"^agents\.max_speed: "):
        copy.agents.max_speed = -5.0


def test_a_huge_region_is_refused_by_name():
    """world.bounds.size is bounded (at most 1e12 per axis, as obstacle coordinates): a 1e300 box was
    accepted, and a running simulation kept its old walls."""
    from flocksim.config import apply_overrides, validate

    with pytest.raises(ConfigError) as exc:
        apply_overrides(load_preset("boids-2d"), ["world.bounds.size=[1e300, 1e300]"])
    assert one_line(exc) == (
        "world.bounds.size: every value must be > 0 and <= 1e12; allowed: each > 0 and <= 1e12, as many as "
        "world.dim; got [1e+300, 1e+300]"
    )
    with pytest.raises(ConfigError, match=r"^world\.bounds\.size: every value must be > 0 and <= 1e12"):
        load_preset("boids-2d").world.bounds.size = [1e300, 1e300]
    assert validate({"world": {"bounds": {"size": [1e12, 1e12]}}}).world.bounds.size == [1e12, 1e12]


def test_a_running_simulations_parameters_stay_those_it_runs():
    """sim.params cannot drift from the running state: a change (in place or by assignment) is
    refused by name with the way to make it; an invalid one names the allowed values."""
    from flocksim.config import apply_overrides
    from flocksim.simulation import Simulation

    given = apply_overrides(load_preset("boids-2d"), ["agents.n=20"])
    sim = Simulation(given, seed=1)
    given.world.bounds.size = [900.0, 900.0]  # the caller's object is its own
    assert sim.params.world.bounds.size == [400.0, 250.0]
    with pytest.raises(ConfigError) as exc:
        sim.params.world.bounds.size = [500.0, 300.0]
    assert one_line(exc).startswith("world.bounds.size: a running Simulation's parameters are read-only")
    with pytest.raises(ConfigError) as exc:
        sim.params.world.bounds.size = [1e300, 1e300]
    assert one_line(exc).startswith("world.bounds.size: every value must be > 0 and <= 1e12")
    with pytest.raises(ConfigError) as exc:
        sim.params = {"model": "reynolds", "world": {"dt": -1}}
    assert one_line(exc).startswith("world.dt: Input should be greater than or equal to 0.000001; allowed: >= 1e-06")
    with pytest.raises(ConfigError) as exc:
        sim.params = apply_overrides(sim.params, ["rules.alignment.weight=0.5"])
    assert one_line(exc).startswith("rules.alignment.weight: a running Simulation's parameters are read-only")
    sim.params = sim.params.model_copy(deep=True)  # the same values: nothing to change
    assert sim.params.world.bounds.size == [400.0, 250.0]
    assert sim.params.rules.alignment.weight == given.rules.alignment.weight
    edited = sim.params.model_copy(deep=True)  # a copy is the caller's to change
    edited.rules.alignment.weight = 0.5
    assert Simulation(edited, seed=1).params.rules.alignment.weight == 0.5


@pytest.mark.parametrize("field", ["mass", "radius"])
def test_per_agent_lists(field):
    good = parse_params({"agents": {"n": 4, field: [1.0, 2.0, 3.0, 4.0]}})
    assert getattr(good.agents, field) == [1.0, 2.0, 3.0, 4.0]
    for wrong in ([1.0, 2.0, 3.0], [1.0] * 5, []):
        with pytest.raises(ValidationError, match=field):
            parse_params({"agents": {"n": 4, field: wrong}})


def test_per_agent_value_ranges():
    with pytest.raises(ValidationError, match="mass"):
        parse_params({"agents": {"n": 2, "mass": [1.0, 0.0]}})
    with pytest.raises(ValidationError, match="mass"):
        parse_params({"agents": {"mass": -1.0}})
    with pytest.raises(ValidationError, match="radius"):
        parse_params({"agents": {"n": 2, "radius": [1.0, -0.5]}})
    assert parse_params({"agents": {"n": 2, "radius": [0.0, 0.5]}}).agents.radius == [0.0, 0.5]


@pytest.mark.parametrize(
    ("dim", "size", "ok"),
    [
        (2, [10.0, 20.0], True),
        (3, [10.0, 20.0, 30.0], True),
        (2, [10.0, 20.0, 30.0], False),
        (3, [10.0, 20.0], False),
        (2, [10.0], False),
        (2, [], False),
        (2, [10.0, 0.0], False),
        (3, [10.0, -1.0, 5.0], False),
    ],
)
@pytest.mark.parametrize("model", MODEL_NAMES)
def test_bounds_size_matches_dim(model, dim, size, ok):
    data = {"model": model, "world": {"dim": dim, "bounds": {"size": size}}}
    if ok:
        assert parse_params(data).world.bounds.size == size
    else:
        with pytest.raises(ValidationError, match=r"world\.bounds\.size|size"):
            parse_params(data)


@pytest.mark.parametrize(
    "data",
    [
        {"world": {"dim": 4}},
        {"world": {"dt": 0.0}},
        {"world": {"dt": -0.1}},
        {"world": {"bounds": {"kind": "sphere"}}},
        {"agents": {"n": -1}},
        {"agents": {"n": 2.5}},
        {"agents": {"n": "many"}},
        {"agents": {"max_speed": 0.0}},
        {"agents": {"min_speed": 6.0, "max_speed": 5.0}},
        {"agents": {"init": {"speed_min": 0.9, "speed_max": 0.1}}},
        {"agents": {"init": {"direction": [0.0, 0.0]}}},
        {"agents": {"init": {"direction": [1.0]}}},
        {"neighbors": {"mode": "voronoi"}},
        {"neighbors": {"k": 0}},
        {"rules": {"steering": "sum"}},
        {"rules": {"separation": {"form": "exp"}}},
        {"rules": {"separation": {"eps": 0.0}}},
        {"rules": {"seek": {"arrival_radius": 1.0, "stop_radius": 2.0}}},
        {"seed": -1},
        {"model": "abm-flocking", "flocking": {"vision": 0.0}},
    ],
    ids=repr,
)
def test_out_of_range_or_wrong_type_rejected(data):
    with pytest.raises(ValidationError):
        parse_params(data)


def test_every_section_is_a_strict_model():
    def walk(cls: type[BaseModel]) -> None:
        assert cls.model_config.get("extra") == "forbid", cls
        assert cls.model_config.get("allow_inf_nan") is False, cls
        for field in cls.model_fields.values():
            ann = field.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann)

    for cls in MODELS.values():
        walk(cls)
