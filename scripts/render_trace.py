#!/usr/bin/python3
"""Renders hostir Chrome traces (`hostir run --trace`, `hostir simulate --trace`) as a PNG timeline.

One horizontal row per (rank, track) that has slices, ranks top to bottom and
within a rank host, main stream, then stream 0, 1, ...; each complete event
("ph": "X") is a bar coloured by its category (compute, communication,
memory, sync, host). Times are in milliseconds from the trace's origin.
Given several traces (a measured run and its prediction, say), it draws one
panel per trace, stacked on one time axis, each titled by its --labels entry.

Run (matplotlib from the Debian python3-matplotlib package is importable by
/usr/bin/python3):
    /usr/bin/python3 scripts/render_trace.py trace.json trace.png [--title TEXT] [--width 12]
    /usr/bin/python3 scripts/render_trace.py run.json predicted.json both.png --labels measured,predicted
"""

import argparse
import json
import sys

try:
    import matplotlib
except ImportError:
    sys.exit(f"render_trace.py: cannot import matplotlib with {sys.executable}; install the Debian package "
             "python3-matplotlib (for /usr/bin/python3) or `pip install matplotlib`")

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.patches import Patch  # noqa: E402

CATEGORY_COLOURS = {
    "compute": "#1f77b4",        # blue
    "communication": "#ff7f0e",  # orange
    "memory": "#2ca02c",         # green
    "sync": "#9467bd",           # purple
    "host": "#7f7f7f",           # grey
}
OTHER_COLOUR = "#d62728"         # red: a category this script does not know
MIN_WIDTH_FRACTION = 0.002       # slices narrower than 0.2% of the span are drawn this wide
ROW_HEIGHT_INCHES = 0.35
BAR_HEIGHT = 0.7                 # of a row


class TraceError(Exception):
    """The trace file is missing or is not a trace this script understands."""


def parse_arguments():
    parser = argparse.ArgumentParser(description="Render hostir Chrome trace JSON files as one PNG timeline.")
    parser.add_argument("traces", nargs="+", metavar="TRACE",
                        help="traces written by `hostir run --trace` or `hostir simulate --trace`")
    parser.add_argument("output", help="PNG file to write")
    parser.add_argument("--title", default=None, help="figure title (default: the trace's file name)")
    parser.add_argument("--labels", default=None,
                        help="comma-separated panel titles, one per trace (default: the file names)")
    parser.add_argument("--width", type=float, default=12.0, help="figure width in inches (default 12)")
    return parser.parse_args()


def load_trace_events(path):
    """The list of trace events of a Chrome trace in JSON object (or bare array) format."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror or e}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TraceError(f"{path} is not valid JSON: {e}")
    events = document.get("traceEvents") if isinstance(document, dict) else document
    if not isinstance(events, list):
        raise TraceError(f"{path} has no 'traceEvents' list")
    return events


def number_field(event, key, index, path):
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TraceError(f"{path}: event {index} ('X') has no numeric '{key}'")
    return value


def complete_slices(events, path):
    """(rank, tid, start_us, duration_us, category) of every complete event; other phases are ignored."""
    slices = []
    for index, event in enumerate(events):
        if not isinstance(event, dict):
            raise TraceError(f"{path}: event {index} is not an object")
        if event.get("ph") != "X":
            continue
        rank = number_field(event, "pid", index, path)
        tid = number_field(event, "tid", index, path)
        start = number_field(event, "ts", index, path)
        duration = number_field(event, "dur", index, path)
        if duration < 0:
            raise TraceError(f"{path}: event {index} has a negative 'dur'")
        slices.append((int(rank), int(tid), float(start), float(duration), str(event.get("cat", ""))))
    if not slices:
        raise TraceError(f"{path} has no complete ('X') events to draw")
    return slices


def track_label(rank, tid):
    """`rank r · host`, `rank r · main` or `rank r · stream k`, from hostir's tid numbering."""
    if tid == 0:
        track = "host"
    elif tid == 1:
        track = "main"
    else:
        track = f"stream {tid - 2}"
    return f"rank {rank} \u00b7 {track}"


def category_colour(category):
    return CATEGORY_COLOURS.get(category, OTHER_COLOUR)


