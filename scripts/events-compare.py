#!/usr/bin/env python3
"""Compares the memory figures and ready times of demo runs: OLD_OUT... -- NEW_OUT...

For every memory metric, the median over the old runs' trials against the new runs',
with the difference in percent; for the ready times (cold, warm) the same in ms. Also
prints, for the new runs, how long the settles took in all.
"""
import json, statistics, sys, glob, os

MEMORY = ["rss", "pss", "ui_rss", "instance_rss", "instance_pss", "instance_uss", "reclaimed_rss"]
TIMES = ["cold", "warm"]

def result(out):
    paths = glob.glob(os.path.join(out, "**", "result*.json"), recursive=True)
    return [json.load(open(p)) for p in paths if "schema_version" in open(p).read(200)]

def values(outs, metric):
    found = []
    for out in outs:
        for doc in result(out):
            for sample in doc["side"]["metrics"].get(metric, []):
                if sample.get("value") is not None:
                    found.append(sample["value"])
    return found

split = sys.argv.index("--")
old, new = sys.argv[1:split], sys.argv[split + 1:]
for metric in MEMORY + TIMES:
    a, b = values(old, metric), values(new, metric)
    if not a or not b:
        print(f"  {metric}: old {len(a)} values, new {len(b)} values")
        continue
    ma, mb = statistics.median(a), statistics.median(b)
    if metric in TIMES:
        print(f"  {metric}: old median {ma * 1000:.1f} ms, new {mb * 1000:.1f} ms "
              f"({(mb / ma - 1) * 100:+.1f} %; n={len(a)}/{len(b)})")
    else:
        print(f"  {metric}: old median {ma / 2**20:.2f} MiB, new {mb / 2**20:.2f} MiB "
              f"({(mb / ma - 1) * 100:+.2f} %; n={len(a)}/{len(b)})")
total, count, ended = 0.0, 0, {}
for out in new:
    for doc in result(out):
        for record in doc["side"].get("trials", []):
            for settle in record.get("settles", []):
                total += settle["took_seconds"]
                count += 1
                ended[settle["ended"]] = ended.get(settle["ended"], 0) + 1
if count:
    print(f"  new runs: {count} settles took {total:.2f} s in all "
          f"({total / len(new):.2f} s per run; ended: {ended})")
