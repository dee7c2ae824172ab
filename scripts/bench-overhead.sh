#!/usr/bin/env bash
# Passthrough overhead: wall time of `smtproxy --strategy passthrough` against piping the same
# stream straight into z3 (DESIGN.md "Corpus formats": the log with every `(exit)` line replaced by
# `(reset)`, exactly as scripts/z3-direct.sh feeds it). Target: ratio <= 1.05.
#
#   bash scripts/bench-overhead.sh [--runs N] [--build] LOG [LOG...]     LOG may be .smt2 or .smt2.gz
#
#   (a) $Z3 -in < stream
#   (b) $SMTPROXY --strategy passthrough --solver $Z3 --cache none < stream
#
# Both use the same z3 binary: $Z3, default the real binary behind the pyenv shim (`pyenv which z3`),
# else z3 on PATH resolved through symlinks. $SMTPROXY defaults to target/release/smtproxy under
# $CARGO_TARGET_DIR (or ./target); --build (or a missing binary) runs `cargo build --release` first.
# Timing: hyperfine (1 warm-up run, N runs, failures ignored: z3 exits 1 on the (error ...) that
# KLEE's get-value after unsat causes) when installed, else a bash loop of N alternating runs.
# Reported: the median of each, and the ratio b/a. Outputs go to /dev/null.
set -euo pipefail

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_path_setup
smtproxy_cd_root

runs=${RUNS:-5}
build=0
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift 2 ;;
        --build) build=1; shift ;;
        --) shift; break ;;
        -*) echo "bench-overhead.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ $# -eq 0 ]; then
    echo "usage: bench-overhead.sh [--runs N] [--build] LOG [LOG...]" >&2
    exit 2
fi

# The z3 binary, the same for (a) and (b).
if [ -z "${Z3:-}" ]; then
    Z3=$(command -v z3 || true)
    if [ -n "$Z3" ] && [[ "$Z3" == */shims/* ]] && command -v pyenv >/dev/null 2>&1; then
        Z3=$(pyenv which z3 2>/dev/null || echo "$Z3")
    fi
    [ -n "$Z3" ] && Z3=$(readlink -f "$Z3")
fi
[ -n "${Z3:-}" ] && [ -x "$Z3" ] || { echo "bench-overhead.sh: z3 not found (bash scripts/install-deps.sh --solvers-only)" >&2; exit 1; }

target=${CARGO_TARGET_DIR:-$PWD/target}
SMTPROXY=${SMTPROXY:-$target/release/smtproxy}
if [ "$build" = 1 ] || [ ! -x "$SMTPROXY" ]; then
    cargo build --release --bin smtproxy >&2
fi
[ -x "$SMTPROXY" ] || { echo "bench-overhead.sh: $SMTPROXY not found" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_hyperfine=0
if [ -z "${NO_HYPERFINE:-}" ] && command -v hyperfine >/dev/null 2>&1; then
    have_hyperfine=1
fi

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# Seconds of one run of "$@" with stdin from $stream.
time_once() {
    local s e
    s=$(date +%s.%N)
    "$@" < "$stream" > /dev/null 2>&1 || true
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN {printf "%.6f\n", e - s}'
}

echo "z3:       $Z3"
echo "smtproxy: $SMTPROXY"
echo "timing:   $([ $have_hyperfine = 1 ] && echo "hyperfine, 1 warm-up + $runs runs" || echo "bash loop, $runs alternating runs"), median"
echo
printf '%-52s %10s %10s %8s %8s\n' "log" "z3 (s)" "proxy (s)" "ratio" "over %"
worst=0
for log in "$@"; do
    [ -r "$log" ] || { echo "bench-overhead.sh: cannot read $log" >&2; exit 1; }
    stream=$tmp/stream.smt2
    case "$log" in
        *.gz) gzip -dc -- "$log" ;;
        *) cat -- "$log" ;;
    esac | sed -E 's/^[[:space:]]*\(exit\)[[:space:]]*$/(reset)/' > "$stream"
    a_cmd=("$Z3" -in)
    b_cmd=("$SMTPROXY" --strategy passthrough --solver "$Z3" --cache none)
    if [ $have_hyperfine = 1 ]; then
        if hyperfine --help 2>/dev/null | grep -q -- '--input'; then
            hyperfine -N -i -w 1 -r "$runs" --input "$stream" --export-json "$tmp/h.json" \
                "${a_cmd[*]}" "${b_cmd[*]}" > "$tmp/h.out" 2>&1 || { cat "$tmp/h.out" >&2; exit 1; }
        else
            # hyperfine < 1.16 has no --input: redirect through its shell (whose start-up it subtracts).
            hyperfine -i -w 1 -r "$runs" --export-json "$tmp/h.json" \
                "${a_cmd[*]} < $stream" "${b_cmd[*]} < $stream" > "$tmp/h.out" 2>&1 || { cat "$tmp/h.out" >&2; exit 1; }
        fi
        read -r ta tb < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["median"], r[1]["median"])' "$tmp/h.json")
    else
        : > "$tmp/a"; : > "$tmp/b"
        for _ in $(seq "$runs"); do
            time_once "${a_cmd[@]}" >> "$tmp/a"
            time_once "${b_cmd[@]}" >> "$tmp/b"
        done
        ta=$(median < "$tmp/a"); tb=$(median < "$tmp/b")
    fi
    read -r ratio over < <(awk -v a="$ta" -v b="$tb" 'BEGIN {printf "%.3f %+.1f\n", b / a, (b / a - 1) * 100}')
    printf '%-52s %10.3f %10.3f %8s %8s\n' "$log" "$ta" "$tb" "$ratio" "$over"
    worst=$(awk -v w="$worst" -v r="$ratio" 'BEGIN {print (r > w) ? r : w}')
done
echo
awk -v w="$worst" 'BEGIN {printf "worst ratio %.3f (target <= 1.050): %s\n", w, (w <= 1.05) ? "ok" : "OVER"}'
