"""Checks summary.json files against docs/summary.schema.json with the jsonschema package
(JSON Schema draft 2020-12). Prints each file's first problem; exits 1 if any file has one.

    python3 validate_summary.py SCHEMA FILE...
"""
import json
import sys

import jsonschema

with open(sys.argv[1]) as handle:
    schema = json.load(handle)
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
failed = False
for path in sys.argv[2:]:
    with open(path) as handle:
        document = json.load(handle)
    errors = sorted(validator.iter_errors(document), key=lambda error: list(error.path))
    if errors:
        failed = True
        where = "/".join(str(part) for part in errors[0].path) or "(top)"
        print(f"{path}: {where}: {errors[0].message}")
    else:
        print(f"{path}: valid")
sys.exit(1 if failed else 0)
