#!/usr/bin/env python3
"""Write N synthetic result files from one real result.json, for timing `clibench history`.

Each copy gets its own sha, a start time one minute after the previous one, and every
value scaled by a log-normal factor (log-sd 0.03); from copy STEP on, the times are 10%
slower, so `history show` has a change point to find. Fixed seed: the same files every
time.

    scripts/history-synthetic.py RESULT.json OUT_DIR [N [STEP]]
    clibench history add OUT_DIR/*.json --store /tmp/h.sqlite
"""

import hashlib
import json
import math
import random
import sys
from pathlib import Path


def main() -> None:
    template = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
    step = int(sys.argv[4]) if len(sys.argv) > 4 else count * 7 // 10
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    start = 1_780_000_000_000
    for i in range(count):
        result = json.loads(json.dumps(template))
        sha = hashlib.sha1(str(i).encode()).hexdigest()
        result["request"]["sha"] = sha
        result["side"]["sha"] = sha
        for trial in result["side"].get("trials", []):
            if "started_unix_ms" in trial:
                trial["started_unix_ms"] = start + i * 60_000 + trial["trial"]
        point = math.exp(rng.gauss(0.0, 0.03))
        for name, observations in result["side"]["metrics"].items():
            for observation in observations:
                if "value" in observation:
                    factor = point * math.exp(rng.gauss(0.0, 0.03))
                    # Times (cold, warm, ...) are 10% slower from the step on.
                    if i >= step and observation["value"] < 1000:
                        factor *= 1.10
                    observation["value"] = observation["value"] * factor
        (out / f"result-{i:04}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
