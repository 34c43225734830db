#!/usr/bin/env bash
# Does `clibench bisect` find the commit that made the demo agent worse, and what does it
# cost? (issue 34's numbers on the demo)
#
#   scripts/bisect-demo.sh delay|leak [BISECT FLAGS...]
#
#   delay  16 commits of the demo agent (#0 good, #15 bad) where commit #11 makes every
#          start DELAY_MS (30) ms slower (the default of DEMO_AGENT_STARTUP_DELAY_MS);
#          bisect follows METRIC (cold).
#   leak   the same, where commit #11 keeps LEAK_BYTES (1 MiB) more memory after every chat
#          turn (the default of DEMO_AGENT_LEAK_BYTES_PER_TURN); bisect follows METRIC
#          (session_growth, the per-turn slope of the session's memory).
#
# Every other commit only adds a line to the agent's README. Flags after the kind go to
# `clibench bisect` (`--trials 10 --max-trials 40 --budget 40m`). Settings (environment):
# CLIBENCH (default: clibench on PATH), WORK (a new temp dir), DELAY_MS, LEAK_BYTES, METRIC.
# Prints bisect's own lines, then whether it named #11, the builds it measured and the time,
# and the 1-minute load average before and after (timings depend on the machine's
# neighbours). Everything is kept under WORK, with the history store, for a second run:
# `scripts/bisect-demo.sh` with the same WORK measures nothing new.
set -euo pipefail

kind=${1:?usage: scripts/bisect-demo.sh delay|leak [BISECT FLAGS...]}
shift
clibench=${CLIBENCH:-clibench}
work=${WORK:-$(mktemp -d /tmp/bisect-demo.XXXXXX)}
mkdir -p "$work"
case $kind in
    delay) metric=${METRIC:-cold} ;;
    leak) metric=${METRIC:-session_growth} ;;
    *) echo "unknown kind '$kind': delay or leak" >&2; exit 2 ;;
esac

git_() { git -C "$source" -c user.name=bisect-demo -c user.email=bisect-demo@localhost "$@"; }

if [ ! -f "$work/spec.path" ]; then
    "$clibench" run --write-demo "$work/demo" > "$work/spec.path"
    spec=$(cat "$work/spec.path")
    source=$(dirname "$spec")/source
    agent=$source/demo_agent.py
    for step in $(seq 1 15); do
        if [ "$step" = 11 ]; then
            case $kind in
                delay)
                    # The knob's default, not the environment: the slowdown lives in the code.
                    from='os.environ.get("DEMO_AGENT_STARTUP_DELAY_MS", "").strip() or "0"'
                    to="os.environ.get(\"DEMO_AGENT_STARTUP_DELAY_MS\", \"\").strip() or \"${DELAY_MS:-30}\""
                    ;;
                leak)
                    from='leak_bytes = millis_knob("DEMO_AGENT_LEAK_BYTES_PER_TURN")'
                    to="leak_bytes = millis_knob(\"DEMO_AGENT_LEAK_BYTES_PER_TURN\") if os.environ.get(\"DEMO_AGENT_LEAK_BYTES_PER_TURN\") else ${LEAK_BYTES:-1048576}"
                    ;;
            esac
            FROM=$from TO=$to python3 - "$agent" <<'EOF'
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
fi
spec=$(cat "$work/spec.path")
source=$(dirname "$spec")/source
expected=$(git_ rev-parse HEAD~4)
runs=$(find "$work" -maxdepth 1 -type d -name 'bisect-*' | wc -l)
out=$work/bisect-$((runs + 1))

echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
started=$(date +%s.%N)
set +e
"$clibench" bisect "$spec" --good HEAD~15 --bad HEAD --metric "$metric" \
    --repository "$source" --out "$out" --history "$work/history.sqlite" "$@" \
    > "$out.stdout" 2> "$out.stderr"
code=$?
set -e
ended=$(date +%s.%N)
echo "load after: $(cut -d' ' -f1 /proc/loadavg)"
grep -E '^clibench bisect: step [0-9]+: [a-z_]+ [+-]' "$out.stderr" || true
cat "$out.stdout"
echo "exit $code; wall time $(python3 -c "print(round($ended - $started))") s; ab runs: $(grep -c ' pairs, in ' "$out.stderr" || true)"
if grep -q "^first bad commit: $expected (#11)" "$out.stdout"; then
    echo "named commit #11: yes"
else
    echo "named commit #11: no (#11 is $expected)"
fi
echo "kept in $work"
