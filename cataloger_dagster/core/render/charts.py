"""Inline SVG charts, value formatting and the script diff for the HTML pages.

Everything here returns `markupsafe.Markup` built from escaped pieces: the
pages are opened from a disk or an object store, offline, so charts are drawn
as inline SVG with no JavaScript, fonts or other requests, and any value from
the data (a category, a column name) is text, never markup.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from datetime import date, datetime, time
from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from cataloger_dagster.core.models import Histogram, ValueCount

ELLIPSIS = "…"
LOG_SCALE_RATIO = 50  # a histogram's largest bin this many times its smallest: heights on a log scale
SIGNIFICANT_DIGITS = 4  # a measured number's fourth digit is rarely worth reading, its fifth never
# a date, a time of day or a timestamp written as text: shown whole or not at all, never cut
_TEMPORAL_TEXT = re.compile(
    r"^(\d{4,}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{2}:\d{2}(:\d{2}(\.\d+)?)?)"
    r"(Z|[+-]\d{2}(:?\d{2})?)?$"
)


def is_temporal_text(text: str) -> bool:
    return bool(_TEMPORAL_TEXT.match(text))


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def _fmt_float(value: float, grouped: bool = True) -> str:
    if value == 0:
        return "0"  # -0.0 too: a sign on nothing says nothing
    magnitude = abs(value)
    if magnitude >= 1e12 or magnitude < 1e-4:
        return f"{value:.{SIGNIFICANT_DIGITS}g}"
    comma = "," if grouped else ""
    if value.is_integer():
        return f"{value:{comma}.0f}"
    # the integer part whole, then decimals up to SIGNIFICANT_DIGITS in all: fixed notation
    # reads better than %g's exponents
    digits = min(6, max(0, SIGNIFICANT_DIGITS - 1 - math.floor(math.log10(magnitude))))
    text = f"{value:{comma}.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_value(value: Any, limit: int = 80, grouped: bool = True) -> str:
    """A value as short, human text (not escaped: Jinja or `escape` does that).

    ``grouped=False`` writes numbers without thousands separators, for identifiers and codes
    ("2118", never "2,118").  Numbers, dates and timestamps are never cut: a cut value would
    read as another value."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}" if grouped else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return _fmt_float(value, grouped)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime) else value.isoformat()
    if isinstance(value, (dict, list, tuple)):
        text = json.dumps(value, default=str, ensure_ascii=False)
    else:
        text = str(value)
    return text if is_temporal_text(text) else truncate(text, limit)


