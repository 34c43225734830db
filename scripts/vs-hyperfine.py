#!/usr/bin/env python3
"""clibench's tight pairs against hyperfine's A-then-B runs, on the same machine and budget:
two commands that differ by a little (by default `python3 -c 'import json'` and one importing
a little more), and the same command against itself (A/A), the four runs taking turns.

Usage: CLIBENCH=target/release/clibench HYPERFINE=hyperfine REPS=3 BUDGET_S=60 \
       A="import json" B="import json, decimal" PYTHON=/usr/bin/python3.11 \
       scripts/vs-hyperfine.py OUT_DIR

hyperfine gets the budget as a run count: it first times a few runs of A to size it (`-N`,
no shell, 3 warm-up runs), then runs A's runs and B's runs, and its verdict is a two-sided
Welch test on its exported times at 5%, as hyperfine's own scripts/welch_ttest.py does.
clibench gets `ab --schedule SCHEDULE --budget BUDGET_S` with a spec whose ready is the
program's exit; its verdict is its own (cold, warm, cold_cpu or warm_cpu changed). Prints one line per run and
a summary: how often each tool called A/A different (a false alarm) and A/B different (found),
and the change each estimated.
"""

import json
import math
import os
import statistics
import subprocess
import sys
import time

CLIBENCH = os.environ.get("CLIBENCH", "clibench")
HYPERFINE = os.environ.get("HYPERFINE", "hyperfine")
REPS = int(os.environ.get("REPS", "3"))
BUDGET_S = int(os.environ.get("BUDGET_S", "60"))
SCHEDULE = os.environ.get("SCHEDULE", "duet")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3.11")
A = os.environ.get("A", "import json")
B = os.environ.get("B", "import json, decimal")

SPEC = f'''name = "python-start"
description = "python -c: a start that prints nothing and exits"
version = "1"

[measure]
command = ["{PYTHON}", "-c", "{A}"]
ready = "exit"
'''


def welch(xs, ys):
    """Two-sided p-value of Welch's t-test (normal tail: hundreds of runs a side)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    se = math.sqrt(statistics.variance(xs) / len(xs) + statistics.variance(ys) / len(ys))
    t = (my - mx) / se
    return math.erfc(abs(t) / math.sqrt(2)), my / mx - 1


def hyperfine(first, second, out, runs):
    command = [HYPERFINE, "-N", "--warmup", "3", "--runs", str(runs), "--style", "none",
               "--export-json", out, f"{PYTHON} -c '{first}'", f"{PYTHON} -c '{second}'"]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = json.load(open(out))["results"]
    p, change = welch(results[0]["times"], results[1]["times"])
    return ["time"] if p < 0.05 else [], {"time": change}


def clibench(second, out, spec):
    command = [CLIBENCH, "ab", spec, "--schedule", SCHEDULE, "--budget", f"{BUDGET_S}s",
               "--max-trials", "100", "--out", out]
    if second != A:
        command += ["--head", f'measure.command=["{PYTHON}", "-c", "{second}"]']
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    metrics = {m["metric"]: m for m in json.load(open(f"{out}/comparison.json"))["metrics"]}
    # A change of wall time or of CPU time (which a program that exits at ready has to
    # the microsecond, from its reaping).
    found = [m for m in ("cold", "warm", "cold_cpu", "warm_cpu")
             if m in metrics and metrics[m]["verdict"] in ("regressed", "improved")]
    change = {m: metrics[m]["ratio"] - 1 for m in ("cold", "cold_cpu") if m in metrics}
    return found, change


def sized_runs(out):
    """Runs of each command that fill half the budget, from 20 timed runs of A."""
    probe = f"{out}/probe.json"
    subprocess.run([HYPERFINE, "-N", "--runs", "20", "--style", "none", "--export-json", probe,
                    f"{PYTHON} -c '{A}'"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    mean = json.load(open(probe))["results"][0]["mean"]
    # hyperfine spends about a run's time again between runs on its own work.
    return max(10, int(BUDGET_S / 2 / (mean * 1.3)))


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    spec = f"{root}/python.toml"
    open(spec, "w").write(SPEC)
    runs = sized_runs(root)
    print(f"hyperfine: {runs} runs of each command in about {BUDGET_S} s", flush=True)
    found = {(tool, case): [] for tool in ("hyperfine", "clibench") for case in ("A/A", "A/B")}
    for rep in range(REPS):
        for case, second in (("A/A", A), ("A/B", B)):
            for tool in ("hyperfine", "clibench"):
                load = float(open("/proc/loadavg").read().split()[0])
                began = time.monotonic()
                out = f"{root}/{tool}-{case.replace('/', '')}-{rep}"
                if tool == "hyperfine":
                    verdict, change = hyperfine(A, second, out + ".json", runs)
                else:
                    verdict, change = clibench(second, out, spec)
                took = time.monotonic() - began
                found[(tool, case)].append((verdict, change))
                shown = ", ".join(f"{m} {c:+.1%}" for m, c in change.items())
                print(f"rep {rep} {case} {tool}: load {load:.2f}, {took:.0f} s, "
                      f"change {shown}, {'different: ' + ' '.join(verdict) if verdict else 'no verdict'}",
                      flush=True)
    print()
    print("| tool | case | runs | called different | median estimated change |")
    print("| --- | --- | ---: | ---: | --- |")
    for (tool, case), results in found.items():
        called = sum(bool(verdict) for verdict, _ in results)
        names = sorted({m for _, change in results for m in change})
        medians = ", ".join(
            f"{m} {statistics.median(c[m] for _, c in results if m in c):+.1%}" for m in names)
        print(f"| {tool} | {case} | {len(results)} | {called} | {medians} |")


main()
