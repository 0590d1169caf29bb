"""The HTML pages: one catalog page per table and the index over all tables.

Templates are package data, `cataloger_dagster/templates/pages/`, read through
`jinja2.PackageLoader` from a checkout and from an installed wheel alike.
Autoescaping is on for every template, so values from the data are always text.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import jinja2
from markupsafe import Markup, escape
from pydantic import BaseModel, Field

from cataloger_dagster import __version__
from cataloger_dagster.core.sensitive.classes import label as sensitive_label
from cataloger_dagster.core.sensitive.hypotheses import with_verdicts
from cataloger_dagster.core.models import (
    SEVERITIES,
    AnalysisResultModel,
    CodeInvestigation,
    DatasetUnderstandingModel,
    IssueModel,
    TableProfile,
    pass_rate,
)
from cataloger_dagster.core.families import families_of
from cataloger_dagster.core.fixes.sql import shown_script
from cataloger_dagster.core.layout import normalize_timestamp
from cataloger_dagster.core.investigate.outcome import dismissed, standing
from cataloger_dagster.core.grammar import count_noun, noun_for, verb_for
from cataloger_dagster.core.health import health_band, health_score
from cataloger_dagster.core.render.charts import (
    fmt_moment_or_value,
    fmt_value,
    script_diff,
    svg_bar,
    svg_histogram,
    svg_history_chart,
    svg_trend,
)
from cataloger_dagster.core.render.evidence import evidence_blocks, raw_json
from cataloger_dagster.core.render.formats import generation_time, identifier_columns, time_ago
from cataloger_dagster.core.render.index_search import (
    filter_choices,
    inert_json,
    newest_findings,
    personal_rows,
    search_data,
    worst_tables,
)
from cataloger_dagster.core.render.reference_graph import svg_reference_graph
from cataloger_dagster.core.reviews.commands import not_personal_command, review_control
from cataloger_dagster.core.reviews.record import NOTE_LIMIT, reviewable

__all__ = [
    "IndexColumn",
    "IndexEntry",
    "IndexFinding",
    "render_catalog_page",
    "render_index",
    "svg_histogram",
    "svg_bar",
    "script_diff",
    "template_environment",
    "pass_rate_of",
]

LINK_LABELS = {
    "index": "All tables",
    "recent_summary": "What changed since the last run",
    "script": "Session script (catalog_script.py)",
    "summary_script": "Summary script",
    "guardrails_sql": "Guardrails (SQL)",
    "guardrails_soda": "Guardrails for Soda",
    "guardrails_dbt": "Guardrails for dbt",
    "guardrails_gx": "Guardrails for Great Expectations",
    "metrics": "Script metrics",
    "profile": "Profile (JSON)",
    "issues": "Issues (JSON)",
    "investigations": "Investigations (JSON)",
    "previous": "Previous run",
}


def _safe_href(url: Any) -> str:
    """Relative links and http(s) only: a `javascript:` link is an XSS."""
    text = str(url or "").strip()
    scheme = urlsplit(text).scheme.lower()
    return text if scheme in ("", "http", "https") else "#"


def _pct(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:.{digits}f}%"


def _to_json(value: Any) -> str:
    """Short structures on one line, longer ones indented."""
    compact = json.dumps(value, default=str, ensure_ascii=False)
    if len(compact) <= 90:
        return compact
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


def _open_for(since: Any, now: datetime | None = None) -> str:
    """How long an issue has been open, as a person says it: "3 days", "less than a day"."""
    try:
        start = datetime.strptime(normalize_timestamp(str(since)), "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return "an unknown time"
    days = ((now or datetime.now(timezone.utc)).replace(tzinfo=None) - start).days
    if days < 1:
        return "less than a day"
    return count_noun(days, "day")


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (dict, list, tuple))


@functools.lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("cataloger_dagster", "templates"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "htm", "xml", "j2"), default_for_string=True, default=True
        ),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        fmt=fmt_value,
        pct=_pct,
        tojson_pretty=_to_json,
        safe_href=_safe_href,
        shown_script=shown_script,
        open_for=_open_for,
        ago=time_ago,
        quantile=fmt_moment_or_value,
        count_noun=count_noun,
        noun=lambda noun, n: noun_for(n, noun),
        verb=lambda verb, n: verb_for(n, verb),
        raw_json=raw_json,
        sensitive_label=sensitive_label,
    )
    env.tests["scalar"] = _is_scalar
    env.globals.update(
        svg_histogram=svg_histogram,
        svg_bar=svg_bar,
        svg_trend=svg_trend,
        svg_history_chart=svg_history_chart,
        version=__version__,
        health_band=health_band,
        evidence_blocks=evidence_blocks,
    )
    return env


pass_rate_of = pass_rate  # the design's definition lives with the models


# --------------------------------------------------------------------------
# the catalog page
# --------------------------------------------------------------------------


def _history_table(history: list[dict] | None) -> dict | None:
    if not history:
        return None
    preferred = (
        "timestamp",
        "run",
        "status",
        "row_count",
        "rows",
        "fingerprint",
        "issues",
        "pass_rate",
        "sandbox_cells",
        "sandbox_seconds",
        "seconds",
        "duration_s",
        "tokens",
        "explored",
        "previous_script",
    )
    seen: list[str] = []
    for entry in history:
        for key in entry:
            if key not in seen and key not in ("href", "current"):
                seen.append(key)
    keys = [k for k in preferred if k in seen] + [k for k in seen if k not in preferred]
    rows = []
    for entry in history:
        cells = []
        for key in keys:
            value = entry.get(key)
            if key == "pass_rate" and isinstance(value, (int, float)) and not isinstance(value, bool):
                cells.append(_pct(value))
            elif isinstance(value, dict):
                cells.append(", ".join(f"{k} {fmt_value(v)}" for k, v in value.items()) or "—")
            else:
                cells.append(fmt_value(value))
        rows.append(
            {
                "cells": cells,
                "href": _safe_href(entry["href"]) if entry.get("href") else None,
                "current": bool(entry.get("current")),
            }
        )
    return {"headers": [k.replace("_", " ") for k in keys], "rows": rows}


def _links(links: dict[str, str] | None) -> list[dict]:
    # a link with a scheme other than http(s) (javascript:, data:) is dropped
    return [
        {"key": key, "label": LINK_LABELS.get(key, key.replace("_", " ").capitalize()), "href": _safe_href(href)}
        for key, href in (links or {}).items()
        if href and _safe_href(href) != "#"
    ]


def _issue_sort_key(issue: IssueModel):
    return (-(issue.affectedRows or 0), issue.type, issue.id)


def column_groups(profile: TableProfile) -> list[dict[str, Any]]:
    """The columns in the table's order, a column family (core/families.py) as one group where
    its first member stands: {"family": the Family or None, "columns": its ColumnProfiles}."""
    member = {name: fam for fam in families_of(profile) for name in fam.members}
    groups: list[dict[str, Any]] = []
    placed: dict[str, dict[str, Any]] = {}
    for c in profile.columns:
        fam = member.get(c.name)
        if fam is None:
            groups.append({"family": None, "columns": [c]})
        elif fam.key in placed:
            placed[fam.key]["columns"].append(c)
        else:
            placed[fam.key] = {"family": fam, "columns": [c]}
            groups.append(placed[fam.key])
    return groups


EXAMPLES = 3  # example values per column in the dictionary


def column_dictionary(
    profile: TableProfile,
    understanding: DatasetUnderstandingModel,
    issues_by_column: dict[str, list[IssueModel]],
    column_anchor: dict[str, str],
    issue_anchor: dict[str, str],
) -> list[dict[str, Any]]:
    """One entry per column (a column family as one), for a reader: its name, type, meaning (from
    the understanding), completeness (from the profile), a few example values and its flags (the
    types of the open findings on it, each linking to its first issue)."""
    meaning = {c.name: c.description for c in understanding.columns}
    samples = {c.name: c.sampleValues for c in understanding.columns}
    plain = identifier_columns(profile, understanding)
    entries = []
    for group in column_groups(profile):
        family, columns = group["family"], group["columns"]
        first = columns[0]
        flags: dict[str, dict[str, str]] = {}
        for c in columns:
            for issue in issues_by_column.get(c.name, []):
                flags.setdefault(
                    issue.type, {"type": issue.type, "severity": issue.severity, "anchor": issue_anchor[issue.id]}
                )
        nulls = sum(c.nulls for c in columns)
        values = sum(c.nulls + c.count for c in columns)
        shown = [v.value for v in (first.top_values or []) if v.value is not None] or [
            v for v in samples.get(first.name) or [] if v is not None
        ]
        entries.append(
            {
                "name": family.label if family else first.name,
                "anchor": f"family-{family.stem}" if family else column_anchor[first.name],
                "family": family is not None,
                "size": len(columns),
                "dtype": family.dtype if family else first.dtype,
                "semantic_type": None if family else first.semantic_type,
                "sensitive": [] if family else first.sensitive,
                "meaning": meaning.get(first.name) or "",
                "completeness": _pct((values - nulls) / values if values else None, 1),
                "missing": f"{count_noun(nulls, 'missing value', zero='no')} of {values:,}",
                "examples": [fmt_value(v, 40, grouped=first.name not in plain) for v in shown[:EXAMPLES]],
                "flags": list(flags.values()),
            }
        )
    return entries


def render_catalog_page(
    *,
    profile: TableProfile,
    understanding: DatasetUnderstandingModel,
    issues: AnalysisResultModel,
    investigations: list[CodeInvestigation] | None = None,
    history: list[dict] | None = None,
    script: str | None = None,
    previous_script: str | None = None,
    links: dict[str, str] | None = None,
    run: dict | None = None,
    review: dict | None = None,
    now: datetime | None = None,
) -> str:
    """`catalog.html` for one table: a complete page with no external resources.

    ``review`` ({"database": name, "store": URL}) puts those into the command each issue's
    review control shows; without it the command relies on the reader's settings.  ``now``
    is the page's generation time (the current time when not given), which its times are
    said relative to ("2 hours ago")."""
    now = generation_time(now)
    run = dict(run or {})
    investigations = list(investigations or [])
    profile = with_verdicts(profile, investigations)
    column_anchor = {c.name: f"col-{i}" for i, c in enumerate(profile.columns, 1)}
    issue_anchor = {issue.id: f"issue-{i}" for i, issue in enumerate(issues.issues, 1)}
    inv_anchor = {inv.issue_id: f"inv-{i}" for i, inv in enumerate(investigations, 1) if inv.issue_id}
    verdict_by_issue = {
        inv.issue_id: inv.verdict or ("error" if not inv.success else "no verdict")
        for inv in investigations
        if inv.issue_id
    }
    gone = dismissed(investigations)
    kept = standing(issues, investigations)
    by_severity = {
        sev: sorted((i for i in kept.issues if i.severity == sev), key=_issue_sort_key) for sev in SEVERITIES
    }
    issues_by_column: dict[str, list[IssueModel]] = {}
    for issue in kept.issues:
        for name in issue.affectedColumns:
            issues_by_column.setdefault(name, []).append(issue)
    pass_rate = pass_rate_of(investigations)
    if pass_rate is None and isinstance(run.get("pass_rate"), (int, float)):
        pass_rate = float(run["pass_rate"])
    score = health_score(profile, kept, pass_rate)
    run_time = str(run.get("timestamp") or run.get("run") or profile.profiled_at or "")
    run_details = {k: v for k, v in run.items() if k not in ("timestamp", "run") and v is not None}
    verdict_counts: dict[str, int] = {}
    for verdict in verdict_by_issue.values():
        verdict_counts[verdict] = verdict_counts.get(verdict, 0) + 1

    context = {
        "profile": profile,
        "understanding": understanding,
        "analysis": issues,
        "issues_by_severity": by_severity,
        "severity_summary": " · ".join(f"{len(by_severity[s])} {s}" for s in SEVERITIES if by_severity[s]),
        "issue_anchor": issue_anchor,
        "standing_count": len(kept.issues),
        "dismissed": [(i, gone[i.id]) for i in sorted(issues.issues, key=_issue_sort_key) if i.id in gone],
        "issue_by_id": {i.id: i for i in issues.issues},
        "column_anchor": column_anchor,
        "column_groups": [
            {**g, "issues": list({i.id: i for c in g["columns"] for i in issues_by_column.get(c.name, [])}.values())}
            for g in column_groups(profile)
        ],
        "column_text": {c.name: c for c in understanding.columns},
        "column_dictionary": _with_class_reviews(
            column_dictionary(profile, understanding, issues_by_column, column_anchor, issue_anchor),
            profile.table,
            review or {},
        ),
        "issues_by_column": issues_by_column,
        "sample_table": [[row.get(c.name) for c in profile.columns] for row in profile.sample_rows],
        "investigations": investigations,
        "inv_anchor": inv_anchor,
        "verdict_by_issue": verdict_by_issue,
        "verdict_counts": verdict_counts,
        "pass_rate": pass_rate,
        "health": score,
        "history": _history_table(history),
        "diff": script_diff(previous_script, script) if (script or previous_script) else None,
        "links": _links(links),
        "run_time": run_time,
        "run_details": run_details,
        "generated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "now": now,
        "identifiers": identifier_columns(profile, understanding),
        "review_controls": _review_controls(profile.table, issues, review or {}),
        "note_limit": NOTE_LIMIT,
    }
    return template_environment().get_template("pages/catalog.html.j2").render(context)


def _exact(text: str) -> Markup:
    """Escaped text that the HTML parser gives back unchanged: it would turn a raw CR into LF."""
    return Markup(str(escape(text)).replace("\r", "&#13;"))


def _with_class_reviews(entries: list[dict[str, Any]], table: str, review: dict) -> list[dict[str, Any]]:
    """Each classified column's entry with the command that refutes its classes."""
    for entry in entries:
        entry["not_personal"] = None
        if entry["sensitive"]:
            command = not_personal_command(
                table, entry["name"], database=review.get("database"), store=review.get("store")
            )
            entry["not_personal"] = _exact(command)
    return entries


