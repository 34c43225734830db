#!/usr/bin/env python3
"""How often `clibench ab` finds a planted change on the demo within a time budget, and how
often it cries wolf: A/A, and head's start made slower by a sleep
(DEMO_AGENT_STARTUP_DELAY_MS) or by CPU work (DEMO_AGENT_STARTUP_WORK_MS), the cases taking
turns so that all of them see the same stretch of the machine.

Usage: CLIBENCH=target/release/clibench REPS=4 BUDGET=2m SCHEDULES="tight duet" \
       CASES="aa delay:7 work:7 delay:4" scripts/ab-power.py OUT_DIR

A case `delay:N` or `work:N` plants N ms on head's start (the demo's cold start is about
70 ms on a quiet 2-core VM: 7 ms is +10%, 4 ms about +5%). Prints one line per run (the
verdicts of cold, warm, cold_cpu, warm_cpu, cold_unqueued and warm_unqueued, the pairs run, the seconds taken, the load
average at the start) and a summary per schedule and case: runs with any verdict (A/A:
false alarms), runs where cold or warm regressed (A/B: found), and the median estimate of
cold's and warm's change. The schedules take turns within each case.
"""

import json
import os
import statistics
import subprocess
import sys
import time

CLIBENCH = os.environ.get("CLIBENCH", "clibench")
REPS = int(os.environ.get("REPS", "4"))
BUDGET = os.environ.get("BUDGET", "2m")
SCHEDULES = os.environ.get("SCHEDULES", os.environ.get("SCHEDULE", "tight")).split()
CASES = os.environ.get("CASES", "aa delay:7 work:7 delay:4").split()
WATCHED = ("cold", "warm", "cold_cpu", "warm_cpu", "cold_unqueued", "warm_unqueued")
KNOBS = {"delay": "DEMO_AGENT_STARTUP_DELAY_MS", "work": "DEMO_AGENT_STARTUP_WORK_MS"}


def run(schedule, case, out):
    load = float(open("/proc/loadavg").read().split()[0])
    command = [CLIBENCH, "ab", "--schedule", schedule, "--budget", BUDGET,
               "--phases", "prepare,install,measure", "--out", out]
    if case != "aa":
        kind, ms = case.split(":")
        command += ["--head", f"measure.env.{KNOBS[kind]}={ms}"]
    began = time.monotonic()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.monotonic() - began
    comparison = json.load(open(f"{out}/comparison.json"))
    verdicts = {m["metric"]: m["verdict"] for m in comparison["metrics"]
                if m["metric"] in WATCHED}
    changes = {m["metric"]: m["ratio"] - 1 for m in comparison["metrics"]
               if m["metric"] in WATCHED and m.get("ratio") is not None}
    base = json.load(open(f"{out}/base/result.json"))["side"]
    pairs = len([s for s in base["metrics"].get("cold", []) if s.get("value")])
    return load, took, pairs, verdicts, changes


def main():
    root = sys.argv[1]
    found = {(schedule, case): [] for schedule in SCHEDULES for case in CASES}
    for rep in range(REPS):
        for index, case in enumerate(CASES):
            for schedule in SCHEDULES:
                # A case may be listed twice (more A/A runs than the others): each run its
                # own folder, never a second run into one.
                out = f"{root}/{schedule}-{index}-{case.replace(':', '-')}-{rep}"
                load, took, pairs, verdicts, changes = run(schedule, case, out)
                found[(schedule, case)].append((verdicts, changes))
                shown = " ".join(f"{m}={verdicts.get(m, '-')}({changes.get(m, float('nan')):+.3f})"
                                 for m in WATCHED)
                print(f"{schedule} {case} rep {rep}: load {load:.2f}, {pairs} pairs, {took:.0f} s: "
                      f"{shown}", flush=True)
    print()
    print("| schedule | case | runs | any verdict | cold or warm regressed | cold_cpu or warm_cpu regressed "
          "| cold_unqueued or warm_unqueued regressed "
          "| median change cold / warm / cold_cpu / cold_unqueued / warm_unqueued |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for (schedule, case), runs in found.items():
        any_verdict = sum(any(v in ("regressed", "improved") for v in r.values()) for r, _ in runs)
        timing = sum(any(r.get(m) == "regressed" for m in ("cold", "warm")) for r, _ in runs)
        cpu = sum(any(r.get(m) == "regressed" for m in ("cold_cpu", "warm_cpu")) for r, _ in runs)
        unqueued = sum(any(r.get(m) == "regressed" for m in ("cold_unqueued", "warm_unqueued"))
                       for r, _ in runs)
        medians = " / ".join(
            f"{statistics.median([c[m] for _, c in runs if m in c]):+.1%}"
            if any(m in c for _, c in runs) else "-"
            for m in ("cold", "warm", "cold_cpu", "cold_unqueued", "warm_unqueued"))
        print(f"| {schedule} | {case} | {len(runs)} | {any_verdict} | {timing} | {cpu} | {unqueued} "
              f"| {medians} |")


main()
