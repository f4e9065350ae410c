#!/usr/bin/env python3
"""Every package type with inlinable members is @usableFromInline.

A `package` type's `@inlinable` members reach other modules only when the type itself is
`@usableFromInline` (and so is every `package` stored property they read): without it the
compiler keeps their bodies to the module, and every call from another module is a call to the
unspecialised code. DueHeap was so: each return event's push looked up type metadata (4.5% of
the sink's loop with media downloads). The type then compiles as if it were inlinable, so the
compiler checks the rest. Prints each type that is not, with its file and line; exits 1 then.
"""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parents[2] / "Sources"
declaration = re.compile(r"^(\s*)(?:(?:final|indirect)\s+)*package\s+(?:(?:final|indirect)\s+)*(struct|enum|class|protocol)\s+(\w+)")
problems = []
for path in sorted(root.rglob("*.swift")):
    lines = path.read_text(encoding="utf-8").splitlines()
    # Each package type's span: from its declaration to the next top-level declaration.
    types = []
    for number, line in enumerate(lines):
        match = declaration.match(line)
        if match and match.group(1) == "":
            attributes = []
            back = number - 1
            while back >= 0 and (lines[back].startswith("@") or lines[back].startswith("///")):
                attributes.append(lines[back])
                back -= 1
            types.append((number, match.group(3), any(a.startswith("@usableFromInline") for a in attributes)))
    for index, (start, name, usable) in enumerate(types):
        end = types[index + 1][0] if index + 1 < len(types) else len(lines)
        body = lines[start:end]
        if not usable and any(line.strip() == "@inlinable" or line.strip().startswith("@inlinable ") for line in body):
            problems.append(f"{path.relative_to(root.parent)}:{start + 1}: package {name} has @inlinable members but is not @usableFromInline")
for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
