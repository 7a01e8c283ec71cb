"""Offline rendering: the rasterizer against hand-computed pixels, the camera, the video writers
(probed with PyAV and Pillow), and whole-run rendering."""

from __future__ import annotations

import av
import numpy as np
import pytest
from PIL import Image

from flocksim import Simulation, apply_overrides, load_preset
from flocksim.io import Recorder
from flocksim.render import Camera, CameraError, RenderError, View, parse_camera, parse_size, render_run
from flocksim.render.movie import BACKGROUND, speed_range
from flocksim.render.raster import blend_lines, fill_triangles, triangles
from flocksim.render.writers import GifWriter, Mp4Writer

RED = np.array([[255, 0, 0]], dtype=np.uint8)


def blank(h: int = 8, w: int = 8) -> np.ndarray:
    return np.zeros((h, w, 3), dtype=np.uint8)


def painted(img: np.ndarray) -> set[tuple[int, int]]:
    """(x, y) of every non-black pixel."""
    ys, xs = np.nonzero(img.any(axis=2))
    return set(zip(xs.tolist(), ys.tolist(), strict=True))


# --- rasterizer -----------------------------------------------------------------------------------------


def test_triangle_fills_exactly_the_pixels_whose_centres_are_inside():
    img = blank()
    tri = np.array([[[1.0, 1.0], [5.0, 1.0], [1.0, 5.0]]])
    fill_triangles(img, tri, RED, np.array([0]))
    # centres (x + 0.5, y + 0.5) with x, y >= 1 and x + y + 1 <= 6
    expected = {(x, y) for x in range(8) for y in range(8) if x >= 1 and y >= 1 and x + y <= 5}
    assert painted(img) == expected and len(expected) == 10
    assert (img[1, 1] == [255, 0, 0]).all()


def test_triangle_orientation_does_not_matter():
    a, b = blank(), blank()
    fill_triangles(a, np.array([[[1.0, 1.0], [5.0, 1.0], [1.0, 5.0]]]), RED, np.array([0]))
    fill_triangles(b, np.array([[[1.0, 1.0], [1.0, 5.0], [5.0, 1.0]]]), RED, np.array([0]))
    assert np.array_equal(a, b)


def test_subpixel_triangle_marks_its_centroid_and_nan_is_skipped():
    img = blank()
    tri = np.array([[[3.1, 4.2], [3.3, 4.2], [3.2, 4.4]], [[np.nan, 1.0], [2.0, 2.0], [1.0, 2.0]]])
    fill_triangles(img, tri, np.repeat(RED, 2, axis=0), np.array([0, 1]))
    assert painted(img) == {(3, 4)}


def test_later_triangles_cover_earlier_ones_and_clip_at_the_border():
    img = blank()
    tri = np.array([[[-4.0, -4.0], [20.0, -4.0], [-4.0, 20.0]]] * 2)  # covers the top-left half and beyond
    colors = np.array([[255, 0, 0], [0, 0, 255]], dtype=np.uint8)
    fill_triangles(img, tri, colors, np.array([0, 1]))
    assert (img[0, 0] == [0, 0, 255]).all()
    fill_triangles(img, tri, colors, np.array([1, 0]))
    assert (img[0, 0] == [255, 0, 0]).all()


def test_triangles_point_along_the_heading():
    tri = triangles(np.array([[10.0, 20.0]]), np.array([[1.0, 0.0]]), np.array([9.0]))[0]
    np.testing.assert_allclose(tri[0], [16.0, 20.0])  # tip: 2/3 of the length ahead
    np.testing.assert_allclose(sorted(tri[1:].tolist()), [[7.0, 17.3], [7.0, 22.7]])  # back: 1/3 behind, width 0.6
    np.testing.assert_allclose(tri.mean(axis=0), [10.0, 20.0], atol=1e-12)  # centroid on the agent
    up = triangles(np.array([[0.0, 0.0]]), np.array([[0.0, -1.0]]), np.array([3.0]))[0]
    np.testing.assert_allclose(up[0], [0.0, -2.0])


