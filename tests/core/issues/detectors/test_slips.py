"""The corroboration of a value at a unit factor: cut off from its bulk, and not moving with its row."""

from __future__ import annotations

import math
import random

from cataloger_dagster.core.issues.detectors.magnitudes import RESOLUTION, shape
from cataloger_dagster.core.issues.detectors.slips import cut_off, events, moves_together, tail_ratio


def _hist(values: list[float]) -> dict[int, int]:
    h: dict[int, int] = {}
    for v in values:
        b = math.floor(math.log10(v) * RESOLUTION)
        h[b] = h.get(b, 0) + 1
    return h


def _bin(v: float) -> int:
    return math.floor(math.log10(v) * RESOLUTION)


def test_a_value_beyond_a_tight_bulk_is_cut_off():
    rng = random.Random(1)
    heights = [rng.gauss(170, 8) for _ in range(200)] + [57.0]
    h = _hist(heights)
    s = shape(h)
    assert s is not None and cut_off(h, _bin(57.0), s)


def test_the_last_value_of_a_thinning_tail_is_not_cut_off():
    # shares from 1% to 90%: the smallest positive one three times below the next, where the
    # next ten spread over a factor of six
    rng = random.Random(2)
    shares = [rng.uniform(8, 90) for _ in range(290)] + [1.25, 1.4, 1.9, 1.95, 3.0, 4.7, 6.2, 7.2, 7.7] + [0.27]
    h = _hist(shares)
    s = shape(h)
    assert s is not None and not cut_off(h, _bin(0.27), s)
    assert tail_ratio(h, _bin(0.27), s) < 2


def _shapes() -> dict:
    rng = random.Random(3)
    columns = {"beef": 1900, "pork": 1250, "veal": 34}
    return {c: shape(_hist([m * math.exp(rng.gauss(0, 0.3)) for _ in range(500)])) for c, m in columns.items()}


def test_a_row_whose_other_measures_fell_too_is_an_event():
    shapes = _shapes()
    assert moves_together({"pork": 124.0, "beef": 300.0, "veal": 30.0}, "pork", 10.0, shapes, RESOLUTION)


def test_a_row_whose_other_measures_are_usual_or_off_the_other_way_is_a_slip():
    shapes = _shapes()
    assert not moves_together({"pork": 124.0, "beef": 1800.0, "veal": 30.0}, "pork", 10.0, shapes, RESOLUTION)
    # swapped columns: one too low, the other too high
    assert not moves_together({"pork": 124.0, "beef": 12000.0, "veal": 30.0}, "pork", 10.0, shapes, RESOLUTION)
    # the whole row entered in other units: every measure off by the same factor
    assert not moves_together({"pork": 125.0, "beef": 190.0, "veal": 3.4}, "pork", 10.0, shapes, RESOLUTION)


def test_events_are_the_cells_whose_rows_mostly_move_together():
    shapes = _shapes()
    rows = [{"pork": 124.0, "beef": 300.0, "veal": 30.0}, {"pork": 12500.0, "beef": 1900.0, "veal": 33.0}]
    assert events(rows, "pork", [(124.0, 124.0, 10.0), (12500.0, 12500.0, 10.0)], shapes, RESOLUTION) == {0}
