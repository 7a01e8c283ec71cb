"""The Vicsek transition study (``python -m flocksim.validate.transition``): its statistics by hand, its
bounds, and a tiny run of both sides."""

from __future__ import annotations

import math

import pytest

from flocksim.validate import transition
from flocksim.validate.transition import TransitionProtocol


def rows_of(side: str, values: list[list[float]]) -> list[dict[str, object]]:
    return [
        {"side": side, "seed": seed, "index": k, "v_a": v}
        for seed, windows in enumerate(values)
        for k, v in enumerate(windows)
    ]


def test_summary_by_hand():
    # flocksim seeds average 0.2 and 0.3, the reference's 0.25 and 0.35 (two windows each)
    rows = rows_of("flocksim", [[0.1, 0.3], [0.3, 0.3]]) + rows_of("reference", [[0.25, 0.25], [0.35, 0.35]])
    lines = transition.summary(rows, 2)
    # all windows: means 0.25 and 0.30, each sd 0.0707 over 2 seeds, standard error 0.05: z = -0.05 / 0.0707
    assert lines[0].startswith("all windows: flocksim 0.2500 +- 0.0500")
    assert "reference 0.3000 +- 0.0500" in lines[0] and f"z = {-0.05 / math.hypot(0.05, 0.05):+.2f}" in lines[0]
    # first window only: flocksim 0.1 and 0.3 (mean 0.2, sd 0.1414, se 0.1)
    assert lines[1].startswith("first half: flocksim 0.2000 +- 0.1000")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"n": 10}, "--n"),
        ({"eta": 7.0}, "--eta"),
        ({"every": 3}, "--every"),
        ({"windows": 0}, "--windows"),
        ({"relax": 10**8}, "at most"),
    ],
)
def test_bad_protocol_names_the_field(fields, message):
    with pytest.raises(ValueError, match=message):
        TransitionProtocol(**fields).check()


def test_cli_refuses_bad_sizes_with_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        transition.main(["--seeds", "1", "--csv", str(tmp_path / "t.csv")])
    assert exc.value.code == 2 and "--seeds" in capsys.readouterr().err
    assert not (tmp_path / "t.csv").exists()


def test_a_tiny_study_runs_both_sides_and_writes_every_row(tmp_path):
    out = tmp_path / "t.csv"
    args = ["--seeds", "2", "--n", "100", "--relax", "10", "--window", "20", "--windows", "2", "--csv", str(out)]
    assert transition.main(args) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == ",".join(transition.COLUMNS) and len(lines) == 1 + 2 * 2 * 2  # sides x seeds x windows
    values = [float(line.split(",")[-1]) for line in lines[1:]]
    assert all(0.0 <= v <= 1.0 for v in values)
