"""What a table's run alerts people about, and the message that says it (no Dagster, no network).

A run alerts on three kinds of finding, each once (`key`): a new high-severity issue its
investigation did not refute, a regression (a dismissed issue that came back worse, or an
expected one that changed: the review memory's marks), and a history anomaly (the issue types
the stored history raises).  One message per Dagster run, its tables grouped by owner.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterable, Mapping, Optional

from cataloger_dagster.core.investigate.outcome import standing
from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES, AnalysisResultModel, CodeInvestigation, IssueModel
from cataloger_dagster.core.shown import visible

REGRESSIONS = {"worse_since_dismissed": "worse since dismissed", "changed_since_expected": "changed since expected"}
KINDS = {"new_high": "new high-severity issue", "regression": "regression", "history": "history anomaly"}
NO_OWNER = "(no owner)"


@dataclass(frozen=True)
class Alert:
    table: str
    owner: str
    kind: str  # a key of KINDS
    issue_id: str
    issue_type: str
    severity: str
    description: str
    page: str  # the catalog page, at the issue
    evidence: str  # the investigation's evidence on the page, or the issues' JSON
    detail: str = ""  # a regression's figures

    @property
    def key(self) -> str:
        """What makes two alerts the same alert: sent once, however many runs raise it."""
        return f"{self.kind}:{self.issue_id}:{self.detail}"


@dataclass
class AlertMessage:
    run_id: str
    alerts: list[Alert] = field(default_factory=list)

    @property
    def by_owner(self) -> dict[str, dict[str, list[Alert]]]:
        grouped: dict[str, dict[str, list[Alert]]] = defaultdict(lambda: defaultdict(list))
        for alert in self.alerts:
            grouped[alert.owner][alert.table].append(alert)
        return {o: dict(t) for o, t in sorted(grouped.items())}

    def protected(self, values: Callable[[str], str]) -> "AlertMessage":
        """The message as it may leave: the text of each alert's issue (its description and
        evidence) through `values` (the sensitive-values policy's `text`)."""
        return AlertMessage(
            run_id=self.run_id,
            alerts=[replace(a, description=values(a.description), evidence=values(a.evidence)) for a in self.alerts],
        )

    def per_table(self) -> list["AlertMessage"]:
        """One message per table of this one, in the order the tables first appear."""
        tables: dict[str, list[Alert]] = {}
        for alert in self.alerts:
            tables.setdefault(alert.table, []).append(alert)
        return [AlertMessage(run_id=self.run_id, alerts=alerts) for alerts in tables.values()]

    @property
    def title(self) -> str:
        """One line of text (an e-mail subject, a log line): names with their control characters
        shown as escapes."""
        tables = sorted({visible(a.table) for a in self.alerts})
        shown = ", ".join(tables[:3]) + (f" and {len(tables) - 3} more" if len(tables) > 3 else "")
        return f"cataloger: {len(self.alerts)} alert{'s' * (len(self.alerts) != 1)} on {shown}"

    def as_text(self) -> str:
        lines = [self.title, f"Dagster run {self.run_id}", ""]
        for owner, tables in self.by_owner.items():
            lines.append(f"Owner: {owner}")
            for table, alerts in tables.items():
                lines.append(f"  {table} (page: {alerts[0].page.split('#')[0]})")
                for a in alerts:
                    lines.append(
                        f"  - [{KINDS[a.kind]}] {a.severity} {a.issue_type} {a.issue_id}: {a.description}"
                        + (f" ({a.detail})" if a.detail else "")
                    )
                    lines.append(f"    page: {a.page}")
                    lines.append(f"    evidence: {a.evidence}")
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def as_json(self) -> dict:
        return {
            "title": self.title,
            "run_id": self.run_id,
            "owners": [
                {
                    "owner": owner,
                    "tables": [{"table": t, "alerts": [asdict(a) for a in alerts]} for t, alerts in tables.items()],
                }
                for owner, tables in self.by_owner.items()
            ],
        }

    def as_slack(self) -> dict:
        """A Slack incoming-webhook payload: `text` (notifications) and mrkdwn blocks."""
        blocks = [{"type": "header", "text": {"type": "plain_text", "text": self.title[:150]}}]
        for owner, tables in self.by_owner.items():
            for table, alerts in tables.items():
                rows = [f"*{_slack(table)}* · owner {_slack(owner)}"]
                rows += [
                    f"• {KINDS[a.kind]}: `{_slack(a.issue_id)}` {_slack(a.description)}"
                    + (f" ({_slack(a.detail)})" if a.detail else "")
                    + f" <{_slack(a.page)}|page> · <{_slack(a.evidence)}|evidence>"
                    for a in alerts
                ]
                # a section's text is limited to 3000 characters
                blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(rows)[:3000]}})
        return {"text": self.title, "blocks": blocks[:50]}


def _slack(text: str) -> str:
    # names are data: Slack reads <...> as links and mentions, & as an entity
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _kind(issue: IssueModel) -> tuple[Optional[str], str]:
    mark = issue.review
    if mark is not None and mark.state in REGRESSIONS:
        figures = f"{mark.rows_then} -> {mark.rows_now} rows" if mark.rows_now is not None else ""
        added = f"new columns {', '.join(mark.new_columns)}" if mark.new_columns else ""
        return "regression", "; ".join(p for p in (REGRESSIONS[mark.state], figures, added) if p)
    if issue.type in HISTORY_ISSUE_TYPES:
        return "history", ""
    if issue.severity == "high":
        return "new_high", ""
    return None, ""


def alerts_of(
    table: str,
    owner: str,
    issues: AnalysisResultModel,
    investigations: list[CodeInvestigation],
    *,
    page: str,
    evidence: str,
) -> list[Alert]:
    """The alerts a run's issues call for; `page` and `evidence` are the run's page and issues JSON.
    An issue its investigation refuted alerts nobody (it counts nowhere)."""
    anchors = {issue.id: f"issue-{i}" for i, issue in enumerate(issues.issues, 1)}  # as the page numbers them
    inv_anchors = {inv.issue_id: f"inv-{i}" for i, inv in enumerate(investigations, 1) if inv.issue_id}
    found = []
    for issue in standing(issues, investigations).issues:
        kind, detail = _kind(issue)
        if kind is None:
            continue
        proof = f"{page}#{inv_anchors[issue.id]}" if issue.id in inv_anchors else evidence
        found.append(
            Alert(
                table=table,
                owner=owner or NO_OWNER,
                kind=kind,
                issue_id=issue.id,
                issue_type=issue.type,
                severity=issue.severity,
                description=issue.description,
                page=f"{page}#{anchors[issue.id]}",
                evidence=proof,
                detail=detail,
            )
        )
    return found


def unsent(alerts: Iterable[Alert], sent: Iterable[str]) -> list[Alert]:
    done = set(sent)
    return [a for a in alerts if a.key not in done]


def owner_of(table: str, owners: Mapping[str, str]) -> str:
    return owners.get(table) or owners.get("*") or NO_OWNER
