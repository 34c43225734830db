#!/usr/bin/env python3
"""How often `clibench ab` finds a planted change on the demo within a time budget, and how
often it cries wolf: A/A, and head's start made slower by a sleep
(DEMO_AGENT_STARTUP_DELAY_MS) or by CPU work (DEMO_AGENT_STARTUP_WORK_MS), the cases taking
turns so that all of them see the same stretch of the machine.

Usage: CLIBENCH=target/release/clibench REPS=4 BUDGET=2m SCHEDULE=tight \
       CASES="aa delay:7 work:7 delay:4" scripts/ab-power.py OUT_DIR

A case `delay:N` or `work:N` plants N ms on head's start (the demo's cold start is about
70 ms on a quiet 2-core VM: 7 ms is +10%, 4 ms about +5%). Prints one line per run (the
verdicts of cold, warm, cold_cpu and warm_cpu, the pairs run, the seconds taken, the load
average at the start) and a summary per case: runs with any verdict (A/A: false alarms),
runs where cold or warm regressed (A/B: found).
"""

import json
import os
import subprocess
import sys
import time

CLIBENCH = os.environ.get("CLIBENCH", "clibench")
REPS = int(os.environ.get("REPS", "4"))
BUDGET = os.environ.get("BUDGET", "2m")
SCHEDULE = os.environ.get("SCHEDULE", "tight")
CASES = os.environ.get("CASES", "aa delay:7 work:7 delay:4").split()
WATCHED = ("cold", "warm", "cold_cpu", "warm_cpu")
KNOBS = {"delay": "DEMO_AGENT_STARTUP_DELAY_MS", "work": "DEMO_AGENT_STARTUP_WORK_MS"}


def run(case, out):
    load = float(open("/proc/loadavg").read().split()[0])
    command = [CLIBENCH, "ab", "--schedule", SCHEDULE, "--budget", BUDGET,
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
    base = json.load(open(f"{out}/base/result.json"))["side"]
    pairs = len([s for s in base["metrics"].get("cold", []) if s.get("value")])
    return load, took, pairs, verdicts


def main():
    root = sys.argv[1]
    found = {case: [] for case in CASES}
    for rep in range(REPS):
        for case in CASES:
            load, took, pairs, verdicts = run(case, f"{root}/{case.replace(':', '-')}-{rep}")
            found[case].append(verdicts)
            shown = " ".join(f"{m}={verdicts.get(m, '-')}" for m in WATCHED)
            print(f"{case} rep {rep}: load {load:.2f}, {pairs} pairs, {took:.0f} s: {shown}",
                  flush=True)
    print()
    print(f"| case | runs | any verdict | cold or warm regressed | cold_cpu or warm_cpu regressed |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for case in CASES:
        runs = found[case]
        any_verdict = sum(any(v in ("regressed", "improved") for v in r.values()) for r in runs)
        timing = sum(any(r.get(m) == "regressed" for m in ("cold", "warm")) for r in runs)
        cpu = sum(any(r.get(m) == "regressed" for m in ("cold_cpu", "warm_cpu")) for r in runs)
        print(f"| {case} | {len(runs)} | {any_verdict} | {timing} | {cpu} |")


main()
