#!/usr/bin/env python3
"""How long after spawn a process family's RSS and process count reach their final value.

Usage: settle-dynamics.py RUNS SECONDS -- COMMAND...
Spawns COMMAND (its own process group, stdio on /dev/null) RUNS times, samples the
family (the process and its descendants, from /proc/PID/stat) every 2 ms for SECONDS,
and prints per run: when the RSS was last outside 1 % of its final value, and when the
process count last changed. The justification of the `auto` settle's quiet interval.
"""
import os, signal, subprocess, sys, time

PAGE = os.sysconf("SC_PAGE_SIZE")

def family(root):
    pids, queue = [], [root]
    while queue:
        pid = queue.pop()
        pids.append(pid)
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    queue.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    rss, count = 0, 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] == "Z":
                continue
            rss += int(fields[21]) * PAGE
            count += 1
        except OSError:
            pass
    return count, rss

def main():
    runs, seconds = int(sys.argv[1]), float(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    for run in range(runs):
        started = time.monotonic()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, process_group=0)
        points = []
        while (now := time.monotonic() - started) < seconds:
            points.append((now, *family(child.pid)))
            time.sleep(0.002)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        _, final_count, final_rss = points[-1]
        outside = [t for t, _, rss in points if abs(rss - final_rss) > 0.01 * final_rss]
        count_changed = [t for (t, c, _), (_, c0, _) in zip(points[1:], points) if c != c0]
        gaps = []
        # The longest pause between two RSS changes of more than 1 % before the end.
        last_change = None
        for (t, _, rss), (_, _, rss0) in zip(points[1:], points):
            if abs(rss - rss0) > 0.01 * max(rss0, 1):
                if last_change is not None:
                    gaps.append(t - last_change)
                last_change = t
        print(f"run {run}: final RSS {final_rss / 2**20:.1f} MiB, {final_count} processes; "
              f"RSS last outside 1% at {max(outside, default=0) * 1000:.0f} ms, "
              f"count last changed at {max(count_changed, default=0) * 1000:.0f} ms, "
              f"longest pause between >1% changes {max(gaps, default=0) * 1000:.0f} ms "
              f"({len(points)} samples)")

main()
