from cataloger_dagster.core.guardrails.model import GUARDRAIL_KINDS, Guardrail, GuardrailSuite


def test_a_guardrail_holds_within_its_band_only():
    g = Guardrail(name="row_count", kind="row_count", sql="SELECT 1", measure="count", low=10, high=20, why="w")
    assert [g.holds(v) for v in (9, 10, 20, 21)] == [False, True, True, False]
    assert not g.holds(None)  # a count that came back empty did not run as meant
    rows = Guardrail(name="r", kind="rule", sql="SELECT 1", high=0, why="w")
    assert rows.holds(None) and rows.holds(0) and not rows.holds(1)


def test_a_suite_reads_back_what_it_stored():
    suite = GuardrailSuite(database="d", table="t", dialect="duckdb", built_at="x",
                           guardrails=[Guardrail(name="row_count", kind="row_count", sql="SELECT 1", why="w")])
    again = GuardrailSuite.model_validate_json(suite.model_dump_json())
    assert again == suite and again.named("row_count") is not None and again.named("other") is None
    assert "freshness" in GUARDRAIL_KINDS and len(set(GUARDRAIL_KINDS)) == len(GUARDRAIL_KINDS)
