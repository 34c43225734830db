#!/usr/bin/env python3
"""Checks the session phase's `idle_cpu` against the family's /proc CPU totals, read from outside.

    python3 scripts/idle-cpu-check.py OUT -- clibench run SPEC --phases ... --out OUT

Runs the clibench command and, while it runs, reads every 5 ms the CPU totals of every
process of the run's trial users (`clibench-RUNID-N` in /etc/passwd, RUNID from
OUT/state.json; as root those users own the agent's family and nothing else), each with
`time.monotonic_ns()`:

- `utime + stime` from /proc/PID/stat: clock ticks, every thread of the process, those
  that exited too;
- the sum over its live threads of /proc/PID/task/TID/schedstat's first field:
  nanoseconds on a CPU.

For every session trial of OUT/result.json the window is the scans inside
`idle_monotonic_ns` (the same clock: from the first scan after it began to the last before
it ended, at most 5 ms in from each edge); a process born inside it counts from zero. The
script prints clibench's share of a core next to the share from /proc/PID/stat and from
schedstat over that window. The stat share is exact only to a tick per process (10 ms over
the window: 0.3 percentage points per process over 3 s); schedstat is what clibench reads,
from another reader. IDLE_CPU_CHECK_VERBOSE=1 names every process that used more than 1 ms
in a window.

Standard library only; Linux; as root (the trial users' /proc files).
"""
from __future__ import annotations

import bisect
import json
import os
import pwd
import re
import subprocess
import sys
import time

TRIAL_USER = re.compile(r"^clibench-[0-9a-f]+-\d+$")
TICK = os.sysconf("SC_CLK_TCK")
names: dict[str, str] = {}


def run_id(out: str) -> str | None:
    """The run's id from OUT/state.json, once the run has written it."""
    try:
        return json.load(open(os.path.join(out, "state.json")))["run_id"]
    except (OSError, ValueError, KeyError):
        return None


def trial_uids(run: str | None) -> set[int]:
    """The uids of this run's trial users (other runs on the machine have their own)."""
    if run is None:
        return set()
    return {
        e.pw_uid
        for e in pwd.getpwall()
        if TRIAL_USER.match(e.pw_name) and e.pw_name.startswith(f"clibench-{run}-")
    }


def read(pid: str):
    """(uid, ticks, schedstat ns) of a process, or None once it is gone."""
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
        stat = open(f"/proc/{pid}/stat").read()
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks = int(fields[11]) + int(fields[12])
        # Every thread's: /proc/PID/schedstat is the main thread's alone.
        ns = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                ns += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return uid, ticks, ns
    except (OSError, ValueError, IndexError):
        return None


def name_of(pid: str) -> str:
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:80]
    except OSError:
        return "?"


def sample(out: str, command: list[str]):
    """Runs the command; per pid: [(monotonic_ns, ticks, ns)], read every 5 ms."""
    readings: dict[str, list[tuple[int, int, int]]] = {}
    global names
    uids: set[int] = set()
    uids_checked = 0.0
    child = subprocess.Popen(command)
    while child.poll() is None:
        now = time.monotonic_ns()
        if time.monotonic() - uids_checked > 0.2:
            uids, uids_checked = trial_uids(run_id(out)), time.monotonic()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            got = read(pid)
            if got is None or got[0] not in uids:
                continue
            if pid not in readings:
                names[pid] = name_of(pid)
            readings.setdefault(pid, []).append((now, got[1], got[2]))
        time.sleep(0.005)
    return child.returncode, readings


def used(series, start: int, end: int):
    """(ticks, ns) one process used between two scans, from its readings."""
    times = [at for at, _, _ in series]
    first = bisect.bisect_left(times, start)
    last = bisect.bisect_right(times, end) - 1
    if first >= len(series) or last < 0 or last < first:
        return 0, 0
    # Born after the first scan: from zero; otherwise from its reading at that scan.
    base = series[first] if series[first][0] == start else (0, 0, 0)
    return series[last][1] - base[1], series[last][2] - base[2]


def inner_scans(readings, start: int, end: int):
    """The first scan at or after `start` and the last at or before `end`."""
    scans = sorted({at for series in readings.values() for at, _, _ in series})
    inside = [at for at in scans if start <= at <= end]
    return (inside[0], inside[-1]) if len(inside) >= 2 else None


def main() -> int:
    if "--" not in sys.argv[2:]:
        sys.exit(__doc__)
    out = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1 :]
    code, readings = sample(out, command)
    if code != 0:
        print(f"(the command exited {code}; checking what it recorded)")
    result = json.load(open(os.path.join(out, "result.json")))
    print(f"{'trial':>5}  {'clibench':>9}  {'/proc stat':>10}  {'schedstat':>9}  window")
    worst = 0.0
    for run in result["side"].get("sessions", []):
        window = run.get("idle_monotonic_ns")
        share = run.get("idle_cpu_share")
        if not window or share is None:
            print(f"{run['trial']:>5}  no idle window recorded")
            continue
        scans = inner_scans(readings, *window)
        if scans is None:
            print(f"{run['trial']:>5}  fewer than two readings inside the window")
            continue
        # The readings inside clibench's window: its edges (the last turn's end, the quit
        # keys) are not in what is compared.
        start, end = scans
        wall = (end - start) / 1e9
        ticks = ns = 0
        for pid, series in readings.items():
            t, n = used(series, start, end)
            ticks += t
            ns += n
            if n > 1e6 and os.environ.get("IDLE_CPU_CHECK_VERBOSE"):
                print(f"    pid {pid} {names.get(pid)}: {n / 1e6:.1f} ms, {t} ticks")
        stat_share = ticks / TICK / wall
        sched_share = ns / 1e9 / wall
        worst = max(worst, abs(sched_share - share))
        print(
            f"{run['trial']:>5}  {share * 100:8.3f}%  {stat_share * 100:9.3f}%  "
            f"{sched_share * 100:8.3f}%  {wall:.3f} s, {len(readings)} processes seen"
        )
    print(f"largest clibench - schedstat difference: {worst * 100:.3f} percentage points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
