"""Cold compile cost of flocksim's numba kernels, preset by preset.

For each preset, with a fresh numba cache (NUMBA_CACHE_DIR = a new temporary folder, deleted
afterwards), in subprocesses:

- cold: ``flocksim run PRESET --steps S --quiet`` with the empty cache: wall time of the whole
  process as the parent sees it (interpreter start, imports, compiling every kernel the run needs,
  the steps, the summary);
- warm: the same command again, ``--warm-runs`` times, with the cache the cold run filled (the
  kernels load from disk): wall time, the best of them;
- ``cold_cpu_s`` and ``warm_cpu_s``: the same runs' CPU time (user + system, all threads of the
  process, from ``getrusage(RUSAGE_CHILDREN)``), the figure to read on a machine that other work
  shares: waiting for a core is not in it;
- ``ratio`` = cold / warm, and ``compile_s`` = cold - warm: what the first run after an install or
  an update adds, the figure ``--write-estimates`` ships as the compile notice's estimate
  (src/flocksim/compile_estimates.json, read by flocksim.compile_notice);
- per kernel, from the cold run: numba's ``numba:compile`` events (one per function and signature
  compiled, none for a function loaded from the cache), timed in the process itself:
  ``seconds`` (inclusive: the functions compiled on the way count too), ``self_s`` (exclusive) and
  ``signatures``, the ``--top`` kernels by ``self_s``; ``compile_events_s`` sums the outermost
  events (time spent compiling, all functions);
- per numba pass, from the cold run: ``passes_s``, the ``--top`` passes by seconds (init + run +
  finalize from the ``pipeline_times`` numba records per compiled function), summed over the
  outermost compiled functions, so a pass's time includes what it compiled on the way (type
  inference compiles the functions a kernel calls).

Both runs go through the same small driver (``python -c``), which registers the event listener
and then runs ``flocksim run`` in-process exactly as ``python -m flocksim.cli run`` would; the
listener costs nothing measurable. ``--threads N`` passes ``--threads N`` and NUMBA_NUM_THREADS=N.
The machine (CPU count and model, load average at the start), the date, and the numba and
llvmlite versions are recorded. Compile times are CPU-bound and single-threaded: on a busy
machine they stretch, so quote the load average with any figure.

``--src TREE`` measures the sources of another checkout (TREE/src first on PYTHONPATH), e.g. a
git worktree of the code before a change: run once per tree and compare. Default: this
checkout's src.

Usage:
    python benchmarks/bench_compile.py                                  # every preset (long)
    python benchmarks/bench_compile.py --presets boids-2d,starlings-3d --threads 2 -o compile.json
    python benchmarks/bench_compile.py --write-estimates                # + src/flocksim/compile_estimates.json
    python benchmarks/bench_compile.py --src ../flocksim-before --presets boids-2d

Prints one JSON object (progress on stderr); exit status 1 when a run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ESTIMATES = Path("src") / "flocksim" / "compile_estimates.json"

# Runs `flocksim run ...` (argv[2:]) in-process with a numba:compile listener; writes what it saw,
# as JSON, to argv[1].
DRIVER = r"""
import json, sys, threading, time
from numba.core import event

report_path, args = sys.argv[1], sys.argv[2:]
kernels = {}
outermost = [0.0]
local = threading.local()


def name_of(data):
    dispatcher = data.get("dispatcher") if isinstance(data, dict) else None
    func = getattr(dispatcher, "py_func", None)
    if func is None:
        return "?"
    return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}"


roots = {}  # the outermost compiled dispatchers, by id


class Listener(event.Listener):
    def on_start(self, ev):
        stack = local.__dict__.setdefault("stack", [])
        dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        if not stack and dispatcher is not None:
            roots[id(dispatcher)] = dispatcher
        stack.append([name_of(ev.data), time.perf_counter(), 0.0])

    def on_end(self, ev):
        stack = local.__dict__.setdefault("stack", [])
        name, began, children = stack.pop()
        seconds = time.perf_counter() - began
        if stack:
            stack[-1][2] += seconds
        else:
            outermost[0] += seconds
        entry = kernels.setdefault(name, {"seconds": 0.0, "self_s": 0.0, "signatures": 0})
        entry["seconds"] += seconds
        entry["self_s"] += seconds - children
        entry["signatures"] += 1


event.register("numba:compile", Listener())
code = 0
try:
    from flocksim.cli import main

    sys.argv = ["flocksim", *args]
    main()
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
# seconds per numba pass (init + run + finalize), summed over the outermost compiled functions:
# a pass's time includes the functions it compiled on the way (type inference compiles callees)
passes = {}
for dispatcher in roots.values():
    for cres in list(getattr(dispatcher, "overloads", {}).values()):
        for timings in ((getattr(cres, "metadata", None) or {}).get("pipeline_times") or {}).values():
            for key, t in timings.items():
                name = key.split("_", 1)[1] if key.split("_", 1)[0].isdigit() else key
                passes[name] = passes.get(name, 0.0) + t.init + t.run + t.finalize
