#!/usr/bin/env bash
# THE test command (CI runs it through .ci/run):
#   1. scripts/install-deps.sh   (z3, cvc5, yices, redis-server, only when missing)
#   2. cargo test --release --no-run   (the binary and the tests, built once: a plain `cargo build`
#                                 would build the library with other dependency features, since
#                                 dev-dependencies turn features on, and cargo test would build it again)
#   3. cargo test --release      (unit + integration tests; integration tests spawn the real binary,
#                                 real solvers and their own redis-server)
#   4. extra checks              (see the marked section below)
# Exits non-zero if anything fails. Last line: "N passed, M failed" summed over cargo's test result lines.
# Extra arguments are passed to `cargo test` (e.g. a test name filter).
set -euo pipefail

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"

step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
failures=()

step "install dependencies"
bash scripts/install-deps.sh

step "cargo test --release --no-run (build)"
cargo test --release --no-run

step "cargo test --release"
test_log=$(mktemp "${TMPDIR:-/tmp}/smtproxy-test.XXXXXX")
trap 'rm -f "$test_log"' EXIT
set +e
cargo test --release --no-fail-fast "$@" 2>&1 | tee "$test_log"
cargo_rc=${PIPESTATUS[0]}
set -e
if [ "$cargo_rc" -ne 0 ]; then
    failures+=("cargo test (exit $cargo_rc)")
fi
# "test result: ok. 12 passed; 0 failed; 1 ignored; ..." or "test result: FAILED. 3 passed; 1 failed; ..."
read -r n_passed n_failed < <(
    sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed; \([0-9]*\) failed;.*/\1 \2/p' "$test_log" \
        | awk '{p += $1; f += $2} END {print p + 0, f + 0}'
)

# ---------------------------------------------------------------------------------------------------
# EXTRA CHECKS: add project checks here, one `check NAME COMMAND...` line each. Every check runs even
# if an earlier one failed; any failure makes test.sh exit non-zero. Each counts as one test in the
# final "N passed, M failed" line.
check() {
    local name=$1
    shift
    step "check: $name"
    if "$@"; then
        n_passed=$((n_passed + 1))
    else
        failures+=("check: $name")
        n_failed=$((n_failed + 1))
    fi
}

check "layering: no module of src/ imports one that imports it back" python3 scripts/check-imports.py
check "hand-written corpus: z3/cvc5 statuses and z3 golden outputs" python3 scripts/check-hand-corpus.py
check "pySMT test suite: same results through smtproxy (hybrid, stack) as with z3" bash scripts/test-pysmt.sh
check "Manticore 0.3.7 solver tests: same results through smtproxy (hybrid, stack) as with z3 and yices" bash scripts/test-manticore.sh
check "Manticore 0.3.7 on a native program: the same test cases through smtproxy as through z3" bash scripts/test-manticore-native.sh
check "easy-smt 0.3.2's tests and examples: same results through smtproxy (hybrid, stack) as with z3 and cvc5" bash scripts/test-easy-smt.sh
# check "example" bash scripts/some-check.sh
# --- end of extra checks ----------------------------------------------------------------------------

echo
if [ ${#failures[@]} -gt 0 ]; then
    echo "FAILED: ${failures[*]}"
fi
echo "test.sh took $((SECONDS / 60))m$((SECONDS % 60))s"
echo "$n_passed passed, $n_failed failed"
[ ${#failures[@]} -eq 0 ]
