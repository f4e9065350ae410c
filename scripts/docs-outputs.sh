#!/usr/bin/env bash
# Regenerates the sample outputs of README.md and docs/*.md from the current release build: every
# block the docs test checks (Tests/FanoutCommandTests/DocsRunTests.swift) is run at its full
# size (the markers' `small:` substitutions dropped), its shown lines replaced by today's (the
# page's elisions kept) and a line under it saying when and with which build. Review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/apt.sh
debian_packages libjemalloc-dev  # the fanout binary's allocator

swift build -c release --product fanout
swift build --build-tests
FANOUT_EXECUTABLE=.build/release/fanout FANOUT_DOCS_REGENERATE=1 \
    FANOUT_DOCS_BUILD="the release build of $(git rev-parse --short HEAD)" \
    FANOUT_REQUIRE_PEERS=1 swift test --skip-build --no-parallel \
    --filter 'DocsRunTests/commands(SetUpWithOpenSSL)?RunAsDocumented'  # one block at a time: nothing else on the cores
git diff --stat -- README.md docs
