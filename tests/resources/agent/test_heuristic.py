import duckdb
import pytest

from cataloger_dagster.core.models import DatasetUnderstandingModel, IssueModel
from cataloger_dagster.resources.agent import HeuristicAgent, heuristic_analysis
from cataloger_dagster.resources.database.resource import DatabaseResource
from cataloger_dagster.core.profile.profiling import compute_profile


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "shop.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute(
            """CREATE TABLE orders AS SELECT range AS order_id, range % 40 AS customer_id,
               ['shipped', 'pending', 'cancelled'][range % 3 + 1] AS status,
               DATE '2024-01-01' + (range % 300)::INT AS order_date,
               CASE WHEN range % 4 = 0 THEN NULL ELSE (range % 97) * 1.25 END AS amount,
               'user' || range || '@example.com' AS email
               FROM range(400)"""
        )
    db = DatabaseResource(url=f"duckdb://{path}")
    return compute_profile(db.table("orders"), database="shop", table_name="orders",
                           fingerprint=db.fingerprint("orders"))


def test_heuristic_understanding_follows_the_contract(profile):
    understanding, usage = HeuristicAgent().understand(profile)
    assert isinstance(understanding, DatasetUnderstandingModel)
    assert usage.agent == "heuristic" and usage.tokens == 0
    assert understanding.summary.rowCount == 400 and understanding.summary.columnCount == 6
    by_name = {c.name: c for c in understanding.columns}
    assert list(by_name) == [c.name for c in profile.columns]
    assert by_name["order_date"].dataType == "date"
    assert by_name["amount"].dataType == "numeric"
    assert by_name["status"].dataType == "categorical"
    assert "customer" in by_name["customer_id"].description.lower()
    assert "25% missing" in by_name["amount"].description
    assert "order_id" in understanding.summary.description  # the key was recognised
    assert any("customer_id" in o for o in understanding.summary.observations)
    # deterministic: the same profile gives the same understanding
    assert HeuristicAgent().understand(profile)[0] == understanding


def test_heuristic_analysis_orders_by_severity_and_compares_with_previous(profile):
    def issue(id_, severity):
        return IssueModel(id=id_, type="missing_values", severity=severity, description="d",
                          affectedColumns=["amount"], suggestedAction="a", category="quick_fixes")

    first = heuristic_analysis(profile, [issue("b", "low"), issue("a", "high")])
    assert [i.id for i in first.issues] == ["a", "b"]
    assert "1 high" in first.summary and first.completedAt.endswith("Z")
    second = heuristic_analysis(profile, [issue("a", "high"), issue("c", "medium")], previous=first)
    assert "1 new, 1 resolved" in second.summary
    assert "No data-quality issues" in heuristic_analysis(profile, []).summary


def test_the_owners_documentation_is_kept_over_the_guess(profile, tmp_path):
    from cataloger_dagster.core.writeback.documented import Documented

    documented = Documented(description="Orders as the shop records them.", columns={"amount": "In euros, VAT included."})
    understanding, _ = HeuristicAgent().understand(profile, documented=documented)
    by_name = {c.name: c.description for c in understanding.columns}
    assert understanding.summary.description == "Orders as the shop records them."
    assert by_name["amount"] == "In euros, VAT included."
    assert by_name["status"] == {c.name: c.description for c in HeuristicAgent().understand(profile)[0].columns}["status"]
