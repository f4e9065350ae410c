"""Reads an HdrHistogram interval log with the reference Python reader (PyPI `hdrhistogram`)
and prints, as JSON, what it decoded: each interval's start, count and recorded values
(value, count), and the sum of the intervals' count, p50, p99 and max.

    python3 read_hlog.py FILE.hlog
"""
import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3_600_000_000, 3))
total = HdrHistogram(1, 3_600_000_000, 3)
intervals = []
while True:
    histogram = reader.get_next_interval_histogram()
    if histogram is None:
        break
    intervals.append({
        "start": histogram.get_start_time_stamp() / 1000.0,
        "end": histogram.get_end_time_stamp() / 1000.0,
        "count": histogram.get_total_count(),
        "recorded": [[step.value_iterated_to, step.count_added_in_this_iter_step]
                     for step in histogram.get_recorded_iterator()],
    })
    total.add(histogram)
print(json.dumps({
    "start_time": reader.get_start_time_sec(),
    "intervals": intervals,
    "total": {
        "count": total.get_total_count(),
        "p50": total.get_value_at_percentile(50),
        "p99": total.get_value_at_percentile(99),
        "max": total.get_max_value(),
    },
}))
