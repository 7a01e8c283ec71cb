"""The kernels' CPU target and the prebuilt kernels an install carries (flocksim._kernel_target,
flocksim.viewer.prebuilt): the choice, the manifest's checks, the verified copy, and one
end-to-end case, a kernel compiled for the portable target in one install loading without a
compile in another install with an empty cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flocksim import _kernel_target as kt
from flocksim import _numba_cache
from flocksim.viewer import prebuilt
from flocksim.viewer.compile_ahead import CompileAheadError, Outcome
from test_numba_cache import PROBE, _install_copy  # the package copied elsewhere; a probe counting compiles


def _fake_prebuilt(package_dir: Path, digest: str, files: dict[str, bytes], **changes) -> Path:
    """A prebuilt folder under ``package_dir`` holding ``files``, its manifest matching this
    runtime unless ``changes`` say otherwise."""
    compiled = package_dir.parent / "compiled"
    for relative, data in files.items():
        (compiled / relative).parent.mkdir(parents=True, exist_ok=True)
        (compiled / relative).write_bytes(data)
    dest = package_dir / kt.PREBUILT_FOLDER
    manifest = prebuilt.write_prebuilt(compiled, dest, digest, ["vicsek"])
    if changes:
        (dest / kt.MANIFEST).write_text(json.dumps({**manifest, **changes}))
    return dest


def test_the_choice_follows_the_variable_and_the_users_numba_cpu_name(tmp_path):
    assert kt.choose("d", tmp_path, {}).name == "host"  # auto, no prebuilt kernels
    assert kt.choose("d", tmp_path, {kt.ENV: "host"}).name == "host"
    user = kt.choose("d", tmp_path, {kt.ENV: "portable", "NUMBA_CPU_NAME": "skylake"})
    assert user.name == "user" and "skylake" in user.why and user.cache_suffix == ""
    with pytest.raises(
        kt.KernelTargetError, match=r"FLOCKSIM_KERNEL_TARGET='fastest': expected one of auto, host, portable"
    ):
        kt.choose("d", tmp_path, {kt.ENV: "fastest"})


def test_portable_needs_the_baselines_features(tmp_path, monkeypatch):
    monkeypatch.setattr(kt, "host_has_baseline", lambda: True)
    portable = kt.choose("d", tmp_path, {kt.ENV: "portable"})
    assert portable.name == "portable" and portable.cache_suffix == "-x86-64-v3" and portable.prebuilt is None
    monkeypatch.setattr(kt, "host_has_baseline", lambda: False)
    fallback = kt.choose("d", tmp_path, {kt.ENV: "portable"})
    assert fallback.name == "host" and "lacks x86-64-v3" in fallback.why


def test_auto_takes_the_portable_target_only_for_a_matching_prebuilt_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(kt, "host_has_baseline", lambda: True)
    package = tmp_path / "flocksim"
    package.mkdir()
    dest = _fake_prebuilt(package, "abc", {"flocksim/kernels/f.nbi": b"index"})
    chosen = kt.choose("abc", package, {})
    assert chosen.name == "portable" and chosen.prebuilt == dest
    assert kt.choose("other-sources", package, {}).name == "host"
    for key, value in (("numba", "0.1.0"), ("python", "2.7"), ("target", "x86-64-v4"), ("machine", "arm64")):
        _fake_prebuilt(package, "abc", {"flocksim/kernels/f.nbi": b"index"}, **{key: value})
        assert kt.choose("abc", package, {}).name == "host", key


def test_the_copy_checks_every_file_against_the_manifest(tmp_path):
    package = tmp_path / "flocksim"
    package.mkdir()
    dest = _fake_prebuilt(package, "abc", {"flocksim/kernels/f.nbi": b"index", "flocksim/kernels/f.1.nbc": b"code"})
    assert kt.copy_prebuilt(dest, tmp_path / "good") is None
    assert (tmp_path / "good/flocksim/kernels/f.1.nbc").read_bytes() == b"code"
    (dest / "cache/flocksim/kernels/f.1.nbc").write_bytes(b"cade")  # same size, one byte changed
    assert "f.1.nbc: its size or SHA-256 differs" in kt.copy_prebuilt(dest, tmp_path / "bad")
    manifest = json.loads((dest / kt.MANIFEST).read_text())
    manifest["files"] = {"../../escape.nbi": {"bytes": 1, "sha256": "0"}}
    (dest / kt.MANIFEST).write_text(json.dumps(manifest))
    assert "not a file of the prebuilt cache" in kt.copy_prebuilt(dest, tmp_path / "escape")


def test_seeding_leaves_the_users_folder_and_drops_a_damaged_copy(tmp_path, capsys):
    package = tmp_path / "flocksim"
    package.mkdir()
    dest = _fake_prebuilt(package, "abc", {"flocksim/kernels/f.nbi": b"index"})
    mine = tmp_path / "mine"
    (mine / "own").mkdir(parents=True)
    _numba_cache._seed(mine, dest)
    assert [p.name for p in mine.iterdir()] == ["own"]
    _numba_cache._seed(tmp_path / "fresh", dest)
    assert (tmp_path / "fresh/flocksim/kernels/f.nbi").read_bytes() == b"index"
    (dest / "cache/flocksim/kernels/f.nbi").write_bytes(b"inde")
    _numba_cache._seed(tmp_path / "damaged", dest)
    assert not (tmp_path / "damaged").exists()
    assert not list(tmp_path.glob("damaged.seeding-*"))
    assert "are not used: flocksim/kernels/f.nbi: its size or SHA-256 differs" in capsys.readouterr().err


def test_make_prebuilt_writes_only_a_complete_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(prebuilt, "host_has_baseline", lambda: True)
    package = tmp_path / "flocksim"
    package.mkdir()
    (package / "k.py").write_text("import numba\n")
    digest = _numba_cache.source_digest(package)
    seen_env = {}

    def compile_one(name, overrides, env):
        seen_env.update(env)
        folder = Path(env["NUMBA_CACHE_DIR"]) / f"flocksim-{digest}-x86-64-v3" / "flocksim"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.nbi").write_bytes(name.encode())
        return Outcome(name, True, 1.0)

    lines: list[str] = []
    prebuilt.make_prebuilt(["vicsek", "couzin"], 1, (), lines.append, package, compile_one)
    assert seen_env[kt.ENV] == "portable" and "NUMBA_CPU_NAME" not in seen_env
    manifest = json.loads((package / kt.PREBUILT_FOLDER / kt.MANIFEST).read_text())
    assert manifest["presets"] == ["couzin", "vicsek"] and set(manifest["files"]) == {
        "flocksim/couzin.nbi",
        "flocksim/vicsek.nbi",
    }
    assert manifest["sources"] == digest and manifest["target"] == "x86-64-v3"
    assert "prebuilt kernels for 2 presets" in lines[-1]

    def fails(name, overrides, env):
        return Outcome(name, False, 1.0, "boom")

    prebuilt.make_prebuilt(["boids-2d"], 1, (), lines.append, package, fails)
    again = json.loads((package / kt.PREBUILT_FOLDER / kt.MANIFEST).read_text())
    assert again["presets"] == ["couzin", "vicsek"]  # the old cache kept
    with pytest.raises(CompileAheadError, match="no --set"):
        prebuilt.make_prebuilt(["vicsek"], 1, ["agents.n=5"], lines.append, package, compile_one)


def test_make_prebuilt_refuses_a_symlink_and_a_cpu_without_the_baseline(tmp_path, monkeypatch):
    package = tmp_path / "flocksim"
    package.mkdir()
    monkeypatch.setattr(prebuilt, "host_has_baseline", lambda: False)
    with pytest.raises(CompileAheadError, match="lacks x86-64-v3's features"):
        prebuilt.make_prebuilt(["vicsek"], 1, (), print, package)
    monkeypatch.setattr(prebuilt, "host_has_baseline", lambda: True)
    (tmp_path / "elsewhere").mkdir()
    (package / kt.PREBUILT_FOLDER).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CompileAheadError, match="is not a plain folder"):
        prebuilt.make_prebuilt(["vicsek"], 1, (), print, package)


@pytest.mark.skipif(not kt.host_has_baseline(), reason="this CPU lacks x86-64-v3's features")
def test_prebuilt_kernels_load_without_a_compile_in_another_install(tmp_path):
    """A kernel compiled for the portable target in one install, packed as that install's prebuilt
    kernels, loads in a second install of the same sources on an empty cache without a compile;
    a damaged file, or FLOCKSIM_KERNEL_TARGET=host, compiles instead."""
    installs = [_install_copy(tmp_path / "a"), _install_copy(tmp_path / "b")]
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    base_env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_CPU_NAME", kt.ENV)}

    def run(root: Path, **env: str) -> tuple[str, str, int, str]:
        done = subprocess.run(
            [sys.executable, str(script), str(root)], env={**base_env, **env}, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        target, cpu, count = done.stdout.split()[-3:]
        return target, cpu, int(count), done.stderr

    portable = ("portable", "x86-64-v3")
    assert run(installs[0], **{kt.ENV: "portable", "NUMBA_CACHE_DIR": str(tmp_path / "build")})[:3] == (*portable, 1)
    digest = _numba_cache.source_digest(installs[0] / "flocksim")
    compiled = tmp_path / "build" / f"flocksim-{digest}-x86-64-v3"
    dest = installs[1] / "flocksim" / kt.PREBUILT_FOLDER
    prebuilt.write_prebuilt(compiled, dest, digest, ["probe"])
    assert run(installs[1], XDG_CACHE_HOME=str(tmp_path / "fresh"))[:3] == (*portable, 0)
    host = run(installs[1], XDG_CACHE_HOME=str(tmp_path / "fresh-host"), **{kt.ENV: "host"})
    assert host[0] == "host" and host[1] != "x86-64-v3" and host[2] == 1
    index = next((dest / "cache").rglob("*.nbi"))
    index.write_bytes(index.read_bytes()[:-1] + bytes([index.read_bytes()[-1] ^ 1]))
    target, cpu, count, err = run(installs[1], XDG_CACHE_HOME=str(tmp_path / "fresh-damaged"))
    assert (target, cpu, count) == (*portable, 1) and "are not used" in err


def test_the_command_refuses_prebuilt_kernels_with_overrides_in_one_line():
    from typer.testing import CliRunner

    from flocksim.cli import app

    result = CliRunner().invoke(app, ["compile", "--prebuilt", "vicsek", "--set", "agents.n=50"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        "error: --prebuilt: no --set: the prebuilt kernels are the presets' own"
    ]


def test_an_unknown_target_is_one_line_and_the_default(tmp_path):
    """Read at import: a wrong value costs one line on stderr, not the whole package."""
    script = "from flocksim import _numba_cache as c; print(c.target.name)"  # the package configures on import
    env = {**os.environ, kt.ENV: "fastest", "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("NUMBA_CPU_NAME", None)
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split()[0] in ("host", "portable")  # what auto gives for this install
    assert done.stderr.splitlines() == [
        "flocksim: FLOCKSIM_KERNEL_TARGET='fastest': expected one of auto, host, portable; using auto"
    ]
