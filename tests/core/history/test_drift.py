"""core/history/drift.py: PSI over re-binned histograms and top values, thresholds per kind."""

import pytest

from cataloger_dagster.core.history.digest import ColumnPoint
from cataloger_dagster.core.history.drift import PSI_THRESHOLDS, histogram_psi, kind_of, psi, rebin, top_psi


def column(kind="float", edges=(0.0, 10.0, 20.0), counts=(50, 50), top=None, count=100) -> ColumnPoint:
    return ColumnPoint(dtype=kind, kind=kind, count=count, edges=list(edges), counts=list(counts), top=top)


def test_psi_is_zero_for_the_same_shares_and_grows_with_the_shift():
    assert psi([10, 20, 30], [20, 40, 60]) == pytest.approx(0.0)
    assert 0 < psi([50, 50], [60, 40]) < psi([50, 50], [90, 10])


def test_rebinning_spreads_a_bin_evenly_and_keeps_what_falls_outside():
    assert rebin([0.0, 10.0], [100], [0.0, 5.0, 10.0]) == [0.0, 50.0, 50.0, 0.0]
    assert rebin([0.0, 10.0], [100], [5.0, 20.0]) == [50.0, 50.0, 0.0]


def test_histograms_on_other_edges_compare_and_iso_dates_read_as_times():
    same = histogram_psi(column(edges=(0.0, 10.0, 20.0), counts=(50, 50)),
                         column(edges=(0.0, 5.0, 10.0, 15.0, 20.0), counts=(25, 25, 25, 25)))
    assert same == pytest.approx(0.0, abs=1e-9)
    moved = histogram_psi(column(), column(edges=(20.0, 30.0, 40.0), counts=(50, 50)))
    assert moved > 4 * PSI_THRESHOLDS["numeric"]
    dates = column(kind="date", edges=("2026-01-01", "2026-02-01", "2026-03-01"))
    assert histogram_psi(dates, dates) == pytest.approx(0.0) and kind_of(dates) == "temporal"
    assert histogram_psi(column(edges=("a", "b", "c")), column()) is None


def test_top_values_compare_with_the_rest_as_one_more_bin():
    before = column(kind="string", top=[("paid", 70), ("open", 30)])
    assert top_psi(before, before) == pytest.approx(0.0)
    assert top_psi(before, column(kind="string", top=[("void", 90), ("paid", 10)])) > PSI_THRESHOLDS["categorical"]
    assert kind_of(before) == "categorical"
