#!/usr/bin/env python3
"""What watching the demo agent's frames costs clibench, against tmux for the same bytes
(issue 33, point 6: clibench's own CPU while it drives a long session).

Writes the frames the demo agent draws over TURNS turns of the long-session scenario (its
own `paint` and `Transcript`, imported from examples/demo-agent/source/demo_agent.py: a
tool call's command and output, then the reply streamed two words a frame, as the
scenario's physics sends it), then runs bench-term's `screen_floor` example on them:
per frame, the CPU of bench-term's terminal reading and emulating (`parse`), also building
and searching the squashed text as a session's wait does (`session`), and of a detached
tmux server doing the same emulation for a person (`tmux`). Rounds alternate the three.

Usage: scripts/screen-floor.py [--turns N] [--rounds N] [--pause-us N] [--out DIR]
Needs tmux, and builds the example with cargo (release).
"""

import argparse
import io
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "examples", "demo-agent", "source")


class Collect:
    """Stands for the demo's Screen: keeps what paint writes."""

    def __init__(self):
        self.out = io.StringIO()

    def write(self, data):
        self.out.write(data)


class Size:
    lines, columns = 24, 80


def stream(turns):
    sys.path.insert(0, DEMO)
    import demo_agent  # noqa: E402  (the demo's own drawing code)

    screen = Collect()
    transcript = demo_agent.Transcript(["Welcome to demo-agent. Type `help` and press Enter."])
    for k in range(1, turns + 1):
        step = (k - 1) % 10 + 1
        lines = 50 * (1 + (step * 7) % 10)
        transcript.add(f"> step {step}: run the command and sum up what it printed")
        transcript.add(f"$ seq 1 {lines}")
        transcript.add(*[f"  {n}" for n in range(1, lines + 1)])
        demo_agent.paint(screen, "demo-agent", transcript.lines, "", Size(), "working (Ctrl-C cancels)")
        words = 30 + (step * 37) % 136
        reply = [f"word{k}x{w}" for w in range(words)] + [f"End of step {step}."]
        for at in range(0, len(reply), 2):
            transcript.stream(" ".join(reply[: at + 2]))
            demo_agent.paint(screen, "demo-agent", transcript.lines, "", Size(), "streaming (Ctrl-C cancels)")
        transcript.add(f"[done in 0.{k % 10}s]")
        demo_agent.paint(screen, "demo-agent", transcript.lines, "", Size())
    return screen.out.getvalue().encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pause-us", type=int, default=500)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="screen-floor-")
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "frames.bin")
    with open(path, "wb") as f:
        f.write(stream(args.turns))
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "bench-term", "--example", "screen_floor"],
        cwd=ROOT,
        check=True,
    )
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    example = os.path.join(target, "release", "examples", "screen_floor")
    with open("/proc/loadavg") as f:
        print(f"load average at the start: {f.read().split()[0]}")
    code = subprocess.run([example, path, str(args.rounds), str(args.pause_us)]).returncode
    with open("/proc/loadavg") as f:
        print(f"load average at the end: {f.read().split()[0]}")
    return code


if __name__ == "__main__":
    sys.exit(main())