def _review_controls(table: str, issues: AnalysisResultModel, review: dict) -> dict[str, dict]:
    controls = {}
    for n, issue in enumerate(reviewable(issues), 1):
        control = review_control(table, issue.id, database=review.get("database"), store=review.get("store"))
        controls[issue.id] = {
            **{k: _exact(v) if k in ("tail", "head", "command", "config") else v for k, v in control.items()},
            "key": f"review-{n}",
        }
    return controls


# --------------------------------------------------------------------------
# the index
# --------------------------------------------------------------------------


class IndexColumn(BaseModel):
    name: str
    type: str = ""
    description: str = ""  # its meaning, from the understanding
    # its row of "where personal data lives" (core/sensitive/where.py): the classes about a
    # person it holds, the share of its sample that held one, whether a person said so
    personal: list[str] = Field(default_factory=list)
    personal_share: float | None = None
    personal_reviewed: bool = False


class IndexFinding(BaseModel):
    id: str = ""
    type: str
    severity: str
    description: str = ""
    columns: list[str] = Field(default_factory=list)
    since: str = ""  # the run that first found it, of the runs in a row that did


class IndexEntry(BaseModel):
    table: str
    row_count: int = 0
    column_count: int = 0
    issues_by_severity: dict[str, int] = Field(default_factory=dict)
    pass_rate: float | None = None
    health: float = 0.0
    href: str = ""
    timelapse: str = ""  # the table's timelapse.html, relative to the index
    updated: str = ""
    status: str = "ok"  # "ok", "degraded" or "failed" (anything else is shown as is)
    error: str | None = None
    description: str = ""  # the understanding's summary of the table
    owner: str = ""
    columns: list[IndexColumn] = Field(default_factory=list)
    findings: list[IndexFinding] = Field(default_factory=list)  # open, most severe first
    references: list[str] = Field(default_factory=list)  # the tables its columns reference


