"""Checks that a screenshot of report.html is not blank: enough of the page is drawn, and each
chart's colour shows (the SVG rendered, not just the text). Prints a JSON object of what it saw;
exits 1 when something is missing.

    python3 check_render.py SCREENSHOT.png '#1f77b4' '#2ca02c' ...
"""
import json
import sys

from PIL import Image

image = Image.open(sys.argv[1]).convert("RGB")
width, height = image.size
pixels = list(image.getdata())
colours = {}
for text in sys.argv[2:]:
    target = tuple(int(text[index:index + 2], 16) for index in (1, 3, 5))
    colours[text] = sum(1 for pixel in pixels
                        if all(abs(channel - want) <= 12 for channel, want in zip(pixel, target)))
drawn = sum(1 for pixel in pixels if min(pixel) < 235)
seen = {
    "width": width,
    "height": height,
    "drawn_share": drawn / len(pixels),
    "distinct_colours": len(set(pixels)),
    "colours": colours,
}
print(json.dumps(seen))
ok = seen["drawn_share"] > 0.03 and seen["distinct_colours"] > 50 and all(count >= 200 for count in colours.values())
sys.exit(0 if ok else 1)
