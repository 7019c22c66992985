#!/usr/bin/env bash
# Build the hybridsim image where no image registry is reachable (only Debian's package mirror and PyPI):
#
#   deploy/containers.sh prepare     the offline base (debootstrap) and the wheelhouse (pip download), cached
#   deploy/containers.sh image       prepare, then build hybridsim:latest in the engine at DOCKER_HOST
#
# prepare (root: debootstrap) makes, once per machine, in $HYBRIDSIM_CONTAINERS_CACHE
# (default /var/cache/hybridsim/containers):
#   base-<key>.tar    a minimal Debian bookworm (python3, python3-venv, libblas3, liblapack3) with a
#                     virtual environment in /opt/venv, first on PATH: `pip` and `python` are the venv's
#   wheels-<key>/     every wheel pyproject.toml's dependencies need (CPython 3.11, manylinux x86_64)
#                     and setuptools to build the project's own wheel; where $PYTHON (default python3)
#                     has hybridsim installed, the versions installed beside it (the image then
#                     computes with the libraries the tests compare it with)
# The keys hash what each is made of, so a changed package list or version makes a new one (and the
# older one is deleted).
# image imports the base (hybridsim-base:rootfs), adds the wheelhouse with pip pointed at it
# (hybridsim-base:offline: PIP_NO_INDEX, PIP_FIND_LINKS=/wheels) and builds deploy/Dockerfile on it.
# Every build runs with --network none: nothing is fetched while building.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=${HYBRIDSIM_CONTAINERS_CACHE:-/var/cache/hybridsim/containers}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PYTHON=${PYTHON:-python3}
DOCKER=${DOCKER:-docker}
PACKAGES=python3,python3-venv,libblas3,liblapack3,ca-certificates
# the base's interpreter and C library (CPython 3.11, glibc 2.36): pip takes a manylinux tag only as listed
PLATFORM=(--only-binary :all: --implementation cp --python-version 3.11 --abi cp311 --abi abi3 --abi none)
for glibc in $(seq 36 -1 5); do PLATFORM+=(--platform "manylinux_2_${glibc}_x86_64"); done
PLATFORM+=(--platform manylinux2014_x86_64 --platform manylinux2010_x86_64 --platform manylinux1_x86_64)

key() { sha256sum | cut -c1-12; }

dependencies() {  # pyproject.toml's [project] dependencies, one a line
    "$PYTHON" -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))'
}

constraints() {  # the versions installed in $PYTHON's environment, when hybridsim is one of them
    "$PYTHON" -c 'import hybridsim' 2>/dev/null || return 0
    "$PYTHON" -m pip freeze --exclude-editable 2>/dev/null | grep '==' || true
}

BASE_TAR="$CACHE/base-$(echo "bookworm $PACKAGES venv:/opt/venv" | key).tar"
WHEELS="$CACHE/wheels-$( (dependencies; echo "setuptools>=77"; constraints; echo "${PLATFORM[*]}") | key)"

prepare_base() {
    [ -s "$BASE_TAR" ] && return
    command -v debootstrap >/dev/null || { echo "containers: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }
    local root
    root=$(mktemp -d "$CACHE/rootfs.XXXXXX") && chmod 755 "$root"  # the image's / (mktemp makes it 700)
    rm -f "$CACHE"/base-*.tar
    echo "containers: debootstrap bookworm ($PACKAGES) into $root"
    debootstrap --variant=minbase --include="$PACKAGES" bookworm "$root" "$MIRROR" >"$root.log" 2>&1 \
        || { tail -20 "$root.log" >&2; rm -rf "$root"; exit 1; }
    chroot "$root" python3 -m venv /opt/venv
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root.log"
    tar --numeric-owner -C "$root" -cf "$BASE_TAR.partial" .
    mv "$BASE_TAR.partial" "$BASE_TAR"
    rm -rf "$root"
}

prepare_wheels() {
    [ -f "$WHEELS/.complete" ] && return
    echo "containers: downloading the wheelhouse into $WHEELS"
    rm -rf "$CACHE"/wheels-* && mkdir -p "$WHEELS"
    (dependencies; echo "setuptools>=77") >"$WHEELS/requirements.txt"
    constraints >"$WHEELS/constraints.txt"
    "$PYTHON" -m pip download -q --dest "$WHEELS" "${PLATFORM[@]}" -r "$WHEELS/requirements.txt" \
        -c "$WHEELS/constraints.txt"
    touch "$WHEELS/.complete"
}

image() {
    "$DOCKER" import --change 'ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' "$BASE_TAR" hybridsim-base:rootfs >/dev/null
    printf 'FROM hybridsim-base:rootfs\nCOPY . /wheels\nENV PIP_NO_INDEX=1 PIP_FIND_LINKS=/wheels\n' \
        | "$DOCKER" build -q --network none -t hybridsim-base:offline -f - "$WHEELS" >/dev/null
    "$DOCKER" build --network none --build-arg BASE=hybridsim-base:offline -f deploy/Dockerfile -t hybridsim:latest .
}

prepare() {  # one at a time on this machine: another run may be filling the same cache
    mkdir -p "$CACHE"
    exec 9>"$CACHE/.lock"
    flock 9
    prepare_base
    prepare_wheels
    exec 9>&-
}

case "${1:-}" in
    prepare) prepare ;;
    image) prepare; image ;;
    *) echo "usage: deploy/containers.sh prepare|image   (see the comment at the top of this file)" >&2; exit 2 ;;
esac
