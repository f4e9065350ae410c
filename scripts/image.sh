#!/usr/bin/env bash
# Builds Fanout's image (Dockerfile) here, with podman, and runs it: no image registry is
# reachable from these machines, so the base is made with debootstrap and the binary on the host.
#
#   scripts/image.sh [TAG]       (default fanout:VERSION)
#
# 1. a bookworm `minbase` root file system, from the Debian mirror apt uses, imported as
#    localhost/fanout-base:bookworm (once; kept between runs);
# 2. `fanout` built on the host with --static-swift-stdlib (scratch folder .build-static);
# 3. `podman build --target prebuilt --build-arg BASE=…` (with --network host, so the
#    Dockerfile's apt-get reaches the mirror) from a context holding the Dockerfile and binary;
# 4. `fanout run --count 10000` in a container: it must pass (exit 0, reconciled), as a
#    non-root user.
# What this VM needs (found by trying): `default_ulimits = []` in containers.conf (raising
# RLIMIT_NPROC/NOFILE is refused) and runc with cgroupfs (crun refuses the hybrid cgroups).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt.sh
debian_packages podman runc debootstrap uidmap

version=$(sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/FanoutReport/RunEnvironment.swift)
tag=${1:-fanout:$version}
podman=(podman --runtime /usr/sbin/runc --cgroup-manager=cgroupfs)

conf=/etc/containers/containers.conf
if ! grep -q '^default_ulimits *= *\[\]' "$conf" 2>/dev/null; then
    echo "== $conf: default_ulimits = [] (this VM refuses raising RLIMIT_NPROC/NOFILE)"
    sudo=$( ((EUID == 0)) || echo sudo)
    $sudo mkdir -p /etc/containers
    if grep -q '^\[containers\]' "$conf" 2>/dev/null; then
        $sudo sed -i '/^\[containers\]/a default_ulimits = []' "$conf"
    else
        printf '[containers]\ndefault_ulimits = []\n' | $sudo tee -a "$conf" >/dev/null
    fi
fi

base=localhost/fanout-base:bookworm
if ! "${podman[@]}" image exists "$base"; then
    mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    mirror=${mirror:-http://deb.debian.org/debian}
    echo "== $base: debootstrap --variant=minbase bookworm from $mirror"
    root=$(mktemp -d)
    trap 'rm -rf "$root"' EXIT
    debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
        tail -20 "$root.log" >&2
        exit 1
    }
    tar -C "$root" -c . | "${podman[@]}" import - "$base"
    rm -rf "$root" "$root.log"
fi

echo "== fanout, release, --static-swift-stdlib"
swift build -c release --product fanout --static-swift-stdlib --scratch-path .build-static >/dev/null
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
cp Dockerfile "$context/"
cp "$(swift build -c release --scratch-path .build-static --show-bin-path)/fanout" "$context/fanout"
strip --strip-debug "$context/fanout"  # symbols stay (backtraces); debug info is most of its size

echo "== podman build $tag (BASE=$base)"
"${podman[@]}" build --network host --target prebuilt --build-arg "BASE=$base" -t "$tag" "$context"

echo "== fanout run --count 10000 in the container"
output=$("${podman[@]}" run --rm --network host "$tag" run --count 10000 --output /tmp/run)
echo "$output"
grep -q '^reconciled' <<<"$output" || { echo "the run in the container did not reconcile" >&2; exit 1; }
user=$("${podman[@]}" run --rm --entrypoint id "$tag" -u)
[ "$user" = 10001 ] || { echo "the image runs as user $user, not 10001" >&2; exit 1; }
echo "image $tag: fanout run passed in a container, as user $user"
