#!/usr/bin/env python3
"""Checks the session phase's `first_token` and `stream_render` against an independent replay.

    python3 scripts/session-replay.py SPEC OUT [OUT...]

Needs the `pyte` terminal emulator (`pip install pyte`, in a venv if you like); clibench's own
screen model is the Rust `vt100` crate, so the two share no code. For every session trial in
OUT/result.json it replays OUT/transcripts/session-N.cast (what the agent wrote, with the time
clibench read it) through pyte and finds, for every scripted turn with an explicit reply text:

- Enter: the turn's `\\r` input event in the recording (the prompts are typed before it);
- the screen after every output event, except inside a synchronized update, which a
  terminal that supports it shows only once it ends;
- the first time the reply's first chunk (its first `chunk_tokens` tokens) occurs on the
  replayed screen more often than it did before Enter, and the first time its last 4
  tokens do (as often as the reply holds them), with all whitespace removed, as
  docs/writing-a-spec.md describes the match;
- from the result's `first_chunk_at_seconds` / `last_chunk_at_seconds` (the journal's write
  times of the reply's first and last chunk, since Enter), the replayed first_token and
  stream_render.

It prints both values per turn and the largest difference; it exits 1 when a difference
exceeds --tolerance (default 2 ms). Turns whose reply is generated (`tokens = N`) have no
text to look for here and are skipped, with a line saying so.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tomllib

try:
    import pyte
except ImportError:
    sys.exit("session-replay.py needs pyte: pip install pyte")

LAST_TOKENS = 4


def tokens_of(text: str) -> list[str]:
    """Runs of non-space characters, each with the whitespace before it."""
    return re.findall(r"\s*\S+", text) or ([text] if text else [])


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def script_of(spec_path: str) -> dict:
    spec = tomllib.load(open(spec_path, "rb"))
    model = spec.get("model") or sys.exit(f"{spec_path}: no [model]")
    script = model.get("script")
    if isinstance(script, str):
        path = os.path.join(os.path.dirname(spec_path), script)
        return tomllib.load(open(path, "rb"))
    return script


def prompted_turns(script: dict) -> list[dict]:
    """The turns the session phase types, in order, with their final text and chunk size."""
    physics = script.get("physics", {})
    turns = []
    for turn in script.get("turns", []):
        if "prompt" not in turn:
            continue
        text = turn.get("then") if "shell" in turn else turn.get("text")
        chunk = turn.get("physics", {}).get("chunk_tokens", physics.get("chunk_tokens", 1))
        turns.append({"prompt": turn["prompt"], "text": text, "chunk": max(int(chunk), 1)})
    return turns


class Screen(pyte.Screen if "pyte" in globals() else object):
    """pyte's screen, tolerant of the private-marker SGR sequences agents send (`CSI > 4 ; 0 m`,
    xterm's modifyOtherKeys), which pyte's parser passes on with `private=True` and its own
    screen then refuses; they set no visible attribute, so they are dropped."""

    def select_graphic_rendition(self, *attrs, private=False, **kwargs):
        if not private:
            super().select_graphic_rendition(*attrs)


def replay(cast_path: str):
    """(time, squashed screen) after every output event, and the times of each Enter."""
    with open(cast_path) as stream:
        header = json.loads(stream.readline())
        screen = Screen(header["width"], header["height"])
        feed = pyte.ByteStream(screen)
        screens, enters = [], []
        # Inside a synchronized update (`CSI ? 2026 h` to `CSI ? 2026 l`) a terminal that
        # supports it shows nothing new until the update ends; pyte ignores the mode, so
        # the replay takes no screen until then (as clibench's screen model does).
        synchronized = False
        for line in stream:
            at, kind, data = json.loads(line)
            if kind == "i" and data == "\r":
                enters.append(at)
            elif kind == "o":
                feed.feed(data.encode("utf-8", "surrogateescape"))
                begin, end = data.rfind("\x1b[?2026h"), data.rfind("\x1b[?2026l")
                if begin != end:
                    synchronized = begin > end
                if not synchronized:
                    screens.append((at, squash("\n".join(screen.display))))
    return screens, enters


def first_seen(screens, since: float, needle: str, needed: int):
    for at, text in screens:
        if at >= since and text.count(needle) >= needed:
            return at
    return None


def count_before(screens, until: float, needle: str) -> int:
    count = 0
    for at, text in screens:
        if at > until:
            break
        count = text.count(needle)
    return count


def check(spec: str, out: str, tolerance: float) -> float:
    turns = prompted_turns(script_of(spec))
    result = json.load(open(os.path.join(out, "result.json")))
    worst = 0.0
    for run in result["side"].get("sessions", []):
        cast = os.path.join(out, "transcripts", f"session-{run['trial']}.cast")
        screens, enters = replay(cast)
        for measured in run["turns"]:
            index = measured["turn"] - 1
            plan = turns[index]
            label = f"{out} trial {run['trial']} turn {measured['turn']}"
            if plan["text"] is None:
                print(f"{label}: generated reply, skipped")
                continue
            tokens = tokens_of(plan["text"])
            first = squash("".join(tokens[: plan["chunk"]]))
            last = squash("".join(tokens[-LAST_TOKENS:]))
            enter = enters[index]
            repeats = max(squash(plan["text"]).count(last), 1)
            first_at = first_seen(screens, enter, first, count_before(screens, enter, first) + 1)
            last_at = first_seen(screens, enter, last, count_before(screens, enter, last) + repeats)
            if last_at is not None and (first_at is None or first_at > last_at):
                first_at = last_at
            pairs = [
                ("first_token", measured.get("first_token_seconds"), first_at,
                 measured.get("first_chunk_at_seconds")),
                ("stream_render", measured.get("stream_render_seconds"), last_at,
                 measured.get("last_chunk_at_seconds")),
            ]
            parts = []
            for name, clibench, seen, chunk_at in pairs:
                if clibench is None or seen is None or chunk_at is None:
                    parts.append(f"{name} clibench {clibench} replay seen {seen}: not comparable")
                    continue
                replayed = seen - (enter + chunk_at)
                difference = replayed - clibench
                worst = max(worst, abs(difference))
                parts.append(
                    f"{name} clibench {clibench * 1000:.3f} ms, replay {replayed * 1000:.3f} ms"
                    f" ({difference * 1000:+.3f})"
                )
            print(f"{label}: " + "; ".join(parts))
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spec")
    parser.add_argument("outs", nargs="+")
    parser.add_argument("--tolerance", type=float, default=0.002, help="seconds (0.002)")
    args = parser.parse_args()
    worst = max(check(args.spec, out, args.tolerance) for out in args.outs)
    print(f"largest difference: {worst * 1000:.3f} ms (tolerance {args.tolerance * 1000:.1f} ms)")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
