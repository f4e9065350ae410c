#!/usr/bin/env python3
"""Every Fanout module a target imports is one its Package.swift entry declares.

A target that imports a module it does not declare still builds when something else it
depends on pulls that module in first, until the graph changes and the build breaks, or
races. This reads Package.swift (its targets, and the `wireEnd` list they share) and each
target's sources, and names each import no dependency declares:

    FanoutRunTests imports FanoutSink, not in its dependencies (Package.swift)

Usage: scripts/lib/imports.py [PACKAGE-FOLDER]   (exit 1 when an import is undeclared)
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "."
manifest = open(os.path.join(root, "Package.swift")).read()
shared = re.search(r"let wireEnd[^=]*=(.*?)\n\n", manifest, re.S)
shared_modules = set(re.findall(r'"(Fanout[A-Za-z0-9]*)"', shared.group(1))) if shared else set()
module_import = re.compile(r"\s*(?:@testable\s+)?import\s+(?:(?:struct|class|enum|func|protocol)\s+)?(Fanout[A-Za-z0-9]+)")

undeclared = 0
for entry in re.split(r"\.(?:target|testTarget|executableTarget)\(", manifest)[1:]:
    name = re.search(r'name:\s*"([^"]+)"', entry)
    if not name:
        continue
    name = name.group(1)
    declared = set(re.findall(r'"(Fanout[A-Za-z0-9]*|fanout[-a-z]*)"', entry)) | {name}
    if "wireEnd" in entry:
        declared |= shared_modules
    path = re.search(r'path:\s*"([^"]+)"', entry)
    folder = path.group(1) if path else ("Tests/" if name.endswith("Tests") else "Sources/") + name
    imported = set()
    for source in glob.glob(os.path.join(root, folder, "**/*.swift"), recursive=True):
        for line in open(source):
            found = module_import.match(line)
            if found:
                imported.add(found.group(1))
    for module in sorted(imported - declared):
        print(f"{name} imports {module}, not in its dependencies (Package.swift)")
        undeclared += 1
sys.exit(1 if undeclared else 0)
