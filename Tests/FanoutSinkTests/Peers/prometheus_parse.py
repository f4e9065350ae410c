"""Parses Prometheus' text exposition format from stdin with prometheus_client's own parser
(an implementation nobody at Fanout wrote) and prints every sample as JSON:
[{"name": ..., "type": ..., "labels": {...}, "value": ...}, ...]. A malformed exposition
raises, and the script exits non-zero. A value JSON cannot hold (NaN, +Inf, -Inf: a summary
before its first observation) is written as that string."""
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        value = sample.value
        if not math.isfinite(value):
            value = "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
        samples.append({"name": sample.name, "type": family.type, "labels": sample.labels, "value": value})
json.dump(samples, sys.stdout, allow_nan=False)