def test_blend_lines_mixes_by_alpha():
    img = blank(4, 8)
    white = np.array([[255.0, 255.0, 255.0]])
    blend_lines(img, np.array([[0.5, 1.5]]), np.array([[6.5, 1.5]]), white, np.array([0.5]), 100.0)
    assert painted(img) == {(x, 1) for x in range(7)}
    assert (img[1, :7] == 128).all()
    blend_lines(img, np.array([[0.5, 2.5]]), np.array([[6.5, 2.5]]), white, np.array([1.0]), 3.0)  # too long
    assert not img[2].any()


# --- camera ---------------------------------------------------------------------------------------------


def test_2d_view_fits_the_box_with_y_up():
    view = View(Camera(), 200, 100, np.array([0.0, 0.0]), np.array([100.0, 50.0]))
    p = view.project(np.array([[50.0, 25.0], [0.0, 0.0], [100.0, 50.0]]), np.array([[0.0, 1.0]] * 3))
    np.testing.assert_allclose(p.xy, [[100.0, 50.0], [8.0, 96.0], [192.0, 4.0]])  # 1.84 px per unit
    np.testing.assert_allclose(p.heading[0], [0.0, -1.0])  # +y in the world is up on screen


def test_3d_camera_projects_axes_the_right_way():
    view = View(Camera(azimuth=0.0, elevation=0.0, distance=3.0, fov=60.0), 200, 100, -np.ones(3), np.ones(3))
    pts = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5], [0.0, 0.0, 9.0]])
    vel = np.array([[1.0, 0.0, 0.0]] * 5)
    p = view.project(pts, vel)
    np.testing.assert_allclose(p.xy[0], [100.0, 50.0])  # the scene centre is the screen centre
    assert p.xy[1, 0] > 100.0 and p.xy[1, 1] == pytest.approx(50.0)  # +x to the right
    assert p.xy[2, 1] < 50.0  # +y up
    assert p.depth[3] < p.depth[0] and p.scale[3] > p.scale[0]  # +z is toward the camera: nearer, bigger
    assert not p.visible[4]  # behind the camera
    np.testing.assert_allclose(p.heading[0], [1.0, 0.0], atol=1e-12)
    side = View(Camera(azimuth=90.0, elevation=0.0), 200, 100, -np.ones(3), np.ones(3))
    assert side.project(np.array([[0.0, 0.0, 0.5]])).xy[0, 0] < 100.0  # from +x, +z is on the left


def test_parse_camera_and_size():
    cam = parse_camera("azimuth=60, elevation=10,follow=true,zoom=2")
    assert (cam.azimuth, cam.elevation, cam.follow, cam.zoom) == (60.0, 10.0, True, 2.0)
    assert parse_camera(None) == Camera()
    for bad, message in [
        ("tilt=3", "unknown key 'tilt'; allowed: azimuth, elevation, distance, fov, zoom, follow"),
        ("elevation=95", "elevation: 95 is out of range; allowed: -89 to 89"),
        ("fov=wide", "fov: not a number"),
        ("azimuth", "expected KEY=VALUE"),
        ("follow=maybe", "follow: must be true or false"),
    ]:
        with pytest.raises(CameraError, match=message):
            parse_camera(bad)
    assert parse_size("1280x720") == (1280, 720)
    for bad in ("1280", "1281x720", "axb", "8x8", "99999x10"):
        with pytest.raises(RenderError, match="--size"):
            parse_size(bad)


def test_speed_range_uses_the_model_limits_else_the_data():
    assert speed_range({"agents": {"max_speed": 180.0, "min_speed": 90.0}}, np.zeros((1, 2))) == (90.0, 180.0)
    lo, hi = speed_range({}, np.array([[1.0, 0.0]] * 10))
    assert lo == pytest.approx(0.9) and hi == pytest.approx(1.0)


# --- writers --------------------------------------------------------------------------------------------


