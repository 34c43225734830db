#!/usr/bin/env bash
# How often does `clibench ab` cry wolf, and does it catch a real regression?
#
#   scripts/ab-accuracy.sh [aa|ab|hog|cpuhog|auto|all]
#
#   aa   A/A: `clibench ab` of the demo against itself, REPS times; every "regressed" or
#        "improved" verdict is a false one.
#   ab   A/B: head has a STARTUP_DELAY_MS ms start-up delay (DEMO_AGENT_STARTUP_DELAY_MS),
#        REPS times; cold and warm should regress, no memory metric should.
#   hog  A/A with a CPU hog (one busy loop per core) started halfway through the trials,
#        interleaved (ABBA) and --sequential, REPS times each: false verdicts of each.
#   cpuhog  the A/B case (head delayed by STARTUP_DELAY_MS) with one busy loop on one core
#        (`nice -n 0 sh -c 'while :; do :; done'`) for the whole run, REPS times: whether cold
#        and cold_cpu regressed (decisions per prefix of pairs: scripts/verdict-trials.py).
#   auto `--trials auto` (MAX_TRIALS pairs at most), A/A and A/B, REPS times each: false
#        verdicts, cold found, and how many pairs each run needed.
#
# Settings (environment): CLIBENCH (default target/release/clibench), REPS (10), TRIALS
# (5 a side), PHASES (prepare,install,measure), STARTUP_DELAY_MS (300), WORK (a temp dir),
# HOG_AFTER (seconds after the first measure trial starts; default: measured from an A/A),
# DELAY_PERCENT (when set, STARTUP_DELAY_MS is this percent of the cold median of an A/A
# probe: DELAY_PERCENT=10 is the +10% case), MAX_TRIALS (20, for auto), REGRESSION (sleep:
# head waits STARTUP_DELAY_MS before drawing, DEMO_AGENT_STARTUP_DELAY_MS; work: it computes
# for that many ms of CPU, DEMO_AGENT_STARTUP_WORK_MS, which cold_cpu sees too), INSTALLS
# (1: `--installs N` a side, which the trials then take in turn).
#
# Prints one line per repetition and a summary per experiment; every run's folder is kept
# under WORK for inspection. Timing numbers depend on the machine and its neighbours.
set -euo pipefail

CLIBENCH=${CLIBENCH:-target/release/clibench}
REPS=${REPS:-10}
TRIALS=${TRIALS:-5}
PHASES=${PHASES:-prepare,install,measure}
STARTUP_DELAY_MS=${STARTUP_DELAY_MS:-300}
DELAY_PERCENT=${DELAY_PERCENT:-}
MAX_TRIALS=${MAX_TRIALS:-20}
REGRESSION=${REGRESSION:-sleep}
INSTALLS=${INSTALLS:-1}
case $REGRESSION in
    sleep) KNOB=DEMO_AGENT_STARTUP_DELAY_MS ;;
    work) KNOB=DEMO_AGENT_STARTUP_WORK_MS ;;
    *) echo "REGRESSION is sleep or work, not $REGRESSION" >&2; exit 2 ;;
esac
WORK=${WORK:-$(mktemp -d /tmp/ab-accuracy.XXXXXX)}
MODE=${1:-all}

[ -x "$CLIBENCH" ] || { echo "build it first: cargo build --release (looked for $CLIBENCH)" >&2; exit 2; }
mkdir -p "$WORK"
echo "# clibench ab accuracy: $REPS repetitions, $TRIALS trials a side, $INSTALLS installs a side, phases $PHASES" >&2
echo "# work folder: $WORK; load now: $(cut -d' ' -f1-3 /proc/loadavg); cores: $(nproc)" >&2

# verdicts OUT: "metric verdict" per line from OUT/comparison.json.
verdicts() {
    python3 - "$1/comparison.json" <<'PY'
import json, sys
def number(value):
    return "inf" if value is None else f"{value:.3f}"
for row in json.load(open(sys.argv[1]))["metrics"]:
    print(row["metric"], row["verdict"], number(row["ratio"]), number(row["ci_low"]),
          number(row["ci_high"]), "detect=" + number(row.get("detectable")))
PY
}