def render_index(*, database: str, tables: list[IndexEntry], now: datetime | None = None) -> str:
    """`index.html`: every table with its description, size, issues, pass rate, health and
    last change, a search and filters over them that run in the browser, and the database at a
    glance (worst tables, newest findings, the references between tables); ``now`` as for the
    catalog page."""
    now = generation_time(now)
    entries = [t if isinstance(t, IndexEntry) else IndexEntry.model_validate(t) for t in tables]
    ok = [t for t in entries if t.status != "failed"]
    totals = {sev: sum(t.issues_by_severity.get(sev, 0) for t in entries) for sev in SEVERITIES}
    hrefs = {t.table: _safe_href(t.href) for t in entries if t.href and _safe_href(t.href) != "#"}
    context = {
        "database": database,
        "tables": entries,
        "severities": SEVERITIES,
        "totals": totals,
        "total_rows": sum(t.row_count for t in entries),
        "failed": len(entries) - len(ok),
        "degraded": sum(1 for t in entries if t.status == "degraded"),
        "mean_health": round(sum(t.health for t in ok) / len(ok), 1) if ok else None,
        "search_json": inert_json(search_data(entries)),
        "choices": filter_choices(entries),
        "worst": worst_tables(entries),
        "newest": newest_findings(entries),
        "personal": personal_rows(entries),
        "graph": svg_reference_graph(
            {t.table: t.references for t in entries}, cataloged=[t.table for t in entries if t.href], hrefs=hrefs
        ),
        "generated_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "now": now,
    }
    return template_environment().get_template("pages/index.html.j2").render(context)