def frames_of(n: int, w: int = 64, h: int = 48) -> list[np.ndarray]:
    out = []
    for i in range(n):
        img = np.zeros((h, w, 3), dtype=np.uint8)
        img[10:30, 4 + 4 * i : 20 + 4 * i] = (250, 200, 40)
        out.append(img)
    return out


def test_mp4_writer_frame_count_size_duration(tmp_path):
    path = tmp_path / "v.mp4"
    writer = Mp4Writer(path, fps=10, width=64, height=48)
    for frame in frames_of(7):
        writer.write(frame)
    writer.close()
    assert [p.name for p in tmp_path.iterdir()] == ["v.mp4"]
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        assert (stream.codec_context.width, stream.codec_context.height) == (64, 48)
        assert float(stream.duration * stream.time_base) == pytest.approx(0.7)
        decoded = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(decoded) == 7
    assert abs(int(decoded[3][20, 20, 0]) - 250) < 20 and decoded[3][40, 60].max() < 20


def test_gif_writer_streams_frames(tmp_path):
    path = tmp_path / "v.gif"
    writer = GifWriter(path, fps=25, width=64, height=48)
    for frame in frames_of(5):
        writer.write(frame)
    writer.close()
    with Image.open(path) as im:
        assert im.n_frames == 5 and im.size == (64, 48)
        assert im.info["duration"] == 40 and im.info["loop"] == 0
        im.seek(4)
        rgb = np.asarray(im.convert("RGB"))
    assert tuple(rgb[20, 30]) == (250, 200, 40) and tuple(rgb[40, 2]) == (0, 0, 0)


def test_mp4_writer_rejects_odd_sizes(tmp_path):
    with pytest.raises(ValueError, match="even"):
        Mp4Writer(tmp_path / "v.mp4", fps=10, width=63, height=48)


# --- whole runs -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store_3d(tmp_path_factory):
    path = tmp_path_factory.mktemp("render") / "run3d.zarr"
    params = apply_overrides(load_preset("starlings-3d"), ["agents.n=80", "predator.enabled=true"])
    rec = Recorder(path, every=2)
    Simulation(params, seed=1, recorder=rec).step(20)
    rec.close()
    return path


def test_render_3d_mp4_frames_are_drawn(store_3d, tmp_path):
    out = tmp_path / "v.mp4"
    report = render_run(store_3d, out, fps=12, size=(96, 64), color_by="speed", trail=3)
    assert report.frames == 11 and report.duration == pytest.approx(11 / 12)
    with av.open(str(out)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert len(frames) == 11 and frames[0].shape == (64, 96, 3)
    for frame in frames:
        differs = np.abs(frame.astype(int) - np.array(BACKGROUND)).sum(axis=2) > 60
        assert differs.sum() > 30  # agents drawn, not a blank frame


def test_render_time_window_colour_modes_and_camera(store_3d, tmp_path):
    out = tmp_path / "v.gif"
    r = render_run(
        store_3d, out, size=(64, 48), start=0.05, stop=0.2, color_by="group", camera=parse_camera("follow=1")
    )
    assert r.frames == 5  # frames every 2 steps of 1/60 s: steps 4, 6, 8, 10, 12 lie in [0.05, 0.2] s
    r = render_run(store_3d, out, size=(64, 48), color_by="turning", camera=Camera(azimuth=120, elevation=60))
    assert r.frames == 11
    with pytest.raises(RenderError, match="--color-by: unknown mode 'age'; allowed: none, speed, group, turning"):
        render_run(store_3d, out, size=(64, 48), color_by="age")
    with pytest.raises(RenderError, match=r"no frame between 5 s and 6 s; allowed: times within 0 to 0\.333333 s"):
        render_run(store_3d, out, size=(64, 48), start=5, stop=6)
    with pytest.raises(ValueError, match=r"allowed: a file ending in \.mp4, \.gif"):
        render_run(store_3d, tmp_path / "v.avi", size=(64, 48))
