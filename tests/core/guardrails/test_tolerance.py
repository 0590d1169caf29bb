from cataloger_dagster.core.guardrails import tolerance


def test_a_first_run_gets_a_wide_row_band_and_history_narrows_it():
    low, high, said = tolerance.rows_band(1000, [])
    assert (low, high) == (500, 1500) and "no history" in said
    low, high, said = tolerance.rows_band(1000, [960, 980])  # moved at most ~2% a run
    assert (low, high) == (900, 1100) and "3 runs" in said  # never tighter than 10%
    low, high, _ = tolerance.rows_band(1000, [500])  # doubled last time
    assert low == 0 and high == 3000


def test_a_share_band_spans_the_runs_widened_by_itself():
    assert [round(x, 9) for x in tolerance.share_band(0.1, [])] == [0.09, 0.11]
    low, high = tolerance.share_band(0.3, [0.1, 0.2])
    assert round(low, 6) == 0 and round(high, 6) == 0.5


def test_a_guarded_finding_may_grow_by_a_tenth():
    assert tolerance.grown(20) == 22 and tolerance.grown(None) == 0
    assert tolerance.grown_share(0.5) == 0.55 and tolerance.grown_share(0.0) == 0.01


def test_a_range_widens_by_a_tenth_of_its_span_over_the_runs():
    assert tolerance.widened(0, 100, [(-50, 50)]) == (-65, 115)
