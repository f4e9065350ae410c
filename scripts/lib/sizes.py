#!/usr/bin/env python3
"""The house's size limits (issue #44): Swift files over 450 lines and functions over 80.

    python3 scripts/lib/sizes.py [FOLDER=Sources] [FILE_LIMIT=450] [FUNCTION_LIMIT=80]

A function is a `func`, `init`, `subscript` or computed `var` whose body opens with `{`; its
length runs from its first line to the line closing that brace (string literals and `//`
comments stripped before braces are counted). Prints each file and function over its limit,
longest first, and exits 0: a list to work from, not a gate.
"""
import glob
import re
import sys

folder = sys.argv[1] if len(sys.argv) > 1 else "Sources"
file_limit = int(sys.argv[2]) if len(sys.argv) > 2 else 450
function_limit = int(sys.argv[3]) if len(sys.argv) > 3 else 80

declaration = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|private|fileprivate|internal|package|static|final|override|mutating|nonisolated|"
    r"convenience|required)(?:\(set\))?\s+)*"
    r"(func\s+[^\s(<]+|init[?!]?\s*[(<]|subscript\s*\(|var\s+\w+\s*:[^=]*\{\s*$)"
)


def code(line):
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    comment = line.find("//")
    return line if comment < 0 else line[:comment]


files, functions = [], []
for path in sorted(glob.glob(folder + "/**/*.swift", recursive=True)):
    lines = open(path, encoding="utf-8").read().split("\n")
    if len(lines) - 1 > file_limit:
        files.append((len(lines) - 1, path))
    for start, line in enumerate(lines):
        if not declaration.match(line):
            continue
        depth, opened, end = 0, False, start
        while end < len(lines):
            for character in code(lines[end]):
                if character == "{":
                    depth, opened = depth + 1, True
                elif character == "}":
                    depth -= 1
            if opened and depth <= 0:
                break
            if not opened and end > start + 15:
                break
            end += 1
        if opened and end - start + 1 > function_limit:
            functions.append((end - start + 1, f"{path}:{start + 1}", line.strip()[:60]))

print(f"files over {file_limit} lines: {len(files)}")
for count, path in sorted(files, reverse=True):
    print(f"  {count:5} {path}")
print(f"functions over {function_limit} lines: {len(functions)}")
for count, place, text in sorted(functions, reverse=True):
    print(f"  {count:5} {place}  {text}")
