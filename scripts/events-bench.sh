#!/usr/bin/env bash
# Issue 24's numbers for the settle mode and `startup --ready exit`, old binary against new.
#
#   scripts/events-bench.sh OLD_CLIBENCH NEW_CLIBENCH FIXTURE [PART...]
#
# PART: demo (3 interleaved demo runs each, values compared), staircase, mem, startup
# (default: all). FIXTURE is bench-proc's fixture program (target/*/bench-proc-fixture).
# Run as root (the demo's trial users). Prints `uptime` first: numbers from a shared
# host mean little without the load.
set -euo pipefail
OLD=$1 NEW=$2 FIXTURE=$3
shift 3
PARTS=${*:-demo staircase mem startup}
OUT=${OUT:-/tmp/events-bench}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
uptime

seconds() { # command... -> wall seconds on stdout, output in $OUT/last.log
    local start end
    start=$(date +%s.%N)
    "$@" >"$OUT/last.log" 2>&1 || { echo "FAILED: $*" >&2; tail -5 "$OUT/last.log" >&2; }
    end=$(date +%s.%N)
    python3 -c "print(f'{$end - $start:.2f}')"
}

for part in $PARTS; do
case $part in
demo)
    for i in 1 2 3; do
        for which in old new; do
            bin=$OLD; [ $which = new ] && bin=$NEW
            rm -rf "$OUT/demo-$which-$i"
            echo "demo run $which $i: $(seconds "$bin" run --out "$OUT/demo-$which-$i") s"
        done
    done
    python3 "$HERE/events-compare.py" "$OUT"/demo-old-* -- "$OUT"/demo-new-*
    ;;
staircase)
    echo "staircase --count 20 --settle 1s (old): $(seconds "$OLD" staircase --count 20 --settle 1s --json -- python3 -m http.server 0) s"
    cp "$OUT/last.log" "$OUT/staircase-old.log"
    for i in 1 2 3; do
        echo "staircase --count 20 --settle auto (new) $i: $(seconds "$NEW" staircase --count 20 --settle auto --json -- python3 -m http.server 0) s"
        cp "$OUT/last.log" "$OUT/staircase-new-$i.log"
    done
    python3 - "$OUT" <<'PY'
import json, sys, glob
def steady(path):
    text = open(path).read()
    doc = json.loads(text[text.index("{\n"):])
    return doc["avg_per_instance_rss_bytes"], doc.get("steady_per_instance_rss_bytes")
for path in sorted(glob.glob(sys.argv[1] + "/staircase-*.log")):
    avg, st = steady(path)
    print(f"  {path.rsplit('/', 1)[1]}: avg {avg / 2**20:.2f} MiB, steady {st / 2**20:.2f} MiB per instance")
PY
    ;;
mem)
    for i in 1 2 3; do
        echo "mem --settle 3s, 1400 children (old): $(seconds "$OLD" mem --settle 3s -- "$FIXTURE" --children 1400) s"
        grep -E "^total" "$OUT/last.log" | sed 's/^/  /'
        echo "mem --settle auto:3s, 1400 children (new): $(seconds "$NEW" mem --settle auto:3s -- "$FIXTURE" --children 1400) s"
        grep -E "^total|^settled" "$OUT/last.log" | sed 's/^/  /'
    done
    ;;
startup)
    # Interleaved: 6 rounds of 5 runs each, clibench then hyperfine.
    rm -f "$OUT"/startup-*.json
    for round in 1 2 3 4 5 6; do
        "$NEW" startup --ready exit --runs 5 --warmup 1 --export-json "$OUT/startup-clibench-$round.json" \
            -- python3 -c pass >/dev/null 2>&1
        hyperfine -N --runs 5 --warmup 1 --export-json "$OUT/startup-hyperfine-$round.json" \
            'python3 -c pass' >/dev/null 2>&1
    done
    python3 - "$OUT" <<'PY'
import json, sys, glob, statistics
out = sys.argv[1]
# `startup --export-json` writes a result file: the times are side.metrics.ready.
ours = [s["value"] for p in glob.glob(out + "/startup-clibench-*.json")
        for s in json.load(open(p))["side"]["metrics"]["ready"] if s.get("value") is not None]
theirs = [t for p in glob.glob(out + "/startup-hyperfine-*.json")
          for t in json.load(open(p))["results"][0]["times"]]
a, b = statistics.median(ours), statistics.median(theirs)
print(f"startup --ready exit -- python3 -c pass: median {a * 1000:.2f} ms over {len(ours)} runs; "
      f"hyperfine -N: median {b * 1000:.2f} ms over {len(theirs)} runs; "
      f"difference {(a - b) * 1000:+.2f} ms ({(a / b - 1) * 100:+.1f} %)")
PY
    ;;
esac
done
uptime