# run_ab OUT [ARGS...]: one `clibench ab` of the demo; a failed trial is reported, not fatal.
run_ab() {
    local out=$1
    shift
    rm -rf "$out"
    "$CLIBENCH" ab --trials "$TRIALS" --installs "$INSTALLS" --phases "$PHASES" --out "$out" "$@" \
        >"$out.md" 2>"$out.log" || echo "  (clibench ab exited $?; see $out.log)" >&2
}

# summary NAME FILE: counts of each verdict per metric over the repetitions.
summary() {
    echo "## $1: verdicts per metric over $REPS repetitions"
    awk '{count[$1" "$2]++} END {for (k in count) print "  " k ": " count[k]}' "$2" | sort
}

aa() {
    local all=$WORK/aa.verdicts
    : >"$all"
    for rep in $(seq 1 "$REPS"); do
        run_ab "$WORK/aa-$rep"
        verdicts "$WORK/aa-$rep" | tee -a "$all" | awk -v rep="$rep" '
            $2 == "regressed" || $2 == "improved" {bad = bad " " $1 "(" $2 ")"}
            END {print "aa " rep ": " (bad == "" ? "no false verdict" : "FALSE:" bad)}'
    done
    summary "A/A" "$all"
    echo "A/A repetitions with no regression on any metric: $(for rep in $(seq 1 "$REPS"); do
        verdicts "$WORK/aa-$rep" | grep -q ' regressed ' || echo ok; done | wc -l) of $REPS"
}

ab() {
    local all=$WORK/ab.verdicts
    : >"$all"
    for rep in $(seq 1 "$REPS"); do
        run_ab "$WORK/ab-$rep" --head "measure.env.$KNOB=$STARTUP_DELAY_MS"
        verdicts "$WORK/ab-$rep" | tee -a "$all" | awk -v rep="$rep" '
            {v[$1] = $2 " " $3}
            END {print "ab " rep ": cold " v["cold"] ", warm " v["warm"] ", rss " v["rss"] ", pss " v["pss"]}'
    done
    summary "A/B (+$STARTUP_DELAY_MS ms)" "$all"
    echo "cold regressed in $(grep -c '^cold regressed' "$all" || true) of $REPS;" \
        "warm regressed in $(grep -c '^warm regressed' "$all" || true) of $REPS;" \
        "memory metrics regressed: $(grep -Ec '^(rss|pss|uss|marginal_pss|marginal_rss)[a-z_]* regressed' "$all" || true)"
}

# hog_run OUT DELAY [ARGS...]: an A/A whose second half runs next to a busy loop per core.
hog_run() {
    local out=$1 delay=$2
    shift 2
    rm -rf "$out" "$out.hog"
    (
        # Wait until the first measure trial starts, then HOG_AFTER more seconds.
        until ls "$out"/base/logs/phase-measure-0.log >/dev/null 2>&1; do sleep 0.2; done
        sleep "$delay"
        for _ in $(seq 1 "$(nproc)"); do
            (while :; do :; done) &
            echo "$!" >>"$out.hog"
        done
        wait
    ) &
    local starter=$!
    run_ab "$out" "$@"
    # Stop the hogs this experiment started, by their recorded pids.
    kill "$starter" 2>/dev/null || true
    wait "$starter" 2>/dev/null || true
    if [ -f "$out.hog" ]; then kill $(cat "$out.hog") 2>/dev/null || true; fi
}

hog() {
    local after=${HOG_AFTER:-}
    if [ -z "$after" ]; then
        # Half of the measure trials' span of an A/A without a hog.
        run_ab "$WORK/hog-probe"
        after=$(python3 - "$WORK/hog-probe" <<'PY'
import json, sys
starts = []
for side in ("base", "head"):
    result = json.load(open(f"{sys.argv[1]}/{side}/result.json"))
    starts += [t["started_unix_ms"] for t in result["side"].get("trials", []) if t["phase"] == "measure"]
print(round((max(starts) - min(starts)) / 2000.0, 1))
PY
)
    fi
    echo "# hog starts ${after}s after the first measure trial" >&2
    for mode in interleaved sequential; do
        local all=$WORK/hog-$mode.verdicts
        : >"$all"
        for rep in $(seq 1 "$REPS"); do
            if [ "$mode" = sequential ]; then
                hog_run "$WORK/hog-$mode-$rep" "$after" --sequential
            else
                hog_run "$WORK/hog-$mode-$rep" "$after"
            fi
            verdicts "$WORK/hog-$mode-$rep" | tee -a "$all" | awk -v rep="$rep" -v mode="$mode" '
                $2 == "regressed" || $2 == "improved" {bad = bad " " $1 "(" $2 ", x" $3 ")"}
                END {print "hog " mode " " rep ": " (bad == "" ? "no false verdict" : "FALSE:" bad)}'
        done
        summary "A/A with a CPU hog, $mode" "$all"
        echo "false verdicts ($mode): $(grep -Ec ' (regressed|improved) ' "$all" || true)" \
            "in $(for rep in $(seq 1 "$REPS"); do verdicts "$WORK/hog-$mode-$rep" |
                grep -Eq ' (regressed|improved) ' && echo bad; done | wc -l) of $REPS repetitions"
    done
}

