#!/usr/bin/env python3
"""Re-judge saved `clibench ab` runs with the current `clibench compare`.

    scripts/verdict-trials.py [--clibench PATH] [--trials N,N,...] [--metrics a,b] [--aa] RUN...

Each RUN is an `ab` output folder (RUN/base/result.json, RUN/head/result.json). For
every trial count N asked for (default: each from 2 to the run's count), both sides are
cut to their first N trials (interleaved pairs stay pairs) and compared again; the
verdict of each metric is printed per run, then a summary: per N, in how many runs each
metric regressed or improved, and (with --aa, for A/A runs where every verdict is false)
in how many runs any metric got one. Raw p-values are kept, so the summary also shows
what other family rules would have said: no correction (each metric at 5%) and Holm
without the practical thresholds.

It measures nothing itself: the samples are the saved ones, the rule is the binary's.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def cut(result, n):
    """The result with only trials below n of the trial phases (measure, runtime, ui)."""
    result = json.loads(json.dumps(result))
    side = result["side"]
    trial_phases = {"measure", "runtime", "ui"}
    side["trials"] = [t for t in side.get("trials", []) if t["phase"] not in trial_phases or t["trial"] < n]
    for metric, samples in side["metrics"].items():
        if max((s["trial"] for s in samples), default=0) > 0:
            side["metrics"][metric] = [s for s in samples if s["trial"] < n]
    side["metrics"] = {m: s for m, s in side["metrics"].items() if s}
    return result


def judge(clibench, base, head, n, scratch):
    paths = []
    for name, result in (("base", base), ("head", head)):
        path = os.path.join(scratch, f"{name}.json")
        with open(path, "w") as file:
            json.dump(cut(result, n), file)
        paths.append(path)
    out = subprocess.run([clibench, "compare", *paths, "--format", "json"], capture_output=True, text=True)
    if not out.stdout:
        sys.exit(f"clibench compare failed: {out.stderr}")
    return json.loads(out.stdout)


def holm(p_values, alpha=0.05):
    """Which of the p-values Holm's step-down rejects at alpha."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for rank, index in enumerate(order):
        if p_values[index] * (len(p_values) - rank) > alpha:
            break
        rejected[index] = True
    return rejected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clibench", default="target/release/clibench")
    parser.add_argument("--trials", default="")
    parser.add_argument("--metrics", default="")
    parser.add_argument("--aa", action="store_true")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    counts = {}
    runs = 0
    with tempfile.TemporaryDirectory() as scratch:
        for run in args.runs:
            try:
                base = json.load(open(f"{run}/base/result.json"))
                head = json.load(open(f"{run}/head/result.json"))
            except (OSError, ValueError) as error:
                print(f"{run}: skipped ({error})")
                continue
            runs += 1
            most = max(s["trial"] for s in base["side"]["metrics"].get("cold", [{"trial": 0}])) + 1
            trials = [int(n) for n in args.trials.split(",") if n] or list(range(2, most + 1))
            for n in trials:
                comparison = judge(args.clibench, base, head, n, scratch)
                rows = comparison["metrics"]
                if args.metrics:
                    shown = [r for r in rows if r["metric"] in args.metrics.split(",")]
                else:
                    shown = rows
                words = " ".join(
                    f"{r['metric']}={r['verdict']}({(r['ratio'] or 0) - 1:+.1%})" for r in shown
                )
                print(f"{run} n={n}: {words}")
                tested = [r for r in rows if r.get("p_value") is not None]
                key = counts.setdefault(n, {"any": 0, "uncorrected": 0, "holm_no_threshold": 0})
                if any(r["verdict"] in ("regressed", "improved") for r in rows):
                    key["any"] += 1
                if any(r["p_value"] <= 0.05 and abs((r["ratio"] or 0) - 1) > r["floor"] for r in tested):
                    key["uncorrected"] += 1
                if any(holm([r["p_value"] for r in tested])):
                    key["holm_no_threshold"] += 1
                for r in rows:
                    if r["verdict"] in ("regressed", "improved"):
                        slot = f"{r['metric']} {r['verdict']}"
                        key[slot] = key.get(slot, 0) + 1
    print(f"## summary over {runs} runs")
    for n, key in sorted(counts.items()):
        verdicts = ", ".join(f"{k}: {v}" for k, v in sorted(key.items()) if " " in k)
        line = f"n={n}: {verdicts or 'no verdict'}"
        if args.aa:
            line += (
                f"; runs with any false verdict: {key['any']} (rule), "
                f"{key['uncorrected']} (no family correction), "
                f"{key['holm_no_threshold']} (Holm, no thresholds)"
            )
        print(line)


if __name__ == "__main__":
    main()
