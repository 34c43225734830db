#!/usr/bin/env bash
# Runs the README's test command N times in a row on a fresh clone of a commit, the way a
# user's machine has it (only cargo's and the system's folders on PATH, `CI=true`, so a
# skipped test fails), and prints one line per run: its exit code, wall time, test count,
# failed tests and the load average at its start. What issue 48's "ten consecutive green
# runs from a fresh clone" is checked with.
#
#   scripts/green-runs.sh [N] [COMMIT]        (default: 10 runs of HEAD)
#
# Settings (environment): WORK (default: a temp dir; the clone and every run's log stay
# there). The first run builds the workspace from nothing, so it takes longest.
set -euo pipefail

RUNS=${1:-10}
COMMIT=$(git rev-parse "${2:-HEAD}")
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"
CLONE="$WORK/clone"

git clone --quiet "$(git rev-parse --show-toplevel)" "$CLONE"
git -C "$CLONE" checkout --quiet "$COMMIT"
echo "green-runs: $RUNS run(s) of cargo test --workspace at ${COMMIT:0:7} in $CLONE"

green=0
streak=0
for run in $(seq 1 "$RUNS"); do
    log="$WORK/run-$run.log"
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    start=$(date +%s)
    code=0
    (cd "$CLONE" && env -i HOME="$HOME" PATH="$HOME/.cargo/bin:/usr/bin:/bin" CI=true \
        cargo test --workspace --no-fail-fast) >"$log" 2>&1 || code=$?
    seconds=$(($(date +%s) - start))
    passed=$(grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}' || true)
    failed=$(grep -oE '^test [^ ]+ \.\.\. FAILED' "$log" | awk '{print $2}' | sort -u | paste -sd, - || true)
    if [ "$code" -eq 0 ]; then
        green=$((green + 1))
        streak=$((streak + 1))
    else
        streak=0
    fi
    printf 'run %2d: exit %d, %4d s, %5d passed, load %s%s\n' "$run" "$code" "$seconds" \
        "$passed" "$load" "${failed:+, failed: $failed}"
done
echo "green-runs: $green of $RUNS green; the last $streak in a row (logs: $WORK)"
