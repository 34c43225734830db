#!/usr/bin/env bash
# The CI recipe for main (docs/history.md) on the demo: does `history check` fail on the
# commit that made starts slower, and only there? (issue 34)
#
#   scripts/history-ci-demo.sh [RUN FLAGS...]
#
# Builds a repository of COMMITS (12) commits of the demo agent (#0 the demo as it is)
# where commit #SLOW (the last) makes every start DELAY_MS (30) ms slower (the default of
# DEMO_AGENT_STARTUP_DELAY_MS); every other commit adds a line to the agent's README. Then,
# for each commit in order, as CI on main would: `clibench run --commit SHA --history
# STORE`, and `clibench history check RESULT --metric METRIC --fail-on-regression`.
# Flags go to `clibench run` (default `--trials 5 --phases prepare,install,measure`).
# Settings (environment): CLIBENCH (default: clibench on PATH), WORK (a new temp dir),
# COMMITS, SLOW, DELAY_MS, METRIC (cold). Prints each commit's check line and exit code,
# and the 1-minute load average before and after (the noise depends on the neighbours).
set -euo pipefail

clibench=${CLIBENCH:-clibench}
work=${WORK:-$(mktemp -d /tmp/history-ci-demo.XXXXXX)}
commits=${COMMITS:-12}
slow=${SLOW:-$((commits - 1))}
delay=${DELAY_MS:-30}
metric=${METRIC:-cold}
if [ "$#" -eq 0 ]; then set -- --trials 5 --phases prepare,install,measure; fi
mkdir -p "$work"

"$clibench" run --write-demo "$work/demo" > "$work/spec.path"
spec=$(cat "$work/spec.path")
source=$(dirname "$spec")/source
git_() { git -C "$source" -c user.name=history-ci -c user.email=history-ci@localhost "$@"; }
for step in $(seq 1 $((commits - 1))); do
    if [ "$step" = "$slow" ]; then
        # The knob's default, not the environment: the slowdown lives in the code.
        FROM='os.environ.get("DEMO_AGENT_STARTUP_DELAY_MS", "").strip() or "0"' \
        TO="os.environ.get(\"DEMO_AGENT_STARTUP_DELAY_MS\", \"\").strip() or \"$delay\"" \
        python3 - "$source/demo_agent.py" <<'EOF'
import os, sys
path = sys.argv[1]
text = open(path).read()
assert text.count(os.environ["FROM"]) == 1, "the knob's line moved"
open(path, "w").write(text.replace(os.environ["FROM"], os.environ["TO"]))
EOF
    else
        printf '\nnote %s\n' "$step" >> "$source/README.md"
    fi
    git_ commit -q -am "step $step"
done

echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
started=$(date +%s)
index=0
for sha in $(git_ rev-list --reverse HEAD); do
    out=$work/run-$index
    "$clibench" run "$spec" --commit "$sha" --out "$out" --history "$work/history.sqlite" "$@" \
        > "$out.stdout" 2> "$out.stderr" || { echo "run of #$index failed: $out.stderr"; exit 1; }
    set +e
    line=$("$clibench" history check "$out/result.json" --store "$work/history.sqlite" \
        --metric "$metric" --fail-on-regression 2> "$out.check.stderr")
    code=$?
    set -e
    mark=""
    if [ "$index" = "$slow" ]; then mark=" <- +$delay ms"; fi
    echo "#$index ${sha:0:12} exit $code: $line$mark"
    index=$((index + 1))
done
echo "load after: $(cut -d' ' -f1 /proc/loadavg); $(( $(date +%s) - started )) s; work: $work"
