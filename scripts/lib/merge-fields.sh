#!/usr/bin/env bash
# Proof that `fanout merge` cannot forget a field of summary.json (issue #44): on a scratch copy
# of Sources/FanoutReport, add a field to SummaryDocument with its coding key, and typecheck the
# module with the very command `swift build` used (read from .build/debug.yaml). The copy as it
# is must typecheck; with the new field it must not, and the compiler must point at
# SummaryMerge's switch. Needs a debug build (`swift build --build-tests`) first.
set -euo pipefail
cd "$(dirname "$0")/../.."

plan=.build/debug.yaml
[ -f "$plan" ] || { echo "error: $plan is missing: run swift build --build-tests first" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The module's compile command, turned into a typecheck of the scratch copy's sources.
python3 - "$plan" "$scratch" <<'EOF'
import json, re, sys
plan, scratch = sys.argv[1], sys.argv[2]
text = open(plan).read()
match = re.search(r'args: (\["[^\n]*"-module-name","FanoutReport",[^\n]*\])', text)
if not match:
    sys.exit(f"error: {plan} has no compile command for FanoutReport")
args = json.loads(match.group(1))
keep, skip_next = [], False
dropped_with_value = {"-emit-module-path", "-output-file-map", "-index-store-path", "-emit-objc-header-path"}
dropped = {"-emit-dependencies", "-emit-module", "-incremental", "-c", "-enable-batch-mode",
           "-serialize-diagnostics", "-parseable-output", "-emit-objc-header"}
for arg in args:
    if skip_next:
        skip_next = False
        continue
    if arg in dropped_with_value:
        skip_next = True
        continue
    if arg in dropped or arg.startswith("@") or arg.startswith("-j"):
        continue
    keep.append(arg)
with open(f"{scratch}/command", "w") as out:
    out.write("\n".join(keep + ["-typecheck"]))
EOF

cp -R Sources/FanoutReport "$scratch/FanoutReport"
typecheck() {
    mapfile -t command < "$scratch/command"
    "${command[@]}" "$scratch"/FanoutReport/*.swift > "$scratch/log" 2>&1
}

if ! typecheck; then
    echo "error: the unchanged copy of FanoutReport does not typecheck:" >&2
    cat "$scratch/log" >&2
    exit 1
fi
echo "the unchanged copy typechecks"

# A field a future schema might add, written and read like the others.
python3 - "$scratch/FanoutReport/SummaryDocument.swift" <<'EOF'
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
EOF

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
