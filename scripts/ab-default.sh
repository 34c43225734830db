#!/usr/bin/env bash
# What `clibench ab` with no trial flag decides on the demo (docs/verdicts.md, "What the
# default decided here"): one line per command, with its exit code, wall time and the load
# average at its start.
#
#   scripts/ab-default.sh [delay|trials|aa|work|all]
#
#   delay   the README's line: head waits 300 ms before drawing, `--fail-on-regression`.
#   trials  the same with `--trials 3`, `5` and `10`.
#   aa      A/A with `--fail-on-regression`, REPS times: any verdict is a false one.
#   work    head computes 5 ms of CPU at start-up (DEMO_AGENT_STARTUP_WORK_MS=5), REPS
#           times, each right after a `clibench run` of the demo, whose cold median the
#           line gives beside ab's cold row (base alone, change).
#
# Settings (environment): CLIBENCH (default target/release/clibench), REPS (3), WORK (a temp
# dir; every run's folder is kept there).
set -euo pipefail

CLIBENCH=${CLIBENCH:-target/release/clibench}
CLIBENCH=$(realpath "$CLIBENCH")
REPS=${REPS:-3}
WORK=${WORK:-$(mktemp -d)}
mkdir -p "$WORK"

# Runs `clibench ARGS...` in its own folder NAME under WORK; prints one line.
measure() {
    local name=$1
    shift
    local folder="$WORK/$name" load start end code=0
    mkdir -p "$folder"
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    (cd "$folder" && "$CLIBENCH" "$@" >stdout.txt 2>stderr.txt) || code=$?
    end=$(date +%s.%N)
    local row=""
    if grep -q '^cold ' "$folder/stderr.txt"; then
        row=$(grep -E '^cold ' "$folder/stderr.txt" | tr -s ' ')
    elif grep -qE '^ +cold ' "$folder/stderr.txt"; then
        row="cold median $(grep -E '^ +cold ' "$folder/stderr.txt" | tr -s ' ' | cut -d' ' -f3-4)"
    fi
    local stop
    stop=$(grep -o 'stopped ([a-z]*) after [^;]*' "$folder/stderr.txt" | head -1 || true)
    local verdicts
    verdicts=$(grep -oE '^[0-9]+ regressed, [0-9]+ improved' "$folder/stderr.txt" | head -1 || true)
    printf '%s\texit %s\t%.1f s\tload %s\t%s\t%s\t%s\n' \
        "$name" "$code" "$(echo "$end - $start" | bc)" "$load" "$verdicts" "$row" "$stop"
}

delay() {
    measure delay ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300 --fail-on-regression
}

trials() {
    for n in 3 5 10; do
        measure "delay-trials-$n" ab --head measure.env.DEMO_AGENT_STARTUP_DELAY_MS=300 \
            --fail-on-regression --trials "$n"
    done
}

aa() {
    for rep in $(seq 1 "$REPS"); do
        measure "aa-$rep" ab --fail-on-regression
    done
}

work() {
    for rep in $(seq 1 "$REPS"); do
        measure "run-$rep" run
        measure "work-$rep" ab --head measure.env.DEMO_AGENT_STARTUP_WORK_MS=5
    done
}

case "${1:-all}" in
    delay) delay ;;
    trials) trials ;;
    aa) aa ;;
    work) work ;;
    all) delay; trials; aa; work ;;
    *) echo "usage: $0 [delay|trials|aa|work|all]" >&2; exit 2 ;;
esac
echo "runs kept in $WORK" >&2