def edge_colour(face):
    """A darker shade of `face`, so that neighbouring slices stay apart without hiding tiny ones."""
    red, green, blue = matplotlib.colors.to_rgb(face)
    return (red * 0.6, green * 0.6, blue * 0.6)


def render_timeline(panels, output, title, width):
    """panels: [(slices, panel title)], drawn top to bottom on one time axis."""
    every = [piece for slices, _ in panels for piece in slices]
    first = min(start for _, _, start, _, _ in every) / 1e3
    last = max(start + duration for _, _, start, duration, _ in every) / 1e3
    span = max(last - first, 1e-6)

    rows = [len({(rank, tid) for rank, tid, _, _, _ in slices}) for slices, _ in panels]
    height = ROW_HEIGHT_INCHES * sum(rows) + 1.2 * len(panels) + 0.4
    figure, axes_list = plt.subplots(len(panels), 1, figsize=(width, height), sharex=True, squeeze=False,
                                     gridspec_kw={"height_ratios": [r + 1.5 for r in rows]})
    for axes, (slices, panel_title) in zip(axes_list[:, 0], panels):
        draw_panel(axes, slices, first, span, panel_title if len(panels) > 1 else title)
    axes_list[-1, 0].set_xlabel("time (ms)")
    if len(panels) > 1:
        figure.suptitle(title)

    present = {category for *_, category in every}
    categories = [c for c in CATEGORY_COLOURS if c in present] + sorted(present - set(CATEGORY_COLOURS))
    handles = [Patch(facecolor=category_colour(c), edgecolor=edge_colour(category_colour(c)), label=c or "(none)")
               for c in categories]
    axes_list[0, 0].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)

    figure.tight_layout()
    figure.savefig(output, dpi=150)
    plt.close(figure)


def draw_panel(axes, slices, first, span, title):
    tracks = sorted({(rank, tid) for rank, tid, _, _, _ in slices})
    row_of = {track: row for row, track in enumerate(tracks)}
    min_width = span * MIN_WIDTH_FRACTION
    bars = {}  # (row, colour) -> [(start_ms, width_ms)]
    for rank, tid, start, duration, category in slices:
        key = (row_of[(rank, tid)], category_colour(category))
        bars.setdefault(key, []).append((start / 1e3, max(duration / 1e3, min_width)))
    for (row, colour), spans in bars.items():
        axes.broken_barh(spans, (row - BAR_HEIGHT / 2, BAR_HEIGHT), facecolors=colour,
                         edgecolor=edge_colour(colour), linewidth=0.4)

    shade_alternate_ranks(axes, tracks)

    axes.set_yticks(range(len(tracks)))
    axes.set_yticklabels([track_label(rank, tid) for rank, tid in tracks])
    axes.set_ylim(len(tracks) - 0.5, -0.5)  # rank 0 at the top
    axes.set_xlim(first - 0.01 * span, first + 1.01 * span)
    axes.grid(axis="x", linestyle=":", linewidth=0.5)
    axes.set_title(title)


def shade_alternate_ranks(axes, tracks):
    """Grey band behind every other rank's rows, and a line between ranks."""
    ranks = sorted({rank for rank, _ in tracks})
    for position, rank in enumerate(ranks):
        rows = [row for row, (r, _) in enumerate(tracks) if r == rank]
        top, bottom = min(rows) - 0.5, max(rows) + 0.5
        if position % 2:
            axes.axhspan(top, bottom, color="#f0f0f0", zorder=0)
        if position:
            axes.axhline(top, color="black", linewidth=0.6)


def main():
    args = parse_arguments()
    if args.width <= 0:
        sys.stderr.write("render_trace.py: error: --width must be positive\n")
        return 1
    labels = args.labels.split(",") if args.labels else args.traces
    if len(labels) != len(args.traces):
        sys.stderr.write(f"render_trace.py: error: --labels has {len(labels)} entries for {len(args.traces)} traces\n")
        return 1
    try:
        panels = [(complete_slices(load_trace_events(path), path), label) for path, label in zip(args.traces, labels)]
        render_timeline(panels, args.output, args.title or ", ".join(args.traces), args.width)
    except TraceError as e:
        sys.stderr.write(f"render_trace.py: error: {e}\n")
        return 1
    except OSError as e:
        sys.stderr.write(f"render_trace.py: error: cannot write {args.output}: {e.strerror or e}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
