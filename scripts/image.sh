#!/usr/bin/env bash
# Builds Fanout's image (Dockerfile) here, with podman, and runs it: no image registry is
# reachable from these machines, so the base is made with debootstrap and the binary on the host.
#
#   scripts/image.sh [TAG]                  (default fanout:VERSION) the binary built here with
#                                           --static-swift-stdlib, as the Dockerfile's build does
#   scripts/image.sh --binary PATH [TAG]    a release binary already built (scripts/test.sh
#                                           passes CI's .build/release/fanout), with the Swift
#                                           runtime libraries it loads beside it
#   scripts/image.sh --test [...]           the same, then the image is removed (CI)
#
# 1. a bookworm `minbase` root file system, from the Debian mirror apt uses, imported as
#    localhost/fanout-base:bookworm (once; kept between runs);
# 2. `fanout` built on the host with --static-swift-stdlib (scratch folder .build-static), or
#    the --binary given and the libraries under lib/swift/ that ldd says it loads; either goes
#    into the context's dist/, which the Dockerfile's `prebuilt` stage installs in /opt/fanout
#    (the binary's RUNPATH has $ORIGIN, so it finds them there);
# 3. `podman build --target prebuilt --build-arg BASE=…` (with --network host, so the
#    Dockerfile's apt-get reaches the mirror) from a context holding the Dockerfile and dist/;
# 4. `fanout run --count 10000` in a container: it must pass (exit 0, reconciled), as a
#    non-root user (10001).
# What this VM needs (found by trying): `default_ulimits = []` in containers.conf (raising
# RLIMIT_NPROC/NOFILE is refused) and runc with cgroupfs (crun refuses the hybrid cgroups).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt.sh
debian_packages podman runc debootstrap uidmap

usage() {
    echo "usage: scripts/image.sh [--test] [--binary PATH] [TAG]" >&2
    exit 64
}
binary='' remove=false
while (($#)); do
    case $1 in
    --binary)
        (($# >= 2)) || usage
        binary=$2
        shift 2
        ;;
    --test)
        remove=true
        shift
        ;;
    -*) usage ;;
    *) break ;;
    esac
done
(($# <= 1)) || usage
if [[ -n $binary && ! -x $binary ]]; then
    echo "scripts/image.sh: --binary $binary: not an executable file" >&2
    exit 64
fi
version=$(sed -n 's/.*static let current = "\(.*\)"/\1/p' Sources/FanoutResults/RunEnvironment.swift)
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

context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir "$context/dist"
cp Dockerfile "$context/"
if [[ -z $binary ]]; then
    echo "== fanout, release, --static-swift-stdlib"
    swift build -c release --product fanout --static-swift-stdlib --scratch-path .build-static >/dev/null
    binary=$(swift build -c release --scratch-path .build-static --show-bin-path)/fanout
else
    # Each line of ldd: `libswiftCore.so => /opt/swift/usr/lib/swift/linux/libswiftCore.so (0x…)`.
    libraries=$(ldd "$binary" | awk '$3 ~ /\/lib\/swift\// { print $3 }')
    echo "== $binary with the $(wc -w <<<"$libraries") Swift runtime libraries it loads"
    [[ -z $libraries ]] || cp $libraries "$context/dist/"
    if ldd "$binary" | grep -q 'not found'; then
        ldd "$binary" | grep 'not found' >&2
        exit 1
    fi
fi
cp "$binary" "$context/dist/fanout"
strip --strip-debug "$context/dist/fanout"  # symbols stay (backtraces); debug info is most of its size

echo "== podman build $tag (BASE=$base)"
"${podman[@]}" build --network host --target prebuilt --build-arg "BASE=$base" -t "$tag" "$context"

echo "== fanout run --count 10000 in the container"
# --json: the run's summary.json on stdout (the console's lines on stderr), judged by its fields,
# not by the wording of a line.
summary=$("${podman[@]}" run --rm --network host "$tag" run --count 10000 --output /tmp/run --json)
python3 - "$summary" <<'PY' || exit 1
import json, sys
s = json.loads(sys.argv[1])
if not (s["valid"] and s["reconciled"] and s["accepted"] == 10000):
    sys.exit(f"the run in the container did not pass: valid {s['valid']}, reconciled {s['reconciled']}, "
             f"accepted {s['accepted']} of 10000, reasons {s['invalid_reasons']}")
print(f"the run in the container: {s['accepted']:,} accepted, reconciled with the sink")
PY
user=$("${podman[@]}" run --rm --entrypoint id "$tag" -u)
[ "$user" = 10001 ] || { echo "the image runs as user $user, not 10001" >&2; exit 1; }
echo "image $tag: fanout run passed in a container, as user $user"
if $remove; then
    "${podman[@]}" rmi "$tag" >/dev/null
fi
