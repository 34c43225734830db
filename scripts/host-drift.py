#!/usr/bin/env python3
"""How much does this machine's own speed move, and how fast? A guide to what `clibench ab`
can detect here before any target runs.

    scripts/host-drift.py [--seconds 20] [--window-ms 140] [--gap-ms 800]

It times one fixed chunk of CPU work (about 1 ms) back to back by the thread's own CPU time,
for --seconds, and prints:

- the spread of one chunk's log time, and how it correlates with the chunk one lag later;
- the spread of averages over windows of --window-ms (about one start of the program to
  measure), and the spread of the difference between two windows --gap-ms apart (about how
  far apart the two starts of an `ab` pair are).

On a quiet dedicated machine every number is small and the windows' difference is about
√2 times their spread over √(chunks per window). On a shared VM the chunk's time jumps between
plateaus that last a fraction of a second (the neighbours, the host's scheduler): then the
window spread is large, adjacent windows correlate, windows a pair apart do not, and that
difference is about what the log ratio of a pair spreads for any program started there (on
a 2-core VM: 0.205, against 0.18 to 0.21 for the demo's cold starts in `ab` the same hour).
Divide it by √(pairs) for the standard error of an `ab`'s paired test.

It measures the machine, not clibench: the work is the same in every chunk. Run it on an
otherwise idle machine; anything else running shows up as drift.
"""
import argparse
import math
import statistics
import time


def chunk(iterations: int) -> float:
    """The thread CPU time of a fixed loop, in nanoseconds."""
    started = time.thread_time_ns()
    total = 0
    for i in range(iterations):
        total += i * i
    return float(time.thread_time_ns() - started)


def correlation(values: list, lag: int) -> float:
    mean = statistics.fmean(values)
    deviations = [v - mean for v in values]
    denominator = sum(d * d for d in deviations)
    if lag >= len(values) or denominator == 0:
        return float("nan")
    return sum(deviations[i] * deviations[i + lag] for i in range(len(values) - lag)) / denominator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--window-ms", type=float, default=140.0)
    parser.add_argument("--gap-ms", type=float, default=800.0)
    parser.add_argument("--iterations", type=int, default=20000, help="loop length of a chunk")
    args = parser.parse_args()

    logs = []
    started = time.monotonic()
    while time.monotonic() - started < args.seconds:
        logs.append(math.log(chunk(args.iterations)))
    elapsed = time.monotonic() - started
    per_chunk = elapsed / len(logs)
    print(f"{len(logs)} chunks of {per_chunk * 1e3:.2f} ms in {elapsed:.1f} s; "
          f"load average now {open('/proc/loadavg').read().split()[0]}")
    print(f"one chunk: log spread {statistics.stdev(logs):.3f}")
    for lag_ms in (10, 50, 100, 200, 400, 800, 1600):
        lag = max(1, round(lag_ms / 1e3 / per_chunk))
        print(f"  correlation with the chunk {lag_ms:>4} ms later: {correlation(logs, lag):+.2f}")

    width = max(1, round(args.window_ms / 1e3 / per_chunk))
    windows = [statistics.fmean(logs[i:i + width]) for i in range(0, len(logs) - width + 1, width)]
    gap = max(1, round(args.gap_ms / args.window_ms))
    differences = [windows[i + gap] - windows[i] for i in range(len(windows) - gap)]
    adjacent = [windows[i + 1] - windows[i] for i in range(len(windows) - 1)]
    print(f"{args.window_ms:.0f} ms windows: log spread {statistics.stdev(windows):.3f}")
    print(f"  difference of adjacent windows: spread {statistics.stdev(adjacent):.3f}")
    print(f"  difference of windows {args.gap_ms:.0f} ms apart: spread "
          f"{statistics.stdev(differences):.3f} (about what an ab pair's log ratio spreads here)")
    floor = statistics.stdev(differences)
    # Student's t quantiles at pairs − 1 degrees of freedom: 1 − 0.05/12 (Holm's first step
    # over 6 tested metrics, two-sided) plus 0.8 (the power "could detect" is for).
    quantiles = {10: 3.36 + 0.88, 20: 3.03 + 0.86, 40: 2.84 + 0.85}
    for pairs, quantile in quantiles.items():
        error = floor / math.sqrt(pairs)
        print(f"  {pairs} pairs: standard error {error:.3f}, could detect about "
              f"±{math.expm1(quantile * error) * 100:.0f}% (Holm over 6 metrics)")


if __name__ == "__main__":
    main()