info = {"kernels": kernels, "compile_events_s": outermost[0], "passes": passes}
try:
    import llvmlite
    import numba

    import flocksim
    from flocksim.models import make_model
    from flocksim.scenarios import load_preset, preset_names

    info.update(numba=numba.__version__, llvmlite=llvmlite.__version__, flocksim_file=flocksim.__file__)
    target = args[1]
    if target in preset_names():
        params = load_preset(target)
        info.update(model=params.model, dim=params.world.dim, bounds=params.world.bounds.kind,
                    neighbors=make_model(params).neighbor_query().mode)
except Exception as exc:  # the run's figures stand without these
    info["info_error"] = repr(exc)
with open(report_path, "w") as handle:
    json.dump(info, handle)
sys.exit(code)
"""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = None
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_at_start": load,
    }


def source_info(tree: Path) -> dict[str, Any]:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=False)
        return done.stdout.strip() if done.returncode == 0 else ""

    return {
        "tree": str(tree),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain")),
    }


def run_once(src: Path, cache: Path, preset: str, steps: int, threads: int | None, report: Path) -> dict[str, Any]:
    """One driver run of ``flocksim run PRESET`` with ``cache`` as numba's cache; wall time and what it saw."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])
    args = ["run", preset, "--steps", str(steps), "--quiet"]
    if threads is not None:
        env["NUMBA_NUM_THREADS"] = str(threads)
        args += ["--threads", str(threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", DRIVER, str(report), *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    row: dict[str, Any] = {"wall_s": wall, "cpu_s": cpu, "returncode": done.returncode}
    row["summary"] = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    row["notices"] = [line for line in done.stderr.splitlines() if line.startswith("flocksim: compiling")]
    if done.returncode != 0:
        row["stderr_tail"] = done.stderr[-2000:]
    with contextlib.suppress(OSError, ValueError):
        row.update(json.loads(report.read_text()))
    return row


def measure(src: Path, preset: str, steps: int, threads: int | None, warm_runs: int, top: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="flocksim-bench-compile-") as folder:
        cache, report = Path(folder) / "numba-cache", Path(folder) / "report.json"
        cache.mkdir()
        cold = run_once(src, cache, preset, steps, threads, report)
        if cold["returncode"] != 0:
            return {"preset": preset, "error": "cold run failed", "cold": cold}
        warms = [run_once(src, cache, preset, steps, threads, report) for _ in range(warm_runs)]
    failed = [w for w in warms if w["returncode"] != 0]
    if failed:
        return {"preset": preset, "error": "warm run failed", "warm": failed[0]}
    warm_s = min(w["wall_s"] for w in warms)
    kernels = cold.get("kernels", {})
    ranked = sorted(kernels.items(), key=lambda item: -item[1]["self_s"])
    flocksim_s = sum(k["self_s"] for name, k in kernels.items() if name.startswith("flocksim."))
    return {
        "preset": preset,
        **{key: cold[key] for key in ("model", "dim", "bounds", "neighbors") if key in cold},
        "cold_s": round(cold["wall_s"], 2),
        "warm_s": round(warm_s, 2),
        "cold_cpu_s": round(cold["cpu_s"], 2),
        "warm_cpu_s": round(min(w["cpu_s"] for w in warms), 2),
        "warm_runs_s": [round(w["wall_s"], 2) for w in warms],
        "warm_s_median": round(statistics.median(w["wall_s"] for w in warms), 2),
        "ratio": round(cold["wall_s"] / warm_s, 2),
        "compile_s": round(cold["wall_s"] - warm_s, 2),
        "compile_events_s": round(cold.get("compile_events_s", 0.0), 2),
        "compile_self_s_flocksim": round(flocksim_s, 2),
        "functions_compiled": len(kernels),
        "signatures_compiled": sum(k["signatures"] for k in kernels.values()),
        "top_kernels": [
            {
                "kernel": name,
                "self_s": round(k["self_s"], 2),
                "seconds": round(k["seconds"], 2),
                "signatures": k["signatures"],
            }
            for name, k in ranked[:top]
        ],
        "passes_s": {
            name: round(seconds, 2)
            for name, seconds in sorted(cold.get("passes", {}).items(), key=lambda item: -item[1])[:top]
        },
        "cold_summary": cold["summary"],
        "warm_summary": warms[0]["summary"],
        "cold_notices": cold["notices"],
        "warm_notices": warms[0]["notices"],
        "numba": cold.get("numba"),
        "llvmlite": cold.get("llvmlite"),
        "flocksim_file": cold.get("flocksim_file"),
    }


def estimates_from(result: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The compile notice's table (compile_estimates.json) from a result of this script: each
    measured preset's ``compile_s`` (cold minus warm wall time), its model and neighbour mode;
    presets measured before and not now are kept; per model, the longest of its presets."""
    presets = dict((previous or {}).get("presets") or {})
    cpus = f"{result['machine']['cpu_count']} CPUs, {result['machine']['cpu_model']}"
    for row in result["presets"]:
        if "error" in row or row["compile_s"] <= 0:
            continue
        presets[row["preset"]] = {
            "compile_s": round(row["compile_s"], 1),
            "model": row["model"],
            "neighbors": row["neighbors"],
            "dim": row["dim"],
            "bounds": row["bounds"],
            "cold_s": row["cold_s"],
            "warm_s": row["warm_s"],
            "date": result["date"],
            "machine": cpus,
            "threads": result["threads"],
            "numba": row["numba"],
        }
    presets = dict(sorted(presets.items()))
    models: dict[str, float] = {}
    for entry in presets.values():
        models[entry["model"]] = max(models.get(entry["model"], 0.0), entry["compile_s"])
    return {
        "about": "Seconds the first `flocksim run PRESET` adds when it compiles the kernels (cold minus warm wall "
        "time, fresh numba cache), measured by benchmarks/bench_compile.py --write-estimates; read by "
        "flocksim.compile_notice. Re-make it after changing the kernels or how they compile.",
        "machine": result["machine"],
        "date": result["date"],
        "steps": result["steps"],
        "presets": presets,
        "models": dict(sorted(models.items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="See the module docstring.")
    parser.add_argument("--presets", help="comma-separated preset names (default: every preset)")
    parser.add_argument("--steps", type=int, default=200, help="steps of each run (default 200)")
    parser.add_argument("--threads", type=int, default=None, help="numba threads (default: numba's, all cores)")
    parser.add_argument("--warm-runs", type=int, default=3, help="warm runs per preset; the best counts (default 3)")
    parser.add_argument("--top", type=int, default=10, help="kernels listed per preset (default 10)")
    parser.add_argument("--src", type=Path, default=ROOT, help="checkout whose src/ is measured (default: this one)")
    parser.add_argument("-o", "--output", type=Path, help="also write the JSON to this file")
    parser.add_argument(
        "--write-estimates",
        nargs="?",
        const="",
        metavar="PATH",
        help=f"write the compile notice's estimates (default PATH: the measured checkout's {ESTIMATES})",
    )
    args = parser.parse_args(argv)
    tree = args.src.resolve()
    src = tree / "src"
    if not (src / "flocksim" / "__init__.py").is_file():
        parser.error(f"--src: {tree} has no src/flocksim")
    if args.presets:
        names = [name.strip() for name in args.presets.split(",") if name.strip()]
    else:
        listed = subprocess.run(
            [sys.executable, "-c", "from flocksim.scenarios import preset_names; print(*preset_names())"],
            env={**os.environ, "PYTHONPATH": str(src)},
            capture_output=True,
            text=True,
            check=True,
        )
        names = listed.stdout.split()
    result: dict[str, Any] = {
        "benchmark": "bench_compile",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "threads": args.threads if args.threads is not None else f"numba default ({os.cpu_count()} cores)",
        "steps": args.steps,
        "warm_runs": args.warm_runs,
        "source": source_info(tree),
        "command": f"flocksim run PRESET --steps {args.steps} --quiet"
        + (f" --threads {args.threads}" if args.threads is not None else ""),
        "presets": [],
    }
    for name in names:
        print(f"bench_compile: {name} (cold, then {args.warm_runs} warm) ...", file=sys.stderr, flush=True)
        row = measure(src, name, args.steps, args.threads, args.warm_runs, args.top)
        if "error" not in row:
            print(
                f"bench_compile: {name}: cold {row['cold_s']} s (CPU {row['cold_cpu_s']} s), warm {row['warm_s']} s, "
                f"ratio {row['ratio']}, "
                f"compile {row['compile_s']} s",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(f"bench_compile: {name}: {row['error']}", file=sys.stderr, flush=True)
        result["presets"].append(row)
    text = json.dumps(result, indent=1)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    if args.write_estimates is not None:
        path = Path(args.write_estimates) if args.write_estimates else tree / ESTIMATES
        try:
            previous = json.loads(path.read_text())
        except (OSError, ValueError):
            previous = None
        path.write_text(json.dumps(estimates_from(result, previous), indent=1) + "\n")
        print(f"bench_compile: wrote {path}", file=sys.stderr)
    return 1 if any("error" in row for row in result["presets"]) else 0


if __name__ == "__main__":
    raise SystemExit(main())
