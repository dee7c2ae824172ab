#!/usr/bin/env bash
# The main job: install the solvers if missing, build, replay the shipped corpus under every strategy
# (`smtproxy bench`) and print the strategy table.
#
#   bash scripts/run-corpus.sh                          all strategies on the default corpus, 3 rounds each
#   bash scripts/run-corpus.sh --rounds 1               one run each (quicker, noisier)
#   bash scripts/run-corpus.sh --strategies fresh,hybrid --json bench.json
#   bash scripts/run-corpus.sh smt2-corpus/klee/sort/*.smt2.gz     your own corpus instead
#
# Options (anything starting with '-') are passed to `smtproxy bench`; if any non-option argument is
# given, those files replace the default corpus.
set -euo pipefail

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
smtproxy_cd_root
smtproxy_path_setup

# bench options that take a value as the next argument (DESIGN.md command line contract)
takes_value() {
    case "$1" in
        --strategies|--json|--plot|--solver|--strategy|--cache|--cache-mem|--timeout-ms|--jobs|--rounds) return 0 ;;
        *) return 1 ;;
    esac
}

opts=()
corpus=()
full=0
while [ $# -gt 0 ]; do
    case "$1" in
        --) shift; corpus+=("$@"); break ;;
        --full) full=1 ;;
        -*)
            opts+=("$1")
            if takes_value "$1" && [ $# -ge 2 ]; then
                opts+=("$2")
                shift
            fi
            ;;
        *) corpus+=("$1") ;;
    esac
    shift
done

if [ ${#corpus[@]} -eq 0 ]; then
    shopt -s nullglob
    corpus=(
        smt2-corpus/klee/*/solver-queries.smt2.gz
        smt2-corpus/klee/*/all-queries.smt2.gz
    )
    if [ "$full" = 1 ]; then
        corpus+=(
            smt2-corpus/external/*.smt2.gz
            smt2-corpus/external/*.smt2
            smt2-corpus/external/*.kquery.gz
            smt2-corpus/sessions/*.smt2.gz
        )
    fi
    shopt -u nullglob
    if [ ${#corpus[@]} -eq 0 ]; then
        echo "run-corpus.sh: no corpus files under smt2-corpus/" >&2
        exit 1
    fi
fi

bash scripts/install-deps.sh --solvers-only
cargo build --release --quiet

# --full: three interleaved runs per strategy and the median of each (`--rounds`), since a single
# run moves by 2x on a busy 2-core machine. The default is one run: a quick, noisier table.
have_rounds=0
for o in "${opts[@]+"${opts[@]}"}"; do
    case "$o" in --rounds|--rounds=*) have_rounds=1 ;; esac
done
if [ "$have_rounds" = 0 ]; then
    if [ "$full" = 1 ]; then opts+=(--rounds 3); else opts+=(--rounds 1); fi
fi

what="shipped KLEE logs"
[ "$full" = 1 ] && what="KLEE logs, external corpus and recorded client sessions"
echo "==> smtproxy bench ${opts[*]} over ${#corpus[@]} logs ($what)" >&2
exec target/release/smtproxy bench "${opts[@]}" "${corpus[@]}"
