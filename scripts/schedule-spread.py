#!/usr/bin/env python3
"""The pairs' log-ratio spread of cold and warm under `clibench ab --schedule tight`,
`duet` and `abba`, side by side: A/A runs of the demo (no overrides), the schedules
taking turns so that all see the same stretch of the machine's drift.

Usage: CLIBENCH=target/release/clibench REPS=4 TRIALS=10 [SCHEDULES="tight duet abba tight+pin"]
       scripts/schedule-spread.py OUT_DIR

Prints, per schedule and metric, the pooled standard deviation of log(head_k / base_k)
over the runs' pairs (each run's own mean removed), with the load average at each run's
start. Under tight, the first --memory-trials pairs (3) settle and read memory as abba's
do, and every later pair is one process running both sides' starts back to back; the
spread is given over all pairs and over pairs 3 and later alone, with the median gap
between base's and head's spawns of that start in those pairs (from each trial's
`starts` record). A schedule written `NAME+pin` runs the whole `ab` under `taskset -c
$PIN_CPU` (1 by default): both sides' programs, and clibench, on one CPU. SPEC=PATH runs
that spec instead of the built-in demo. PHASES (default prepare,install,measure) and
METRICS (default "cold warm") choose what runs and what is reported: a runtime, ui or
session metric's pairs from trial 1 on are the ones a duet runs at once, so its second
spread column is over trials 1 and later (e.g. PHASES=prepare,install,runtime,ui,session
METRICS="kernel_exec mixed ui_steps turn").
"""

import json
import math
import os
import subprocess
import sys

CLIBENCH = os.environ.get("CLIBENCH", "clibench")
REPS = int(os.environ.get("REPS", "4"))
TRIALS = int(os.environ.get("TRIALS", "10"))
SCHEDULES = os.environ.get("SCHEDULES", "tight duet abba").split()
MEMORY_TRIALS = 3
PIN_CPU = os.environ.get("PIN_CPU", "1")
# A spec other than the demo (e.g. examples/agents/pi.toml), A/A as well.
SPEC = [os.environ["SPEC"]] if os.environ.get("SPEC") else []
PHASES = os.environ.get("PHASES", "prepare,install,measure")
METRICS = os.environ.get("METRICS", "cold warm").split()
START_METRICS = ("cold", "warm", "cold_cpu", "warm_cpu")


def first_paired(metric):
    """The first trial a tight or duet schedule pairs for this metric."""
    return MEMORY_TRIALS if metric in START_METRICS else 1


def values(path, metric):
    side = json.load(open(path))["side"]
    return {s["trial"]: s["value"] for s in side["metrics"].get(metric, []) if s.get("value")}


def spawns(path, metric):
    """Trial -> when that trial's `metric` start (cold or warm) was spawned, in us."""
    side = json.load(open(path))["side"]
    found = {}
    for record in side.get("trials", []):
        if record["phase"] != "measure":
            continue
        for start in record.get("starts", []):
            if start["session"] == metric:
                found[record["trial"]] = start["spawned_unix_us"]
    return found


def run(schedule, out):
    load = open("/proc/loadavg").read().split()[0]
    # "tight+pin": the whole run confined to one CPU (taskset), both sides with it.
    name, _, pin = schedule.partition("+")
    prefix = ["taskset", "-c", PIN_CPU] if pin == "pin" else []
    subprocess.run(
        prefix + [CLIBENCH, "ab"] + SPEC + ["--schedule", name, "--trials", str(TRIALS),
         "--phases", PHASES, "--out", out],
        check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    logs, gaps = {}, {}
    for metric in METRICS:
        base = values(f"{out}/base/result.json", metric)
        head = values(f"{out}/head/result.json", metric)
        logs[metric] = {k: math.log(head[k] / base[k]) for k in base if k in head}
        base_at = spawns(f"{out}/base/result.json", metric)
        head_at = spawns(f"{out}/head/result.json", metric)
        gaps[metric] = [abs(head_at[k] - base_at[k]) / 1e6 for k in base_at
                        if k in head_at and k >= MEMORY_TRIALS]
    return float(load), logs, gaps


def pooled(runs, first):
    """Pooled within-run SD of the log ratios of pairs `first` and later."""
    squares, df = 0.0, 0
    for logs in runs:
        xs = [x for k, x in logs.items() if k >= first]
        if len(xs) < 2:
            continue
        mean = sum(xs) / len(xs)
        squares += sum((x - mean) ** 2 for x in xs)
        df += len(xs) - 1
    return math.sqrt(squares / df) if df else float("nan")


def main():
    root = sys.argv[1]
    found = {schedule: [] for schedule in SCHEDULES}
    loads = {schedule: [] for schedule in SCHEDULES}
    gaps = {schedule: {metric: [] for metric in METRICS} for schedule in SCHEDULES}
    for rep in range(REPS):
        for schedule in SCHEDULES:
            load, logs, run_gaps = run(schedule, f"{root}/{schedule}-{rep}")
            found[schedule].append(logs)
            loads[schedule].append(load)
            for metric, values_ in run_gaps.items():
                gaps[schedule][metric].extend(values_)
            print(f"rep {rep} {schedule}: load {load}", file=sys.stderr)
    print("| schedule | metric | pairs | spread, all pairs | spread, paired trials "
          "(starts: 3 and later; others: 1 and later) "
          "| median gap between the sides' spawns, paired trials | load (1 min) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for schedule in SCHEDULES:
        for metric in METRICS:
            runs = [logs[metric] for logs in found[schedule]]
            pairs = sum(len(r) for r in runs)
            gap = sorted(gaps[schedule][metric])
            median = gap[len(gap) // 2] if gap else float("nan")
            print(f"| {schedule} | {metric} | {pairs} | {pooled(runs, 0):.3f} | "
                  f"{pooled(runs, first_paired(metric)):.3f} | {median:.3f} s | "
                  f"{min(loads[schedule]):.1f} to {max(loads[schedule]):.1f} |")


main()