# delay_from_percent: sets STARTUP_DELAY_MS to DELAY_PERCENT % of the demo's cold median.
delay_from_percent() {
    [ -n "$DELAY_PERCENT" ] || return 0
    [ -d "$WORK/delay-probe" ] || run_ab "$WORK/delay-probe"
    STARTUP_DELAY_MS=$(python3 - "$WORK/delay-probe" "$DELAY_PERCENT" <<'PY'
import json, statistics, sys
result = json.load(open(f"{sys.argv[1]}/base/result.json"))
cold = [s["value"] for s in result["side"]["metrics"]["cold"] if s.get("value") is not None]
print(round(statistics.median(cold) * 1000 * float(sys.argv[2]) / 100))
PY
)
    echo "# +$DELAY_PERCENT% of the cold median: STARTUP_DELAY_MS=$STARTUP_DELAY_MS" >&2
}

# pairs OUT: the pairs a --trials auto run used, from its stderr.
pairs() {
    grep -o 'stopped ([a-z]*) after [a-z]* [0-9]*' "$1.log" | awk '{print $2, $5}' | tr -d '()'
}

auto() {
    # A/A and A/B alternate, so that both see the same stretch of the machine's drift.
    : >"$WORK/auto-aa.verdicts"
    : >"$WORK/auto-ab.verdicts"
    for rep in $(seq 1 "$REPS"); do
        for kind in aa ab; do
            local out=$WORK/auto-$kind-$rep
            if [ "$kind" = ab ]; then
                TRIALS=auto run_ab "$out" --max-trials "$MAX_TRIALS" \
                    --head "measure.env.$KNOB=$STARTUP_DELAY_MS"
            else
                TRIALS=auto run_ab "$out" --max-trials "$MAX_TRIALS"
            fi
            verdicts "$out" | tee -a "$WORK/auto-$kind.verdicts" | awk -v rep="$rep" -v kind="$kind" -v pairs="$(pairs "$out")" '
                $2 == "regressed" || $2 == "improved" {v = v " " $1 "(" $2 ")"}
                END {print "auto " kind " " rep ": " pairs " pairs;" (v == "" ? " no verdict" : v)}'
        done
    done
    summary "--trials auto, aa" "$WORK/auto-aa.verdicts"
    summary "--trials auto, ab" "$WORK/auto-ab.verdicts"
}

# cpuhog: the A/B case next to one busy loop (one core of the machine taken).
cpuhog() {
    local all=$WORK/cpuhog.verdicts
    : >"$all"
    for rep in $(seq 1 "$REPS"); do
        local out=$WORK/cpuhog-$rep
        nice -n 0 sh -c 'while :; do :; done' &
        local hog=$!
        run_ab "$out" --head "measure.env.$KNOB=$STARTUP_DELAY_MS"
        # Stop the hog this experiment started, by its pid.
        kill "$hog" 2>/dev/null || true
        wait "$hog" 2>/dev/null || true
        verdicts "$out" | tee -a "$all" | awk -v rep="$rep" '
            {v[$1] = $2 " " $3}
            END {print "cpuhog " rep ": cold " v["cold"] ", cold_cpu " v["cold_cpu"] ", warm " v["warm"] ", warm_cpu " v["warm_cpu"]}'
    done
    summary "A/B (+$STARTUP_DELAY_MS ms) with a CPU hog on one core" "$all"
}

delay_from_percent

case $MODE in
    aa) aa ;;
    ab) ab ;;
    hog) hog ;;
    auto) auto ;;
    cpuhog) cpuhog ;;
    all) aa; ab; hog; auto ;;
    *) echo "usage: $0 [aa|ab|hog|cpuhog|auto|all]" >&2; exit 2 ;;
esac
