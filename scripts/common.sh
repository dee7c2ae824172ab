# shellcheck shell=bash
# Shared helpers for the scripts in this directory. Source it; do not run it.

# Make solver binaries installed by pip visible: the interpreter's scripts dir
# (system / venv / pyenv installs) and the user base bin dir (pip --user).
smtproxy_path_setup() {
    local d
    if command -v python3 >/dev/null 2>&1; then
        for d in "$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)" \
                 "$(python3 -m site --user-base 2>/dev/null || true)/bin"; do
            if [ -n "$d" ] && [ "$d" != "/bin" ] && [ -d "$d" ]; then
                case ":$PATH:" in
                    *":$d:"*) ;;
                    *) PATH="$PATH:$d" ;;
                esac
            fi
        done
    fi
    export PATH
}

# cd to the repository root (the parent of scripts/).
smtproxy_cd_root() {
    cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
}

# Where scripts keep tools they install for the client checks (outside the repository, kept across
# runs): $SMTPROXY_TOOLS_DIR, by default ~/.cache/smtproxy-tools.
smtproxy_tools_dir() {
    echo "${SMTPROXY_TOOLS_DIR:-$HOME/.cache/smtproxy-tools}"
}

# The Python 3.9 venv holding manticore==0.3.7 and pytest (made by install-deps.sh, used by
# test-manticore.sh).
smtproxy_manticore_venv() {
    echo "$(smtproxy_tools_dir)/manticore-venv"
}

# Manticore 0.3.7 needs glibc's restartable sequences off on this machine; export before running it.
smtproxy_manticore_env() {
    export GLIBC_TUNABLES=glibc.pthread.rseq=0
}

# The smtproxy binary the client checks run: $SMTPROXY_BIN, else the release build (built if missing).
smtproxy_bin() {
    local bin=${SMTPROXY_BIN:-${CARGO_TARGET_DIR:-$(pwd)/target}/release/smtproxy}
    [ -x "$bin" ] || cargo build --release --quiet >&2
    echo "$bin"
}

# The real solver binary behind NAME on PATH (through pyenv's shims), never the smtproxy binary BIN
# placed under that name. Fails with a message naming CALLER otherwise.
smtproxy_real_solver() {
    local name=$1 bin=$2 caller=$3 p
    p=$(command -v "$name") || { echo "$caller: $name not found (run scripts/install-deps.sh)" >&2; return 1; }
    case "$p" in
        */shims/*) p=$(pyenv which "$name") ;;
    esac
    if [ "$(readlink -f "$p")" = "$(readlink -f "$bin")" ]; then
        echo "$caller: $p is smtproxy; put the real $name first on PATH" >&2
        return 1
    fi
    echo "$p"
}

# Put a solver named NAME into the directory DIR (a PATH entry): the REAL solver itself when
# STRATEGY is "-", else smtproxy BIN in front of it (`--solver REAL --strategy STRATEGY
# --cache none`, the client's own arguments after them).
smtproxy_place_solver() {
    local dir=$1 name=$2 real=$3 strategy=$4 bin=$5
    mkdir -p "$dir"
    if [ "$strategy" = - ]; then
        ln -s "$real" "$dir/$name"
    else
        printf '#!/usr/bin/env bash\nexec %q --solver %q --strategy %q --cache none "$@"\n' \
            "$bin" "$real" "$strategy" >"$dir/$name"
        chmod +x "$dir/$name"
    fi
}

# The pySMT test modules that use a solver, as paths under pySMT's site-packages directory
# (scripts/test-pysmt.sh runs them; scripts/record-pysmt.sh records their sessions).
smtproxy_pysmt_modules() {
    local m
    for m in smtlib/test_generic_wrapper.py test_solving.py test_bv.py test_int.py test_euf.py \
        test_lira.py test_array.py test_models.py test_eager_model.py test_regressions.py \
        test_nia.py test_nlira.py test_cnf.py test_sorts.py smtlib/test_model_validation.py \
        test_qe.py test_string.py test_back.py; do
        echo "pysmt/test/$m"
    done
}
