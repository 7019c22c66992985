#!/usr/bin/env bash
# Set up hybridsim on a fresh Debian/Ubuntu machine: system BLAS/LAPACK for
# openseespy's wheel, a virtual environment in .venv, the package with its
# test extra. Safe to run again (it only installs what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

apt_install() {  # install Debian packages, refreshing the package lists only when that is needed
    apt-get install -y -q "$@" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; }
}

if ! ldconfig -p 2>/dev/null | grep -q 'libblas.so.3'; then
    if [ "$(id -u)" = 0 ]; then
        echo "bootstrap: installing libblas3 and liblapack3 (openseespy needs them)"
        apt_install libblas3 liblapack3
    else
        echo "bootstrap: libblas.so.3 is missing and this user is not root." >&2
        echo "bootstrap: ask an administrator to run: apt-get install libblas3 liblapack3" >&2
        exit 1
    fi
fi

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "bootstrap: installing chromium and chromium-driver (the monitor page's browser tests)"
        apt_install chromium chromium-driver
    else
        echo "bootstrap: no chromium/chromedriver: the monitor page's browser tests will be skipped" >&2
        echo "bootstrap: ask an administrator to run: apt-get install chromium chromium-driver" >&2
    fi
fi

if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null || ! command -v debootstrap >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        echo "bootstrap: installing docker.io, docker-compose and debootstrap (the container tests start a daemon of their own)"
        apt_install docker.io docker-compose debootstrap
    else
        echo "bootstrap: no dockerd/docker-compose/debootstrap: the container tests will be skipped" >&2
        echo "bootstrap: ask an administrator to run: apt-get install docker.io docker-compose debootstrap" >&2
    fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    if ! "$PYTHON" -m venv .venv >/dev/null 2>&1; then
        rm -rf .venv
        if [ "$(id -u)" = 0 ]; then
            echo "bootstrap: installing python3-venv"
            apt_install python3-venv
            "$PYTHON" -m venv .venv
        else
            echo "bootstrap: '$PYTHON -m venv' failed; ask an administrator to run: apt-get install python3-venv" >&2
            exit 1
        fi
    fi
fi
if ! .venv/bin/python -c 'import coordinator, hybridsim, pytest' >/dev/null 2>&1 \
   || [ pyproject.toml -nt .venv/.installed ]; then
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e '.[test]'
    touch .venv/.installed
fi
