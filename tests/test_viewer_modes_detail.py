"""The simulation's level of detail (``detail``) across the viewer's 2D/3D switch (issue 39,
item 5): switching to 2D used to turn it off silently (starlings-3d -> starlings-2d took the twin
preset's ``detail``, off) and a focus or view direction set in one dimension did not fit the
other. It now stays on, its focus and view direction converted."""

from flocksim import load_preset
from flocksim.config import to_dict
from flocksim.viewer.controls import apply_changes
from flocksim.viewer.modes import mode_params


def with_detail(preset: str, **fields) -> object:
    return apply_changes(load_preset(preset), {"detail.enabled": True, **{f"detail.{k}": v for k, v in fields.items()}})


def test_the_level_of_detail_survives_a_switch_to_the_twin_preset_converted():
    params = with_detail("starlings-3d", focus=[1.0, 2.0, 3.0], view_direction=[0.6, 0.0, 0.8], near=70.0, far_every=3)
    flat, preset = mode_params(params, "starlings-3d", 2)
    assert preset == "starlings-2d"
    detail = to_dict(flat)["detail"]
    assert detail["enabled"] is True and detail["near"] == 70.0 and detail["far_every"] == 3
    assert detail["focus"] == [1.0, 2.0] and detail["view_direction"] == [0.6, 0.0]
    assert to_dict(flat)["world"] == to_dict(load_preset("starlings-2d"))["world"]  # the twin's own world
    # a direction along the lost axis leaves no cone; back to 3D, the focus gains the height 0 of
    # an ellipsoid world's centre and the direction a zero
    along_z = with_detail("starlings-3d", view_direction=[0.0, 0.0, 1.0])
    assert to_dict(mode_params(along_z, "starlings-3d", 2)[0])["detail"]["view_direction"] == []
    deep, preset = mode_params(
        with_detail("starlings-2d", focus=[5.0, 6.0], view_direction=[0.0, 1.0]), "starlings-2d", 3
    )
    assert preset == "starlings-3d"
    assert to_dict(deep)["detail"]["focus"] == [5.0, 6.0, 0.0]
    assert to_dict(deep)["detail"]["view_direction"] == [0.0, 1.0, 0.0]
    # off stays off: the twin preset as shipped
    assert to_dict(mode_params(load_preset("starlings-3d"), "starlings-3d", 2)[0]) == to_dict(
        load_preset("starlings-2d")
    )


def test_the_level_of_detail_survives_a_carried_switch():
    params = with_detail("boids-2d", focus=[10.0, 20.0], view_direction=[1.0, 0.0])
    deep, preset = mode_params(params, "boids-2d", 3)
    assert preset is None
    detail = to_dict(deep)["detail"]
    height = to_dict(deep)["world"]["bounds"]["size"][2]
    assert detail["enabled"] is True
    assert detail["focus"] == [10.0, 20.0, height / 2] and detail["view_direction"] == [1.0, 0.0, 0.0]
