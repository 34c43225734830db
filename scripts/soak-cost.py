#!/usr/bin/env python3
"""What clibench itself costs while it drives a long session (issue 33, point 6).

Runs `clibench run --scenario long-session` on the built-in demo agent (or SPEC) with
`session.turns = TURNS`, and reads /proc once a second for the process tree under the
clibench it started. Processes of another uid than root are the trial user's, the
agent's. It prints, for the whole run:

- clibench's CPU seconds, its root tools' and the agent family's, and the ratio of the
  first to the last;
- the highest RSS of one clibench process (the session phase's, in practice) and of
  all of clibench's processes together;
- the 1-minute load average at the start and at the end.

Processes of uid 0 are split by what they run: clibench's own (their executable is the
clibench binary: the pipeline, the phases, the model endpoint's threads) and the tools it
runs as root for prepare and install (git, npm, tar), which are the target's build, not
clibench's overhead: the ratio is clibench's own CPU over the agent's, and each progress
line also gives the ratio since the line before (the steady state once the session runs).

CPU is read from /proc/PID/stat: utime + stime of every process at its last sighting,
plus, for the agent's processes, cutime + cstime (the tool calls it ran and reaped,
which live for less than a second and are rarely seen alive). A child seen alive and
then reaped by a parent seen later is counted twice, which can only flatter clibench:
its share is an upper bound within a sampling interval of each short-lived child.
(The phase process reaps the agent's leader: its cutime is the agent's and is not
added to clibench's.)

Usage: scripts/soak-cost.py [--clibench PATH] [--turns N] [--spec SPEC] [--out DIR] [--progress SECONDS]
       [-- extra clibench run arguments]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def read_stat(pid):
    """(ppid, self CPU seconds, reaped children's CPU seconds, rss bytes) or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may hold spaces: split after the last ')'.
    fields = text[text.rindex(")") + 2 :].split()
    ppid = int(fields[1])
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    rss_pages = int(fields[21])
    return ppid, (utime + stime) / TICK, (cutime + cstime) / TICK, rss_pages * PAGE


def uid_of(pid):
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def owner_of(pid, uid, clibench):
    """'clibench' (its own binary), 'tools' (another program run as root) or 'agent'."""
    if uid != 0:
        return "agent"
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
    except OSError:
        return "tools"
    return "clibench" if exe == clibench else "tools"


def tree(root):
    """Every live pid under `root` (itself included), with its stat and uid."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = read_stat(int(entry))
            if stat is not None:
                stats[int(entry)] = stat
    members = {root}
    grew = True
    while grew:
        grew = False
        for pid, stat in stats.items():
            if pid not in members and stat[0] in members:
                members.add(pid)
                grew = True
    return {pid: (stats[pid], uid_of(pid)) for pid in members if pid in stats}


def load_1m():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def totals(seen):
    """CPU seconds of clibench's own processes, of the tools it ran as root, of the agent."""
    sums = {"clibench": 0.0, "tools": 0.0, "agent": 0.0}
    for owner, own, reaped, _ in seen.values():
        sums[owner] += own + (reaped if owner == "agent" else 0.0)
    return sums["clibench"], sums["tools"], sums["agent"]


def percent(part, whole):
    return 100 * part / whole if whole > 0 else float("nan")


def progress_line(seen, elapsed, clibench_rss, last):
    """The figures so far and since the last line: CPU of both sides and clibench's RSS now."""
    clibench_cpu, tools_cpu, agent_cpu = totals(seen)
    since = percent(clibench_cpu - last[0], agent_cpu - last[1])
    return (
        f"at {elapsed:.0f} s: clibench CPU {clibench_cpu:.2f} s (and its root tools {tools_cpu:.2f} s), "
        f"agent {agent_cpu:.2f} s ({percent(clibench_cpu, agent_cpu):.2f}%, since the last line "
        f"{since:.2f}%), clibench RSS now {clibench_rss / 2**20:.1f} MiB, load {load_1m():.2f}"
    ), (clibench_cpu, agent_cpu)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clibench", default=shutil.which("clibench") or "clibench")
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--spec", default=None)
    parser.add_argument("--out", default=None)
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument(
        "--progress",
        type=float,
        default=0.0,
        help="every this many seconds, print the figures so far (0: only at the end)",
    )
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="soak-cost-")
    os.makedirs(out, exist_ok=True)
    command = [args.clibench, "run"]
    if args.spec:
        command.append(args.spec)
    command += [
        "--scenario",
        "long-session",
        "--phases",
        "prepare,install,session",
        "--trials",
        "1",
        "--set",
        f"session.turns={args.turns}",
        "--out",
        os.path.join(out, "run"),
    ] + args.extra
    load_start = load_1m()
    started = time.monotonic()
    log = open(os.path.join(out, "clibench.log"), "w")
    child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    clibench = os.path.realpath(shutil.which(args.clibench) or args.clibench)
    # pid -> (owner, last self CPU, last reaped children's CPU, highest rss)
    seen = {}
    last = (0.0, 0.0)
    total_rss_peak = 0
    samples = 0
    last_progress = started
    while child.poll() is None:
        members = tree(child.pid)
        samples += 1
        clibench_rss = 0
        for pid, ((_, own, reaped, rss), uid) in members.items():
            if uid is None:
                continue
            owner, _, _, peak = seen.get(pid, (None, 0.0, 0.0, 0))
            owner = owner or owner_of(pid, uid, clibench)
            seen[pid] = (owner, own, reaped, max(peak, rss))
            if owner == "clibench":
                clibench_rss += rss
        total_rss_peak = max(total_rss_peak, clibench_rss)
        if args.progress > 0 and time.monotonic() - last_progress >= args.progress:
            last_progress = time.monotonic()
            line, last = progress_line(seen, last_progress - started, clibench_rss, last)
            print(line, flush=True)
        time.sleep(args.interval)
    wall = time.monotonic() - started
    load_end = load_1m()
    # The clibench process itself: its CPU is exact after it exits (its own times
    # and its reaped children's, all of them clibench's phase processes and the
    # trial user's agent): so it is not read here; each pid's last sighting is.
    clibench_cpu, tools_cpu, agent_cpu = totals(seen)
    peak_one = max((peak for owner, _, _, peak in seen.values() if owner == "clibench"), default=0)
    print(f"command: {' '.join(command)}")
    print(f"exit status: {child.returncode} (log: {log.name})")
    print(f"wall: {wall:.0f} s, {samples} samples, load average (1 min) {load_start:.2f} at start, {load_end:.2f} at end")
    print(f"clibench CPU: {clibench_cpu:.2f} s   its root tools (git, npm, ...): {tools_cpu:.2f} s   agent family CPU: {agent_cpu:.2f} s")
    if agent_cpu > 0:
        print(f"clibench / agent CPU: {100 * clibench_cpu / agent_cpu:.1f}%")
    print(f"clibench RSS: highest of one process {peak_one / 2**20:.1f} MiB, of all its processes together {total_rss_peak / 2**20:.1f} MiB")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
