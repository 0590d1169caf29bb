"""`charts`: value formatting, the inline SVG histogram and bar chart (parsed as XML, so they must be
well-formed), and the script diff.  (The same helpers inside a rendered page are in test_pages.py.)"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from markupsafe import Markup

from cataloger_dagster.core.models import Histogram, ValueCount
from cataloger_dagster.core.render.charts import (
    fmt_value,
    script_diff,
    svg_bar,
    svg_histogram,
    truncate,
    visible_whitespace,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert('x')</script> & \"q\""


def svg(markup: Markup) -> ET.Element:
    assert isinstance(markup, Markup)
    # the charts carry no xmlns (they are inline HTML): add it to read them as SVG
    return ET.fromstring(str(markup).replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))


def find(root: ET.Element, tag: str, cls: str | None = None) -> list[ET.Element]:
    return [e for e in root.iter(SVG + tag) if cls is None or cls in (e.get("class") or "").split()]


# --------------------------------------------------------------------------
# text
# --------------------------------------------------------------------------


@pytest.mark.parametrize("value, text", [
    (None, "—"), (True, "true"), (False, "false"),
    (1234567, "1,234,567"), (-5, "-5"),
    (0.0, "0"), (2.0, "2"), (-1500.0, "-1,500"),
    # four significant digits (the integer part always whole), exponents only far from 1
    (3.14159265, "3.142"), (1234.5678, "1,235"), (0.000123, "0.000123"), (0.5, "0.5"),
    (1e12, "1e+12"), (0.00001234, "1.234e-05"), (1e300, "1e+300"), (-0.0, "0"),
    (float("nan"), "NaN"), (float("inf"), "∞"), (float("-inf"), "−∞"),
    ({"k": "é"}, '{"k": "é"}'), ([1, "a"], '[1, "a"]'),
])
def test_fmt_value(value, text):
    assert fmt_value(value) == text


def test_fmt_value_cuts_long_text_to_the_limit():
    assert fmt_value("x" * 100) == "x" * 79 + "…" and len(fmt_value("x" * 100)) == 80
    assert fmt_value("x" * 10, limit=5) == "xxxx…"
    # numbers are never cut: a cut number would read as another number
    assert fmt_value(123456789012, limit=5) == "123,456,789,012"


def test_truncate():
    assert truncate("abc", 3) == "abc" and truncate("abcd", 3) == "ab…" and truncate("abc", 0) == "…"


def test_visible_whitespace_marks_only_the_edges():
    assert visible_whitespace(" shipped ") == "␣shipped␣"
    assert visible_whitespace("\tnew york\n") == "⇥new york↵"
    assert visible_whitespace("  ") == "␣␣"
    assert visible_whitespace("plain") == "plain"


# --------------------------------------------------------------------------
# histogram
# --------------------------------------------------------------------------


def test_histogram_bars_are_proportional_and_small_bins_stay_visible():
    root = svg(svg_histogram(Histogram(edges=[0, 5000, 20000, 40000, 1.5e6], counts=[40, 0, 500, 1000]),
                             width=400, height=120, title="amount"))
    bars = find(root, "rect", "bar")
    heights = [float(b.get("height")) for b in bars]
    plot_h = 120 - 16 - 18
    assert heights == [round(plot_h * 40 / 1000, 2), 0.0, plot_h / 2, plot_h]
    # bars stand on the same axis, side by side, left to right
    assert len({round(float(b.get("y")) + float(b.get("height")), 2) for b in bars}) == 1
    xs = [float(b.get("x")) for b in bars]
    assert xs == sorted(xs)
    tips = [b.find(SVG + "title").text for b in bars]
    assert tips[0] == "0 – 5,000: 40" and tips[3] == "40,000 – 1,500,000: 1,000"
    labels = [t.text for t in find(root, "text", "label")]
    assert labels == ["0", "1.5M", "max 1,000"]
    assert root.get("aria-label") == "amount" and root.find(SVG + "title").text == "amount"


def test_a_histogram_a_few_outliers_would_flatten_is_drawn_on_a_log_scale_and_says_so():
    # 5,000 values in the first bin, one far outlier in the last: linear heights would draw the
    # outlier as a 1-pixel hairline; on a log scale it stands a tenth of the bulk's height
    counts = [5000] + [0] * 18 + [1]
    root = svg(svg_histogram(Histogram(edges=[i * 100 for i in range(21)], counts=counts), width=400, height=120))
    heights = [float(b.get("height")) for b in find(root, "rect", "bar")]
    plot_h = 120 - 16 - 18
    assert heights[0] == plot_h and heights[-1] > 0.05 * plot_h
    scale = [t for t in find(root, "text", "scale")]
    assert [t.text for t in scale] == ["log scale"]
    assert "5,000 times" in scale[0].find(SVG + "title").text
    # an even histogram stays linear and says nothing about scale
    even = svg(svg_histogram(Histogram(edges=[0, 1, 2, 3], counts=[10, 20, 30])))
    assert find(even, "text", "scale") == []


def test_identifier_edges_and_labels_keep_their_digits():
    root = svg(svg_histogram(Histogram(edges=[1000, 1500, 2118], counts=[3, 4]), grouped=False))
    labels = [t.text for t in find(root, "text", "label")]
    assert labels[:2] == ["1000", "2118"]
    assert find(root, "rect", "bar")[1].find(SVG + "title").text == "1500 – 2118: 4"
    bars = svg(svg_bar([(2118, 3), (1001, 2)], grouped=False))
    assert [t.text for t in find(bars, "text", "label")] == ["2118", "1001"]


def test_quantiles_show_moments_to_the_second_and_far_numbers_as_exponents():
    from cataloger_dagster.core.render.charts import fmt_moment_or_value
    assert fmt_moment_or_value("9999-12-31 23:59:59.999999") == "9999-12-31 23:59:59"
    assert fmt_moment_or_value("2023-01-15T00:00:00") == "2023-01-15"
    assert fmt_moment_or_value(2118, grouped=False) == "2118" and fmt_moment_or_value(2118) == "2,118"
    labels = [t.text for t in find(svg(svg_histogram(Histogram(edges=[0, 1e300], counts=[3]))), "text", "label")]
    assert labels[:2] == ["0", "1e+300"]


def test_dates_and_timestamps_are_never_cut():
    for value in ("2023-01-15", "2023-01-15 13:45:12.123456", "9999-12-31T23:59:59+02:00", "0001-01-01"):
        assert fmt_value(value, limit=8) == value
    assert fmt_value("2023-01-15 and more words", limit=8) == "2023-01…"


def test_histogram_of_dates_mappings_and_mislabelled_input():
    dates = {"edges": ["2024-01-01T00:00:00", "2024-06-01T00:00:00", "2024-12-31T12:30:00"], "counts": [3, 4]}
    labels = [t.text for t in find(svg(svg_histogram(dates)), "text", "label")]
    # a midnight edge says no more than its date
    assert labels[:2] == ["2024-01-01", "2024-12-31T12:30:00"]
    # edges that do not fit the counts: still drawn, on bin numbers
    root = svg(svg_histogram(Histogram(edges=[0, 1], counts=[1, 2, 3])))
    assert len(find(root, "rect", "bar")) == 3
    assert [t.text for t in find(root, "text", "label")][:2] == ["0", "3"]


def test_histogram_with_nothing_to_draw_is_empty():
    assert svg_histogram(None) == "" and svg_histogram(Histogram(edges=[0], counts=[])) == ""
    all_zero = svg(svg_histogram(Histogram(edges=[0, 1, 2], counts=[0, 0])))
    assert [float(b.get("height")) for b in find(all_zero, "rect", "bar")] == [0.0, 0.0]


def test_histogram_title_is_text_not_markup():
    out = str(svg_histogram(Histogram(edges=[0, 1], counts=[1]), title=HOSTILE))
    assert "<script>" not in out
    assert svg(Markup(out)).find(SVG + "title").text == HOSTILE


# --------------------------------------------------------------------------
# bars
# --------------------------------------------------------------------------


def rows(markup: Markup) -> list[dict]:
    out = []
    for g in find(svg(markup), "g", "row"):
        label = [t for t in g.iter(SVG + "text") if "label" in t.get("class").split()][0]
        value = [t for t in g.iter(SVG + "text") if t.get("class") == "value"][0]
        out.append({"title": g.find(SVG + "title").text, "label": label.text,
                    "special": "special" in label.get("class").split(),
                    "width": float(g.find(SVG + "rect").get("width")), "value": value.text})
    return out


def test_bars_from_every_input_shape_agree():
    shapes = [
        {"shipped": 10, "void": 5},
        [("shipped", 10), ("void", 5)],
        [{"value": "shipped", "count": 10}, {"value": "void", "count": 5}],
        [ValueCount(value="shipped", count=10), ValueCount(value="void", count=5)],
    ]
    drawn = [rows(svg_bar(s)) for s in shapes]
    assert all(d == drawn[0] for d in drawn)
    assert [r["label"] for r in drawn[0]] == ["shipped", "void"]
    assert drawn[0][1]["width"] == pytest.approx(drawn[0][0]["width"] / 2)


def test_bar_labels_show_nulls_blanks_and_edge_spaces():
    got = rows(svg_bar([(None, 3), ("", 2), (" Active", 1), ("Active", 1), ({"a": 1}, 0)]))
    assert [(r["label"], r["special"]) for r in got] == [
        ("NULL", True), ("(empty)", True), ("␣Active", False), ("Active", False), ('{"a": 1}', False)]
    assert got[-1]["width"] == 0.0 and got[-1]["value"] == "0"


def test_bar_labels_are_cut_but_their_title_is_whole_and_counts_compact():
    long = "a very long category name indeed"
    (row,) = rows(svg_bar({long: 12345}, label_chars=10))
    assert row["label"] == "a very lo…" and row["title"] == f"{long}: 12.3k" and row["value"] == "12.3k"
    (row,) = rows(svg_bar({"x": 2.5}))
    assert row["value"] == "2.5"


def test_bars_escape_labels_and_draw_nothing_for_nothing():
    out = svg_bar({HOSTILE: 1}, title=HOSTILE, label_chars=200)
    assert "<script>" not in str(out)
    assert rows(out)[0]["label"] == HOSTILE
    assert svg_bar(None) == "" and svg_bar({}) == "" and svg_bar([]) == ""


# --------------------------------------------------------------------------
# script diff
# --------------------------------------------------------------------------


def test_script_diff_states():
    assert script_diff(None, None) == ""
    assert "First script" in script_diff(None, "x = 1\n")
    assert script_diff("x = 1\n", None) == '<p class="muted">This run wrote no script.</p>'
    assert "Unchanged" in script_diff("x = 1\n", "x = 1\n")


def test_script_diff_counts_and_classes_each_line():
    out = str(script_diff("a = 1\nb = '<i>'\nc = 3\n", "a = 1\nb = '<b>'\nc = 3\nd = 4\ne = 5\n"))
    assert '<span class="add-n">+3</span> <span class="del-n">−1</span> lines' in out
    spans = ET.fromstring(out[out.index("<pre"):]).findall("span")
    kinds = [s.get("class") for s in spans]
    assert kinds[:3] == ["file", "file", "hunk"]
    assert [s.text for s in spans if s.get("class") == "del"] == ["-b = '<i>'"]
    assert [s.text for s in spans if s.get("class") == "add"] == ["+b = '<b>'", "+d = 4", "+e = 5"]
    # code is text, not markup
    assert "<i>" not in out and "<b>" not in out and "&lt;b&gt;" in out
    assert kinds.count("ctx") == 2


# --------------------------------------------------------------------------
# trend (the timelapse)
# --------------------------------------------------------------------------


def test_trend_draws_a_point_per_value_and_breaks_the_line_at_a_gap():
    from cataloger_dagster.core.render.charts import svg_trend

    out = svg_trend({"open": [3, None, 5, 4], HOSTILE: [1, 1, 1, 1]}, ["r1", "r2", HOSTILE, "r4"], title=HOSTILE)
    root = svg(out)
    assert len(find(root, "circle", "s0")) == 3 and len(find(root, "circle", "s1")) == 4
    assert len(find(root, "polyline", "s0")) == 1      # r1 stands alone; r3-r4 is one line
    assert len(find(root, "polyline", "s1")) == 1
    assert "<script>" not in str(out)
    tips = [t.text for t in root.iter(SVG + "title")]
    assert f"{HOSTILE} · open: 5" in tips


def test_trend_reads_rates_as_percentages_and_draws_nothing_without_values():
    from cataloger_dagster.core.render.charts import svg_trend

    root = svg(svg_trend({"pass rate": [0.5, 1.0]}, ["a", "b"], percent=True))
    assert "b · pass rate: 100%" in [t.text for t in root.iter(SVG + "title")]
    ys = [float(c.get("cy")) for c in find(root, "circle", "point")]
    assert ys[0] > ys[1]                               # higher is up
    assert svg_trend({"x": [None, None]}, ["a", "b"]) == Markup("")


# --------------------------------------------------------------------------
# trend axes: ticks, labels, units, the expected band, a tooltip per point
# --------------------------------------------------------------------------

CHAR_W = 6.2  # the chart's own estimate of a label character's width (11px font)


def trend(*args, **kwargs) -> ET.Element:
    from cataloger_dagster.core.render.charts import svg_trend

    return svg(svg_trend(*args, **kwargs))


def box_of(root: ET.Element) -> tuple[float, float]:
    _, _, w, h = (float(v) for v in root.get("viewBox").split())
    return w, h


def ticks_of(root: ET.Element) -> list[tuple[str, float]]:
    """(label, y of its grid line) per y-axis tick, top to bottom."""
    out = []
    for g in find(root, "g", "tick"):
        out.append((g.find(SVG + "text").text, float(g.find(SVG + "line").get("y1"))))
    return sorted(out, key=lambda t: t[1])


def assert_inside(root: ET.Element) -> None:
    """Every label, point and band inside the chart's box, a label's estimated width included."""
    w, h = box_of(root)
    for t in find(root, "text"):
        x, y, text = float(t.get("x")), float(t.get("y")), t.text or ""
        width = len(text) * CHAR_W
        start = x - width if t.get("text-anchor") == "end" else x
        assert 0 <= start and start + width <= w + 0.5, (text, start, width, w)
        assert 8 <= y <= h, (text, y)
    for c in find(root, "circle", "point"):
        assert 0 <= float(c.get("cx")) <= w and 0 <= float(c.get("cy")) <= h
    for r in find(root, "rect", "band") + find(root, "rect", "band-hit"):
        assert 0 <= float(r.get("y")) and float(r.get("y")) + float(r.get("height")) <= h + 0.5


def value_at(ticks: list[tuple[str, float]], y: float) -> float:
    """Read a value off the axis as a reader does: between the two nearest ticks."""
    (t1, y1), (t2, y2) = ticks[0], ticks[-1]
    v1, v2 = float(t1.replace(",", "")), float(t2.replace(",", ""))
    return v1 + (y - y1) / (y2 - y1) * (v2 - v1)


def test_trend_has_a_labelled_y_axis_a_unit_and_a_tooltip_per_point():
    root = trend({"health": [52.9, 54.0, 56.0]}, ["r1", "r2", "r3"], title="Health", unit="of 100")
    ticks = ticks_of(root)
    assert len(ticks) >= 3
    labels = [t for t, _ in ticks]
    # round values, evenly spaced, the highest on top, spanning every value
    values = [float(t) for t in labels]
    assert values == sorted(values, reverse=True)
    assert len({round(a - b, 6) for a, b in zip(values, values[1:])}) == 1
    assert values[-1] <= 52.9 and values[0] >= 56
    # 52.9 to 56 is not drawn flat: the axis does not start at zero, and the points differ visibly
    assert values[-1] > 0
    ys = [float(c.get("cy")) for c in find(root, "circle", "point")]
    assert ys[0] - ys[2] > 40
    # each point sits where the axis says its value is
    for y, v in zip(ys, [52.9, 54.0, 56.0]):
        assert value_at(ticks, y) == pytest.approx(v, abs=0.05)
    assert [t.text for t in find(root, "text", "unit")] == ["of 100"]
    tips = [g.find(SVG + "title").text for g in find(root, "g", "pt")]
    assert tips == ["r1 · health: 52.9 of 100", "r2 · health: 54 of 100", "r3 · health: 56 of 100"]
    assert_inside(root)


def test_a_count_near_zero_is_drawn_from_zero_with_whole_ticks():
    ticks = ticks_of(trend({"rows": [3, 10, 7]}, ["a", "b", "c"], unit="rows"))
    assert ticks[-1][0] == "0" and float(ticks[0][0]) >= 10
    # a count of issues has no half: its ticks are whole numbers, however few the issues
    for values in ([0, 2, 1], [0, 1], [5, 5], [0, 10]):
        labels = [t for t, _ in ticks_of(trend({"open": values}, [str(i) for i in range(len(values))]))]
        assert all(float(t).is_integer() for t in labels), (values, labels)
    # measures keep their fractions
    assert any("." in t for t, _ in ticks_of(trend({"v": [0.1, 0.3]}, ["a", "b"])))


def test_trend_with_one_point_has_an_axis_around_it_and_its_tooltip():
    root = trend({"rows": [1200]}, ["only run"], unit="rows")
    ticks = ticks_of(root)
    assert len(ticks) >= 2
    (point,) = find(root, "circle", "point")
    w, _ = box_of(root)
    assert 0 < float(point.get("cx")) < w
    assert value_at(ticks, float(point.get("cy"))) == pytest.approx(1200, rel=0.01)
    assert [g.find(SVG + "title").text for g in find(root, "g", "pt")] == ["only run · rows: 1,200 rows"]
    assert find(root, "polyline") == []
    assert_inside(root)


def test_trend_with_no_point_draws_nothing():
    from cataloger_dagster.core.render.charts import svg_trend

    assert svg_trend({"rows": []}, []) == Markup("")
    assert svg_trend({"rows": [None, None]}, ["a", "b"]) == Markup("")
    assert svg_trend({}, ["a"]) == Markup("")


def test_trend_with_many_points_negative_values_and_a_zero_line():
    values = [(-1) ** i * i * 3.5 for i in range(60)]
    labels = [f"2026-01-{i:02d}" for i in range(60)]
    root = trend({"change": values}, labels, unit="rows")
    ticks = ticks_of(root)
    numbers = [float(t.replace(",", "")) for t, _ in ticks]
    assert numbers[-1] <= min(values) < 0 < max(values) <= numbers[0]
    assert 0.0 in numbers
    points = find(root, "circle", "point")
    assert len(points) == 60 and len(find(root, "g", "pt")) == 60
    span = numbers[0] - numbers[-1]
    for c, v in zip(points, values):  # to a tenth of a pixel, as the coordinates are written
        assert value_at(ticks, float(c.get("cy"))) == pytest.approx(v, abs=span * 0.002)
    xs = [float(c.get("cx")) for c in points]
    assert xs == sorted(xs) and len(set(xs)) == 60
    assert_inside(root)


@pytest.mark.parametrize("values", [
    [1e300, 2e300, 5e299],
    [-1e300, 1e300],
    [1.5e12, 3e12],
    [-7e9, -2e9],
    [0.0001, 0.0003],
    [float("inf"), 5.0, float("nan")],
])
def test_trend_with_huge_tiny_and_non_finite_values_keeps_its_labels_in_the_box(values):
    root = trend({"v": values}, [f"run {i}" for i in range(len(values))], unit="units")
    ticks = ticks_of(root)
    assert len(ticks) >= 2 and all(t for t, _ in ticks)
    assert all(len(t) <= 10 for t, _ in ticks)  # compact: "1e+300", "3T", never thirty digits
    finite = [v for v in values if v == v and abs(v) != float("inf")]
    assert len(find(root, "circle", "point")) == len(finite)
    assert_inside(root)


def test_percent_axis_and_tooltips_read_as_percentages():
    root = trend({"pass rate": [0.82, 0.9, 0.95]}, ["a", "b", "c"], percent=True)
    assert all(t.endswith("%") for t, _ in ticks_of(root))
    assert [t.text for t in find(root, "text", "unit")] == ["%"]
    assert "c · pass rate: 95%" in [g.find(SVG + "title").text for g in find(root, "g", "pt")]
    assert_inside(root)


def test_the_expected_band_is_shaded_with_its_range_in_a_tooltip():
    from cataloger_dagster.core.render.charts import svg_history_chart

    chart = {
        "title": "rows per run", "labels": ["r1", "r2", "r3", "r4"], "percent": False, "unit": "rows",
        "series": {"rows": [100.0, 104.0, 103.0, 240.0], "low": [None, None, None, 95.0],
                   "high": [None, None, None, 115.0]},
    }
    root = svg(svg_history_chart(chart))
    # the band is no line of its own
    assert len(find(root, "circle", "point")) == 4 and len(find(root, "polyline")) == 1
    (band,) = find(root, "rect", "band")
    ticks = ticks_of(root)
    top, bottom = float(band.get("y")), float(band.get("y")) + float(band.get("height"))
    assert value_at(ticks, top) == pytest.approx(115, abs=0.5)
    assert value_at(ticks, bottom) == pytest.approx(95, abs=0.5)
    # the band stands at the run it judges (the last)
    last = find(root, "circle", "point")[-1]
    assert float(band.get("x")) < float(last.get("cx")) < float(band.get("x")) + float(band.get("width"))
    (hit,) = find(root, "rect", "band-hit")
    assert hit.find(SVG + "title").text == "r4 · expected: 95 rows to 115 rows"
    assert "shaded: expected" in find(root, "text", "legend")[0].text
    assert_inside(root)


def test_a_band_over_several_runs_is_one_area():
    root = trend({"v": [5, 6, 7]}, ["a", "b", "c"], band={"low": [4, 5, 6], "high": [6, 7, 8]})
    (area,) = find(root, "polygon", "band")
    assert len(area.get("points").split()) == 6
    assert len(find(root, "rect", "band-hit")) == 3
    assert ticks_of(root)[0][0] == "8" or float(ticks_of(root)[0][0]) >= 8  # the band fits in the axis
    assert_inside(root)


def test_nice_ticks_are_round_and_cover_the_range():
    from cataloger_dagster.core.render.charts import nice_ticks

    assert nice_ticks(0, 100) == [0, 25, 50, 75, 100]
    assert nice_ticks(52.9, 56) == [52, 53, 54, 55, 56]
    assert nice_ticks(0, 0) == [0, 0.25, 0.5, 0.75, 1]
    ticks = nice_ticks(-1.7e308, 1.7e308)
    assert ticks[0] <= -1.7e308 and ticks[-1] >= 1.7e308
