"""``flocksim bench --background-load K``: the busy processes exist while the bench times and are
gone after it, also when it raises; K is bounded."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import flocksim.bench
from flocksim.background_load import MAX_BACKGROUND_LOAD, BackgroundLoad, check_background_load
from flocksim.cli import app


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def busy_children() -> list[int]:
    """Pids of this process's running children named like the busy processes."""
    import multiprocessing

    return [p.pid for p in multiprocessing.active_children() if p.name == "flocksim-background-load"]


def test_processes_run_inside_the_block_and_are_gone_after():
    with BackgroundLoad(2) as load:
        pids = load.pids
        assert len(pids) == 2 and all(running(p) for p in pids)
        assert sorted(busy_children()) == sorted(pids)
    assert not any(running(p) for p in pids)
    assert busy_children() == []


def test_processes_are_stopped_when_the_block_raises():
    with pytest.raises(RuntimeError, match="boom"), BackgroundLoad(3) as load:
        pids = load.pids
        assert all(running(p) for p in pids)
        raise RuntimeError("boom")
    assert not any(running(p) for p in pids)


def test_zero_starts_nothing_and_the_bound_is_checked():
    with BackgroundLoad(0) as load:
        assert load.pids == []
    assert check_background_load(MAX_BACKGROUND_LOAD) == MAX_BACKGROUND_LOAD
    for bad in (-1, MAX_BACKGROUND_LOAD + 1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="--background-load: must be an integer from 0 to 64"):
            BackgroundLoad(bad)


def test_bench_flag_runs_the_load_while_timing_and_stops_it(monkeypatch):
    # the case's kernels compiled first, with no load beside them (the load made this test's
    # compile three times slower: 163 s of the suite on 2 cores)
    assert CliRunner().invoke(app, ["bench", "--n", "500", "--steps", "1", "--json"]).exit_code == 0
    seen = []
    real = flocksim.bench.run_case

    def spy(*args, **kwargs):
        seen.append([p for p in busy_children() if running(p)])
        return real(*args, **kwargs)

    monkeypatch.setattr(flocksim.bench, "run_case", spy)
    result = CliRunner().invoke(app, ["bench", "--n", "500", "--steps", "1", "--json", "--background-load", "2"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout.strip().splitlines()[-1])
    assert row["background_load"] == 2
    assert len(seen) == 1 and len(seen[0]) == 2  # both busy while the case ran
    assert not any(running(p) for p in seen[0]) and busy_children() == []


def test_bench_flag_stops_the_load_when_the_bench_raises(monkeypatch):
    seen = []

    def broken(*args, **kwargs):
        seen.extend(busy_children())
        raise RuntimeError("the engine broke")

    monkeypatch.setattr(flocksim.bench, "run_case", broken)
    result = CliRunner().invoke(app, ["bench", "--n", "500", "--steps", "1", "--background-load", "1"])
    assert isinstance(result.exception, RuntimeError)
    assert len(seen) == 1 and not running(seen[0]) and busy_children() == []


def test_bench_rejects_a_bad_background_load_with_status_2():
    for k in ("65", "-1"):
        result = CliRunner().invoke(app, ["bench", "--n", "500", "--background-load", k])
        assert result.exit_code == 2
        assert "--background-load" in result.output
