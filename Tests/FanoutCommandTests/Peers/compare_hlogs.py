"""Checks with the reference Python reader (PyPI `hdrhistogram`) that a merged interval log is
the sum of its shards' logs: second by second, and in total, every recorded value's count.

    python3 compare_hlogs.py MERGED.hlog SHARD.hlog...

Prints a JSON object: {"equal": bool, "total": count, "seconds": n, "problems": [...]}.
"""
import json
import sys
from collections import defaultdict

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader


def seconds(path):
    """Each interval's histogram by its second from the log's start."""
    reader = HistogramLogReader(path, HdrHistogram(1, 3_600_000_000, 3))
    by_second = {}
    while True:
        histogram = reader.get_next_interval_histogram()
        if histogram is None:
            return by_second
        second = round(histogram.get_start_time_stamp() / 1000.0 - reader.get_start_time_sec())
        by_second[second] = histogram


def counts(histogram):
    return {step.value_iterated_to: step.count_added_in_this_iter_step
            for step in histogram.get_recorded_iterator()}


merged = seconds(sys.argv[1])
expected = defaultdict(lambda: HdrHistogram(1, 3_600_000_000, 3))
for path in sys.argv[2:]:
    for second, histogram in seconds(path).items():
        expected[second].add(histogram)

problems = []
if sorted(merged) != sorted(expected):
    problems.append("seconds differ: %s vs %s" % (sorted(merged), sorted(expected)))
for second in sorted(set(merged) & set(expected)):
    if counts(merged[second]) != counts(expected[second]):
        problems.append("second %d differs" % second)
print(json.dumps({
    "equal": not problems,
    "total": sum(histogram.get_total_count() for histogram in merged.values()),
    "seconds": len(merged),
    "problems": problems,
}))
