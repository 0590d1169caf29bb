"""Which findings of a run alert people, and the message's three forms."""

from cataloger_dagster.core.alerts import NO_OWNER, AlertMessage, alerts_of, owner_of, unsent
from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES as HISTORY_TYPES, AnalysisResultModel, CodeInvestigation, IssueModel, ReviewMark


def issue(id, severity="high", type="missing_values", state=None, rows=(10, 40)):
    review = None if state is None else ReviewMark(state=state, verdict="dismiss", reviewer="ann", at="2026-01-01",
                                                   reviewed_id=id, rows_then=rows[0], rows_now=rows[1])
    return IssueModel(id=id, type=type, severity=severity, description=f"{id} is off", affectedColumns=["c"],
                      suggestedAction="look", category="quick_fixes", review=review)


def result(*issues):
    return AnalysisResultModel(issues=list(issues), summary="", completedAt="now")


def investigation(issue_id, verdict):
    return CodeInvestigation(issue_id=issue_id, code="", output=None, success=True, verdict=verdict)


def test_kinds_and_what_alerts_nobody():
    found = alerts_of("t", "team", result(
        issue("a"), issue("b", severity="medium"), issue("c", severity="low", state="worse_since_dismissed"),
        issue("d", severity="low", state="dismissed"), issue("e", severity="medium", type="schema_change"),
        issue("f", severity="low", state="changed_since_expected"), issue("g"),
    ), [investigation("g", "refuted"), investigation("a", "confirmed")], page="P", evidence="E")
    kinds = {a.issue_id: a.kind for a in found}
    assert kinds == {"a": "new_high", "c": "regression", "e": "history", "f": "regression"}
    by_id = {a.issue_id: a for a in found}
    assert by_id["a"].page == "P#issue-1" and by_id["a"].evidence == "P#inv-2"  # its investigation on the page
    assert by_id["e"].page == "P#issue-5" and by_id["e"].evidence == "E"
    assert by_id["c"].detail == "worse since dismissed; 10 -> 40 rows"
    assert set(HISTORY_TYPES) == {"volume_anomaly", "stale_table", "schema_change", "distribution_drift"}


def test_each_alert_once_and_again_when_worse_again():
    first = alerts_of("t", "o", result(issue("c", state="worse_since_dismissed")), [], page="P", evidence="E")
    same = alerts_of("t", "o", result(issue("c", state="worse_since_dismissed")), [], page="P2", evidence="E2")
    worse = alerts_of("t", "o", result(issue("c", state="worse_since_dismissed", rows=(10, 90))), [],
                      page="P", evidence="E")
    sent = [a.key for a in first]
    assert unsent(same, sent) == [] and unsent(worse, sent) == worse


def test_owners():
    assert owner_of("orders", {"orders": "sales", "*": "data"}) == "sales"
    assert owner_of("other", {"orders": "sales", "*": "data"}) == "data"
    assert owner_of("other", {}) == NO_OWNER


def test_message_forms_group_by_owner_and_keep_names_inert():
    alerts = (alerts_of("orders", "sales", result(issue("x")), [], page="P1", evidence="E1")
              + alerts_of("<!here>", "data", result(issue("y & <z>")), [], page="P2", evidence="E2"))
    message = AlertMessage(run_id="r", alerts=alerts)
    assert list(message.by_owner) == ["data", "sales"]
    assert message.title == "cataloger: 2 alerts on <!here>, orders"
    text = message.as_text()
    assert text.index("Owner: data") < text.index("Owner: sales") and "evidence: E1" in text
    data = message.as_json()
    assert [o["owner"] for o in data["owners"]] == ["data", "sales"]
    assert data["owners"][1]["tables"][0]["alerts"][0]["page"] == "P1#issue-1"
    slack = message.as_slack()
    sections = "\n".join(b["text"]["text"] for b in slack["blocks"] if b["type"] == "section")
    assert "<!here>" not in sections and "&lt;!here&gt;" in sections and "y &amp; &lt;z&gt;" in sections
    assert "<P1#issue-1|page>" in sections
