#!/usr/bin/env bash
# Set up hybridsim on a fresh Debian/Ubuntu machine: system BLAS/LAPACK for openseespy's wheel, a virtual
# environment in .venv, the package with its test extra. Safe to run again (it only installs what is missing).
#
#   bash deploy/bootstrap.sh             what a run needs (the main job)
#   bash deploy/bootstrap.sh --test      and what the whole test suite needs: Debian's chromium and
#                                        chromium-driver (the monitor page's browser tests), docker.io,
#                                        docker-compose and debootstrap (the container tests)
#   bash deploy/bootstrap.sh --dry-run   print what it would run (apt-get lines, venv, pip), change nothing
#
# Another apt or dpkg job holding the package manager's lock (unattended upgrades, a second bootstrap) is
# waited for, up to BOOTSTRAP_APT_WAIT_S seconds (default 900), retrying every BOOTSTRAP_APT_RETRY_S (5).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

TEST=0
DRY_RUN=0
for option in "$@"; do
    case "$option" in
        --test) TEST=1 ;;
        --dry-run) DRY_RUN=1 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bootstrap: unknown option $option (give --test, --dry-run or nothing)" >&2; exit 2 ;;
    esac
done
APT_WAIT_S=${BOOTSTRAP_APT_WAIT_S:-900}
APT_RETRY_S=${BOOTSTRAP_APT_RETRY_S:-5}

run() {  # a command that changes the machine, or with --dry-run the line it would be
    if [ "$DRY_RUN" = 1 ]; then
        echo "bootstrap: would run: $*"
    else
        "$@"
    fi
}

apt_get() {  # apt-get "$@", waiting while another apt or dpkg job holds the package manager's lock (2: too long)
    if [ "$DRY_RUN" = 1 ]; then
        echo "bootstrap: would run: apt-get $*"
        return 0
    fi
    local log waited=0
    log=$(mktemp)
    until apt-get "$@" >"$log" 2>&1; do
        if ! grep -q -e 'Could not get lock' -e 'Unable to acquire the dpkg frontend lock' -e 'Unable to lock' "$log"; then
            cat "$log" >&2
            rm -f "$log"
            return 1
        fi
        if [ "$waited" = 0 ]; then
            echo "bootstrap: waiting for the package manager: another apt or dpkg job holds its lock" \
                 "($(grep -m1 -o 'held by process [0-9]*.*' "$log" || grep -m1 'lock' "$log"))" >&2
        fi
        if awk "BEGIN { exit !($waited >= $APT_WAIT_S) }"; then
            echo "bootstrap: the package manager stayed locked for ${APT_WAIT_S} s; let the other job finish" \
                 "(or set BOOTSTRAP_APT_WAIT_S) and run bootstrap again" >&2
            rm -f "$log"
            return 2
        fi
        sleep "$APT_RETRY_S"
        waited=$(awk "BEGIN { print $waited + $APT_RETRY_S }")
    done
    rm -f "$log"
}

apt_install() {  # install Debian packages, refreshing the package lists only when that is needed
    local status=0
    apt_get install -y -q "$@" || status=$?
    case $status in
        0) ;;
        1) apt_get update -q && apt_get install -y -q "$@" ;;
        *) return 1 ;;  # the package manager stayed locked: said so already
    esac
}

need() {  # need WHY PACKAGE...: install the packages as root, else say which apt-get line to ask for
    local why=$1
    shift
    if [ "$(id -u)" = 0 ]; then
        echo "bootstrap: $([ "$DRY_RUN" = 1 ] && echo 'would install' || echo installing) $* ($why)"
        apt_install "$@"
    else
        echo "bootstrap: $why: ask an administrator to run: apt-get install $*" >&2
        return 1
    fi
}

if ! ldconfig -p 2>/dev/null | grep -q 'libblas.so.3'; then
    need "openseespy needs them" libblas3 liblapack3 || exit 1
fi

if [ "$TEST" = 1 ]; then
    if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
        need "the monitor page's browser tests; without them those tests are skipped" chromium chromium-driver || true
    fi
    if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null || ! command -v debootstrap >/dev/null; then
        need "the container tests start a Docker daemon of their own; without them those tests are skipped" \
             docker.io docker-compose debootstrap || true
    fi
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    if [ "$DRY_RUN" = 1 ]; then
        echo "bootstrap: would run: $PYTHON -m venv .venv"
    elif ! "$PYTHON" -m venv .venv >/dev/null 2>&1; then
        rm -rf .venv
        need "'$PYTHON -m venv' failed" python3-venv || exit 1
        "$PYTHON" -m venv .venv
    fi
fi
installed() {  # the package and the test tools import, and neither pyproject.toml nor setup.py (which maps the
               # folders to import names) has changed since
    .venv/bin/python -c 'import hybridsim.registry, pytest' >/dev/null 2>&1 && [ ! pyproject.toml -nt .venv/.installed ] \
        && [ ! setup.py -nt .venv/.installed ]
}
if ! installed; then
    run .venv/bin/python -m pip install -q --upgrade pip
    run .venv/bin/python -m pip install -q -e '.[test]'
    run touch .venv/.installed
fi
