#!/usr/bin/env bash
# Builds and runs a scratch package that depends on FanoutPayload and FanoutClient as another
# project would (scripts/lib/dependent/): a clone of this checkout's HEAD, tagged 0.0.1, as a
# versioned git dependency. SwiftPM refuses a versioned dependency whose targets use unsafe
# flags (one met by path is let through, so a path would prove nothing): this fails if one
# comes back. It builds what is committed; prints what the program printed; exits non-zero
# when the package does not resolve, build or run.
set -euo pipefail
cd "$(dirname "$0")/../.."
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git clone --quiet --no-hardlinks . "$scratch/fanout"
git -C "$scratch/fanout" tag 0.0.1
mkdir -p "$scratch/dependent/Sources/dependent"
sed -e "s#FANOUT_URL#file://$scratch/fanout#" scripts/lib/dependent/Package.swift.in \
    >"$scratch/dependent/Package.swift"
cp scripts/lib/dependent/Sources/dependent/main.swift "$scratch/dependent/Sources/dependent/"
cd "$scratch/dependent"
swift build --product dependent >"$scratch/build.log" 2>&1 || {
    tail -20 "$scratch/build.log" >&2
    exit 1
}
swift run --skip-build dependent
