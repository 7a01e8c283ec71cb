"""Quiet and contended engine speed side by side: 1 thread against the default thread count.

For each N (1 000, 10 000, 100 000; 1 000 000 with ``--million``) it runs
``flocksim bench --workload abm-flocking --dim 2 --neighbors metric --json`` four times, each in
its own process: quiet and with ``--background-load K`` (K busy processes started by the bench
itself, ``--load``, default 1: one core busy), each with ``--threads 1`` and with the default
threads. Cases run in alternation (quiet, contended, quiet, ...) so that a change of the machine's
other load hits both columns alike. Writes the rows as JSON (``--json-out``) and prints a markdown
table: median ms/step, and default / one-thread ratios.

Usage: python benchmarks/bench_contended.py [--load 1] [--steps 20] [--million] [--json-out contended.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time

SIZES = (1_000, 10_000, 100_000)


def bench_row(n: int, threads: int | None, load: int, steps: int, warmup: int) -> dict:
    """One ``flocksim bench`` case in a fresh process; its JSON row."""
    args = [sys.executable, "-m", "flocksim.cli", "bench", "--workload", "abm-flocking", "--dim", "2",
            "--neighbors", "metric", "--n", str(n), "--steps", str(steps), "--warmup", str(warmup),
            "--background-load", str(load), "--json"]  # fmt: skip
    if threads is not None:
        args += ["--threads", str(threads)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench_contended: flocksim bench failed for N = {n}:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(rows: list[dict], load: int) -> str:
    """Markdown: per N, quiet and contended medians for 1 thread and the default, and their ratios."""

    def ms(n: int, load_k: int, one: bool) -> float:
        (row,) = [r for r in rows if r["n"] == n and r["background_load"] == load_k and r["one_thread"] == one]
        return row["ms_per_step_median"]

    default_threads = next(r["threads"] for r in rows if not r["one_thread"])
    lines = [
        f"| N | quiet, 1 thread | quiet, {default_threads} threads | quiet ratio | {load} busy, 1 thread | "
        f"{load} busy, {default_threads} threads | contended ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in sorted({r["n"] for r in rows}):
        q1, qd, c1, cd = ms(n, 0, True), ms(n, 0, False), ms(n, load, True), ms(n, load, False)
        quiet = f"{q1:.2f} ms | {qd:.2f} ms | {qd / q1:.2f}"
        lines.append(f"| {n:,} | {quiet} | {c1:.2f} ms | {cd:.2f} ms | {cd / c1:.2f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=1, help="busy processes of the contended runs (1..64)")
    ap.add_argument("--steps", type=int, default=20, help="timed steps per case")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps per case")
    ap.add_argument("--million", action="store_true", help="also N = 1 000 000 (minutes, about 1 GB)")
    ap.add_argument("--sizes", type=int, nargs="*", help="other N instead of 1k, 10k, 100k")
    ap.add_argument("--json-out", help="write the rows and the machine here")
    args = ap.parse_args()
    if not 1 <= args.load <= 64:
        raise SystemExit(f"--load: must be an integer from 1 to 64, got {args.load}")
    sizes = list(args.sizes or SIZES) + ([1_000_000] if args.million else [])
    rows = []
    for n in sizes:
        for one_thread in (True, False):
            for load in (0, args.load):  # alternating quiet and contended
                row = bench_row(n, 1 if one_thread else None, load, args.steps, args.warmup)
                row["one_thread"] = one_thread
                rows.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
    markdown = table(rows, args.load)
    print(markdown)
    if args.json_out:
        info = {
            "benchmark": "contended",
            "command": " ".join(sys.argv),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
            "python": platform.python_version(),
            "rows": rows,
            "markdown": markdown,
        }
        with open(args.json_out, "w") as f:
            json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
