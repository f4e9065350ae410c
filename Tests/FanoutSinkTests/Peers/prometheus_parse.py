"""Parses Prometheus' text exposition format from stdin with prometheus_client's own parser
(an implementation nobody at Fanout wrote) and prints every sample as JSON:
[{"name": ..., "type": ..., "labels": {...}, "value": ...}, ...]. A malformed exposition
raises, and the script exits non-zero."""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families

samples = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        samples.append({"name": sample.name, "type": family.type, "labels": sample.labels, "value": sample.value})
json.dump(samples, sys.stdout)
