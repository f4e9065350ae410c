#!/usr/bin/env bash
# Proof that `fanout merge` cannot forget a field of summary.json (issue #44): on scratch copies
# of Sources/FanoutResults (the document) and Sources/FanoutReport (the merge), add a field to
# SummaryDocument with its coding key, then build the document's module and typecheck the
# merge's with the very commands `swift build` used (read from .build/debug.yaml). The copies as
# they are must typecheck; with the new field they must not, and the compiler must point at
# SummaryMerge's switch. Needs a debug build (`swift build --build-tests`) first.
set -euo pipefail
cd "$(dirname "$0")/../.."

plan=.build/debug.yaml
[ -f "$plan" ] || { echo "error: $plan is missing: run swift build --build-tests first" >&2; exit 1; }
scratch=$(mktemp -d)
[ -d "$scratch" ] || { echo "error: mktemp made no folder" >&2; exit 1; }
trap 'rm -rf "$scratch"' EXIT

# Each module's compile command: FanoutResults emitted into a folder searched first,
# FanoutReport typechecked against it.
python3 - "$plan" "$scratch" <<'PYTHON'
import json, re, sys
plan, scratch = sys.argv[1], sys.argv[2]
text = open(plan).read()
dropped_with_value = {"-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path"}
dropped = {"-emit-dependencies", "-emit-module", "-incremental", "-c", "-enable-batch-mode",
           "-serialize-diagnostics", "-parseable-output", "-emit-objc-header"}
tails = {
    "FanoutResults": ["-emit-module", "-emit-module-path", f"{scratch}/modules/FanoutResults.swiftmodule"],
    "FanoutReport": ["-typecheck"],
}
for module, tail in tails.items():
    match = re.search(r'args: (\["[^\n]*"-module-name","' + module + r'",[^\n]*\])', text)
    if not match:
        sys.exit(f"error: {plan} has no compile command for {module}")
    keep, skip_next = [], False
    for arg in json.loads(match.group(1)):
        if skip_next:
            skip_next = False
            continue
        if arg in dropped_with_value:
            skip_next = True
            continue
        if arg in dropped or arg.startswith("@") or arg.startswith("-j"):
            continue
        keep.append(arg)
    keep[1:1] = ["-I", f"{scratch}/modules"]  # the scratch module before the build's
    with open(f"{scratch}/{module}.command", "w") as out:
        out.write("\n".join(keep + tail))
PYTHON

mkdir -p "$scratch/modules"
cp -R Sources/FanoutResults Sources/FanoutReport "$scratch/"
typecheck() {
    local module
    for module in FanoutResults FanoutReport; do
        mapfile -t command < "$scratch/$module.command"
        mapfile -t sources < <(find "$scratch/$module" -name '*.swift' | sort)
        "${command[@]}" "${sources[@]}" > "$scratch/log" 2>&1 || return 1
    done
}

if ! typecheck; then
    echo "error: the unchanged copies of FanoutResults and FanoutReport do not typecheck:" >&2
    cat "$scratch/log" >&2
    exit 1
fi
echo "the unchanged copy typechecks"

# A field a future schema might add, written and read like the others.
python3 - "$scratch/FanoutResults/SummaryDocument.swift" <<'PYTHON'
import sys
path = sys.argv[1]
text = open(path).read()
anchor = "    public var openModel: OpenModel? = nil\n"
key = '        case openModel = "open_model"\n'
if anchor not in text or key not in text:
    sys.exit("error: SummaryDocument.swift changed: update the anchors in scripts/lib/merge-fields.sh")
text = text.replace(anchor, anchor + "    public var deliveredShare: Double? = nil\n", 1)
text = text.replace(key, key + '        case deliveredShare = "delivered_share"\n', 1)
open(path, "w").write(text)
PYTHON

if typecheck; then
    echo "error: a field added to SummaryDocument typechecks without saying how shards merge it" >&2
    exit 1
fi
if ! grep -q "SummaryMerge.swift.*switch must be exhaustive" "$scratch/log"; then
    echo "error: the copy with a new field failed, but not at SummaryMerge's switch:" >&2
    cat "$scratch/log" >&2
    exit 1
fi
echo "with a new field, the merge does not compile:"
grep "SummaryMerge.swift.*switch must be exhaustive" "$scratch/log" | sed "s|$scratch/||" | head -1
grep -o "add missing case: .*" "$scratch/log" | head -1