def _compact_number(value: Any, grouped: bool = True) -> str:
    """Axis labels: 1.2k, 3.4M, or a date's text; an identifier (``grouped=False``) as its digits."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = str(value)
        # a timestamp edge at midnight says no more than its date
        if len(text) >= 19 and text[10] in "T " and text[11:19] == "00:00:00":
            return text[:10]
        if is_temporal_text(text):
            return text[:19]  # to the second, never cut within a field
        return truncate(text, 19)
    if not grouped:
        return fmt_value(value, grouped=False)
    if isinstance(value, float) and not math.isfinite(value):
        return fmt_value(value)
    magnitude = abs(value)
    if magnitude >= 1e15:
        return fmt_value(float(value))  # an exponent: "1e+300", never "1e+288T"
    # below 10,000 the plain number is short enough and exact
    for threshold, divisor, suffix in ((1e12, 1e12, "T"), (1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if magnitude >= threshold:
            return f"{value / divisor:.3g}{suffix}"
    return fmt_value(float(value)) if isinstance(value, float) else f"{value:,}"


def fmt_moment_or_value(value: Any, grouped: bool = True) -> str:
    """A quantile's text: a date or timestamp to the second (its date alone at midnight) so that it
    fits its cell whole, anything else as `fmt_value` writes it."""
    if isinstance(value, str) and is_temporal_text(value):
        return _compact_number(value)
    return fmt_value(value, 40, grouped)


def svg_histogram(
    histogram: Histogram | Mapping[str, Any] | None,
    *,
    width: int = 360,
    height: int = 120,
    title: str = "",
    grouped: bool = True,
) -> Markup:
    """An equal-width histogram: one `rect.bar` per bin, each with a tooltip.

    When one bin dwarfs the others (a bulk of values and a few far outliers), bar heights are
    drawn on a log scale, so the outliers' bins stay visible beside the bulk instead of being
    flattened to a hairline, and the chart says "log scale".  ``grouped=False`` writes the
    edges of an identifier without thousands separators.  Returns an empty Markup when there
    is nothing to draw.
    """
    if histogram is None:
        return Markup("")
    if isinstance(histogram, Mapping):
        histogram = Histogram.model_validate(histogram)
    counts = list(histogram.counts)
    if not counts:
        return Markup("")
    edges = list(histogram.edges)
    if len(edges) != len(counts) + 1:
        edges = list(range(len(counts) + 1))  # mislabelled input still draws
    left, right, top, bottom = 2, 2, 16, 18
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(counts) or 1
    smallest = min((c for c in counts if c > 0), default=peak)
    log_scale = peak / smallest >= LOG_SCALE_RATIO

    def height_of(count: int) -> float:
        if log_scale:
            return math.log1p(count) / math.log1p(peak) * plot_h
        return count / peak * plot_h

    step = plot_w / len(counts)
    gap = 1.0 if step > 4 else 0.0
    parts = [
        Markup(
            '<svg class="chart histogram" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            'role="img" aria-label="{t}" preserveAspectRatio="none">'
        ).format(w=width, h=height, t=title or "histogram"),
        Markup("<title>{}</title>").format(title or "histogram"),
        Markup('<line class="axis" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>').format(
            x1=left, x2=width - right, y=top + plot_h + 0.5
        ),
    ]
    for i, count in enumerate(counts):
        bar_h = height_of(count)
        if count and bar_h < 1:
            bar_h = 1.0  # a non-empty bin must stay visible
        tip = f"{fmt_value(edges[i], 40, grouped)} – {fmt_value(edges[i + 1], 40, grouped)}: {count:,}"
        parts.append(
            Markup(
                '<rect class="bar" x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}"><title>{tip}</title></rect>'
            ).format(x=left + i * step + gap / 2, y=top + plot_h - bar_h, w=max(step - gap, 0.5), h=bar_h, tip=tip)
        )
    label_y = height - 4
    parts.append(
        Markup('<text class="label" x="{x}" y="{y}">{t}</text>').format(
            x=left, y=label_y, t=_compact_number(edges[0], grouped)
        )
    )
    parts.append(
        Markup('<text class="label" x="{x}" y="{y}" text-anchor="end">{t}</text>').format(
            x=width - right, y=label_y, t=_compact_number(edges[-1], grouped)
        )
    )
    parts.append(Markup('<text class="label" x="{x}" y="11">max {t}</text>').format(x=left, t=f"{peak:,}"))
    if log_scale:
        parts.append(
            Markup(
                '<text class="label scale" x="{x}" y="11" text-anchor="end">log scale'
                "<title>Bar heights on a log scale: the largest bin holds {r:,.0f} times the "
                "smallest, which would otherwise not show</title></text>"
            ).format(x=width - right, r=peak / smallest)
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def _bar_items(values: Any) -> list[tuple[Any, float]]:
    if values is None:
        return []
    if isinstance(values, Mapping):
        return list(values.items())
    items: list[tuple[Any, float]] = []
    for item in values:
        if isinstance(item, ValueCount):
            items.append((item.value, item.count))
        elif isinstance(item, Mapping):
            items.append((item.get("value"), item.get("count", 0)))
        else:
            label, number = item
            items.append((label, number))
    return items


def visible_whitespace(text: str) -> str:
    """Mark leading and trailing blanks, which are invisible in a label but
    are exactly what tells ' shipped' from 'shipped'."""

    def mark(part: str) -> str:
        return part.replace(" ", "␣").replace("\t", "⇥").replace("\n", "↵")

    core = text.strip()
    if not core:
        return mark(text)
    start, end = len(text) - len(text.lstrip()), len(text.rstrip())
    return mark(text[:start]) + core + mark(text[end:])


def _bar_label(value: Any, grouped: bool = True) -> str:
    if value is None:
        return "NULL"
    if value == "":
        return "(empty)"
    if isinstance(value, str):
        return visible_whitespace(fmt_value(value, 200))
    return fmt_value(value, 200, grouped)


def svg_bar(
    values: Mapping[Any, float] | Sequence[Any] | None,
    *,
    width: int = 360,
    title: str = "",
    label_chars: int = 22,
    grouped: bool = True,
) -> Markup:
    """Horizontal bars, one per (label, value): for top values and counts.

    `values` is a mapping, a list of (label, value) pairs or of ValueCount.
    Labels keep their spaces (white-space: pre) so ' Active' and 'Active'
    look different, which is the point when casing/whitespace is the issue.
    """
    items = _bar_items(values)
    if not items:
        return Markup("")
    row_h, label_w, value_w = 18, int(width * 0.42), 56
    bar_w = width - label_w - value_w - 8
    height = row_h * len(items) + 2
    peak = max((float(v or 0) for _, v in items), default=0) or 1.0
    parts = [
        Markup(
            '<svg class="chart bars" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}">'
        ).format(w=width, h=height, t=title or "bar chart"),
        Markup("<title>{}</title>").format(title or "bar chart"),
    ]
    for i, (label, number) in enumerate(items):
        y = 1 + i * row_h
        number = float(number or 0)
        full = _bar_label(label, grouped)
        shown = truncate(full, label_chars)
        length = max(number / peak * bar_w, 1.0 if number else 0.0)
        count_text = _compact_number(int(number) if number.is_integer() else number)
        parts.append(
            Markup(
                '<g class="row"><title>{full}: {count}</title>'
                '<text class="label{cls}" x="{lx}" y="{ty}" text-anchor="end">{shown}</text>'
                '<rect class="bar" x="{bx}" y="{by}" width="{bw:.2f}" height="{bh}"/>'
                '<text class="value" x="{vx:.2f}" y="{ty}">{count}</text></g>'
            ).format(
                full=full,
                count=count_text,
                shown=shown,
                cls=" special" if label is None or label == "" else "",
                lx=label_w - 6,
                ty=y + 13,
                bx=label_w,
                by=y + 3,
                bw=length,
                bh=row_h - 6,
                vx=label_w + length + 4,
            )
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def script_diff(previous: str | None, current: str | None) -> str:
    """This run's script against the previous one, as escaped HTML.

    A unified diff in `<pre class="diff">`, one span per line with class
    `add`, `del`, `hunk`, `file` or `ctx`.
    """
    if current is None and previous is None:
        return Markup("")
    if previous is None:
        return Markup('<p class="muted">First script for this table: nothing earlier to compare with.</p>')
    if current is None:
        return Markup('<p class="muted">This run wrote no script.</p>')
    lines = list(
        difflib.unified_diff(
            previous.splitlines(),
            current.splitlines(),
            fromfile="previous/catalog_script.py",
            tofile="this run/catalog_script.py",
            lineterm="",
        )
    )
    if not lines:
        return Markup('<p class="muted">Unchanged: this run reused the previous script as it was.</p>')
    added = sum(1 for text in lines if text.startswith("+") and not text.startswith("+++"))
    removed = sum(1 for text in lines if text.startswith("-") and not text.startswith("---"))
    spans = []
    for line in lines:
        if line.startswith(("+++", "---")):
            cls = "file"
        elif line.startswith("@@"):
            cls = "hunk"
        elif line.startswith("+"):
            cls = "add"
        elif line.startswith("-"):
            cls = "del"
        else:
            cls = "ctx"
        spans.append(Markup('<span class="{}">{}</span>').format(cls, line or " "))
    # block spans, so no newline between them: a newline would double the spacing
    stat = Markup('<p class="diffstat"><span class="add-n">+{}</span> <span class="del-n">−{}</span> lines</p>').format(
        added, removed
    )
    return stat + Markup('<pre class="diff">') + Markup("").join(spans) + Markup("</pre>")


TICKS = 4  # about this many steps on a y axis: enough to read a value off, few enough to read
_TICK_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_CHAR_W = 6.2  # the width of one character of the charts' 11px labels, to size the axis margin


def nice_ticks(low: float, high: float, count: int = TICKS, least_step: float = 0.0) -> list[float]:
    """Round values spanning [low, high] (1, 2, 2.5 or 5 times a power of ten apart, and at least
    ``least_step``), the first at or below ``low`` and the last at or above ``high``.  A single
    value gets a range around it; a span too wide for a float is drawn from its two ends and zero."""
    if high < low:
        low, high = high, low
    if high == low:
        pad = abs(low) * 0.1 or 1.0
        low, high = (0.0, high + pad) if low == 0 else (low - pad, high + pad)
    span = high - low
    if not math.isfinite(span):
        return sorted({low, 0.0, high})
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next((m * magnitude for m in _TICK_STEPS if m * magnitude >= raw * (1 - 1e-9)), 10 * magnitude)
    if step < least_step:
        step = least_step
    elif least_step and step == 2.5 * magnitude and magnitude < 10:
        step = 2 * magnitude  # a count's ticks stay whole: 0, 2, 4 rather than 0, 2.5, 5
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [(first + i) * step for i in range(last - first + 1)]


def _tick_text(value: float, step: float, percent: bool) -> str:
    if percent:
        digits = max(0, -math.floor(math.log10(step * 100))) if step else 0
        return f"{value * 100:.{digits}f}%"
    if abs(value) < step * 1e-6:
        value = 0.0  # the float crumbs of a tick on zero
    return _compact_number(int(value) if float(value).is_integer() and abs(value) < 1e15 else value)


def _trend_domain(values: list[float], percent: bool) -> list[float]:
    """The y axis' ticks: from zero when the values are near it (a count from 0 reads as its
    size), from just below the lowest otherwise (a health of 52.9 to 56 must not look flat);
    whole numbers when every value is one (a count of issues has no half)."""
    low, high = min(values), max(values)
    if low >= 0 and low <= high - low:
        low = 0.0
    if high <= 0 and high >= low - high:
        high = 0.0
    if percent:
        low = max(low, 0.0)
    whole = not percent and all(float(v).is_integer() for v in values)
    return nice_ticks(low, high, least_step=1.0 if whole else 0.0)


TREND_WIDTH, TREND_HEIGHT = 360, 150  # a trend chart's box, in pixels


def svg_trend(
    series: Mapping[str, Sequence[float | None]],
    labels: Sequence[str],
    *,
    title: str = "",
    percent: bool = False,
    unit: str = "",
    band: Mapping[str, Sequence[float | None]] | None = None,
) -> Markup:
    """One line per series over the runs (oldest left), for the timelapse: a y axis with round
    ticks, labelled, and its ``unit`` above it; a point per run with a value, each with a tooltip
    (run label, series, value and unit); a missing value breaks the line.

    ``band`` ({"low": [...], "high": [...]}, aligned with ``labels``) shades the range expected
    of the values where both ends are known, with a tooltip per run.  ``percent`` reads values
    in [0, 1] as percentages.  Returns an empty Markup when no series has a value.
    """
    width, height = TREND_WIDTH, TREND_HEIGHT

    def finite(points: Sequence[float | None]) -> list[float]:
        return [float(v) for v in points if v is not None and math.isfinite(float(v))]

    values = [v for points in series.values() for v in finite(points)]
    if not values or not labels:
        return Markup("")
    lows = list((band or {}).get("low") or [])
    highs = list((band or {}).get("high") or [])
    bounds = [
        (i, float(lo), float(hi))
        for i, (lo, hi) in enumerate(zip(lows, highs))
        if i < len(labels) and lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi)
    ]
    ticks = _trend_domain(values + [v for _, lo, hi in bounds for v in (lo, hi)], percent)
    bottom_v, top_v = ticks[0], ticks[-1]
    step_v = (ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    tick_texts = [_tick_text(t, step_v, percent) for t in ticks]
    left = int(8 + _CHAR_W * max(len(t) for t in tick_texts))
    right, top, bottom = 6, 20, 20
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(len(labels) - 1, 1)
    caption = "%" if percent and not unit else unit

    def y_of(value: float) -> float:
        span = top_v - bottom_v
        share = (value - bottom_v) / span if span and math.isfinite(span) else 0.5
        if not math.isfinite(share):  # a span too wide for a float: halve both before dividing
            share = (value / 2 - bottom_v / 2) / (top_v / 2 - bottom_v / 2)
        return top + plot_h - min(max(share, 0.0), 1.0) * plot_h

    def x_of(i: int) -> float:
        return left + i * step if len(labels) > 1 else left + plot_w / 2

    def shown(value: float) -> str:
        text = f"{value:.0%}" if percent else _compact_number(int(value) if float(value).is_integer() else value)
        return f"{text} {unit}" if unit and not percent else text

    parts = [
        Markup(
            '<svg class="chart trend" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}">'
        ).format(w=width, h=height, t=title or "trend"),
        Markup("<title>{}</title>").format(title or "trend"),
    ]
    if caption:
        parts.append(Markup('<text class="label unit" x="2" y="11">{}</text>').format(truncate(caption, 24)))
    for tick, text in zip(ticks, tick_texts):
        y = y_of(tick)
        parts.append(
            Markup(
                '<g class="tick"><line class="grid" x1="{x1}" y1="{y:.1f}" x2="{x2}" y2="{y:.1f}"/>'
                '<text class="label tick" x="{tx}" y="{ty:.1f}" text-anchor="end">{t}</text></g>'
            ).format(x1=left, x2=width - right, y=y, tx=left - 4, ty=y + 3.5, t=text)
        )
    parts.append(
        Markup('<line class="axis y" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}"/>').format(
            x=left - 0.5, y1=top, y2=top + plot_h
        )
    )
    parts.append(
        Markup('<line class="axis" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>').format(
            x1=left, x2=width - right, y=top + plot_h + 0.5
        )
    )
    parts.extend(_band_marks(bounds, labels, x_of, y_of, step, shown))
    for n, (name, points) in enumerate(series.items()):
        xy = [
            (x_of(i), y_of(float(v)), v) if v is not None and math.isfinite(float(v)) else (x_of(i), 0.0, None)
            for i, v in enumerate(points[: len(labels)])
        ]
        runs: list[list[tuple[float, float]]] = []
        current: list[tuple[float, float]] = []
        for x, y, v in xy:
            if v is None:
                runs.append(current)
                current = []
            else:
                current.append((x, y))
        runs.append(current)
        for run in (r for r in runs if len(r) > 1):
            parts.append(
                Markup('<polyline class="line s{n}" fill="none" points="{p}"/>').format(
                    n=n, p=" ".join(f"{x:.1f},{y:.1f}" for x, y in run)
                )
            )
        for i, (x, y, v) in enumerate(xy):
            if v is not None:
                # the tooltip on a group with a wider, unpainted target: a 2.5px dot is hard to hover
                parts.append(
                    Markup(
                        '<g class="pt"><title>{label} · {name}: {value}</title>'
                        '<circle class="hit" cx="{x:.1f}" cy="{y:.1f}" r="8"/>'
                        '<circle class="point s{n}" cx="{x:.1f}" cy="{y:.1f}" r="2.5"/></g>'
                    ).format(n=n, x=x, y=y, label=labels[i], name=name, value=shown(float(v)))
                )
    last = [(name, v) for name, points in series.items() if points and (v := points[-1]) is not None]
    legend = (
        " · ".join(f"{name} {shown(v)}" for name, v in last)
        if len(series) > 1
        else (f"last {shown(last[0][1])}" if last else "")
    )
    if bounds:
        legend = f"{legend} · shaded: expected" if legend else "shaded: expected"
    parts.append(
        Markup('<text class="label legend" x="{x}" y="11" text-anchor="end">{t}</text>').format(
            x=width - right, t=legend
        )
    )
    parts.append(
        Markup('<text class="label x" x="{x}" y="{y}">{t}</text>').format(
            x=left, y=height - 4, t=truncate(str(labels[0]), 19)
        )
    )
    if len(labels) > 1:
        parts.append(
            Markup('<text class="label x" x="{x}" y="{y}" text-anchor="end">{t}</text>').format(
                x=width - right, y=height - 4, t=truncate(str(labels[-1]), 19)
            )
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)


def _band_marks(bounds, labels, x_of, y_of, step, shown) -> list[Markup]:
    """The expected range as shaded areas: a run of consecutive runs with both ends known as one
    polygon, a lone run as a narrow bar; each run's range in a tooltip."""
    marks: list[Markup] = []
    groups: list[list[tuple[int, float, float]]] = []
    for item in bounds:
        if groups and groups[-1][-1][0] == item[0] - 1:
            groups[-1].append(item)
        else:
            groups.append([item])
    half = min(max(step / 4, 4.0), 10.0)
    for group in groups:
        if len(group) == 1:
            i, lo, hi = group[0]
            marks.append(
                Markup('<rect class="band" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"/>').format(
                    x=x_of(i) - half, y=y_of(hi), w=2 * half, h=max(y_of(lo) - y_of(hi), 1.0)
                )
            )
        else:
            upper = [f"{x_of(i):.1f},{y_of(hi):.1f}" for i, _, hi in group]
            lower = [f"{x_of(i):.1f},{y_of(lo):.1f}" for i, lo, _ in reversed(group)]
            marks.append(Markup('<polygon class="band" points="{}"/>').format(" ".join(upper + lower)))
        for i, lo, hi in group:
            marks.append(
                Markup(
                    '<rect class="band-hit" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}">'
                    "<title>{label} · expected: {lo} to {hi}</title></rect>"
                ).format(
                    x=x_of(i) - half,
                    y=y_of(hi),
                    w=2 * half,
                    h=max(y_of(lo) - y_of(hi), 1.0),
                    label=labels[i],
                    lo=shown(lo),
                    hi=shown(hi),
                )
            )
    return marks


def svg_history_chart(chart: Mapping[str, Any] | None) -> Markup:
    """A finding's chart over the runs (``{"title", "labels", "series", "percent", "unit"}``): its
    "low" and "high" series are the band expected of the others, not lines of their own."""
    if not isinstance(chart, Mapping) or not isinstance(chart.get("series"), Mapping):
        return Markup("")
    series = dict(chart["series"])
    band = {key: series.pop(key) for key in ("low", "high") if key in series}
    return svg_trend(
        series,
        list(chart.get("labels") or []),
        title=str(chart.get("title") or ""),
        percent=chart.get("percent") is True,
        unit=str(chart.get("unit") or ""),
        band=band if len(band) == 2 else None,
    )
