"""Score reported issues against the real-data answer key (answer_key.yaml).

An issue *matches* a key entry (a root cause or an acceptable fact) when it is on the same
table, its type is compatible with the entry's kind (COMPATIBLE below), and its affectedColumns
share at least one column with the entry's. Two checks narrow this where the issue gives the
means: for a reference, an issue that names its target in `details["references"]`
("table.column") must name the key's target table; for an entry with `values`, an issue whose
details name the values it flags (VALUE_DETAILS) must flag one of them.

- recall: root causes matched by at least one issue / all root causes;
- precision: issues that match a root cause or an acceptable fact / all issues;
- wrong: issues that match nothing; on_clean: issues on a table the key marks clean;
- redundant: issues whose root causes earlier issues already matched (one cause reported as
  several issues is correct for precision but halves health scores, so it is shown).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from cataloger_dagster.core.models import ISSUE_TYPES

KEY_PATH = Path(__file__).with_name("answer_key.yaml")

# the bar on the corpus: root causes found, reported issues that are right
MIN_RECALL = 0.8
MIN_PRECISION = 0.9

# Kinds of root cause that no issue type expresses (the key's NEW_KINDS).
NEW_KINDS = ("temporal_gap",)

# A root cause's kind -> the issue types that report it. Only where one finding can honestly be
# typed two ways: the placeholder ('NA') that turns a numeric column into text is one cause with
# two facts ("one root cause, one issue"); text that holds dates is also a bad format;
# an implausible value is also an outlier, and a value off by a unit factor (a scale error) is an
# outlier or an implausible value whose cause is named; a column of mixed units is also numbers
# stored as text or a bad format; a variant label is also a bad format; a repeated key
# also repeats rows. A placeholder is not "missing values": NULL counts do not see it.
COMPATIBLE: dict[str, frozenset[str]] = {
    "missing_values": frozenset({"missing_values"}),
    "sentinel_values": frozenset({"sentinel_values"}),
    "numeric_as_text": frozenset({"numeric_as_text", "sentinel_values"}),
    "date_as_text": frozenset({"date_as_text", "invalid_format"}),
    "out_of_range": frozenset({"out_of_range", "outliers", "scale_errors", "implausible_values"}),
    "outliers": frozenset({"outliers", "out_of_range", "scale_errors", "implausible_values"}),
    "scale_errors": frozenset({"scale_errors", "outliers", "out_of_range"}),
    "implausible_values": frozenset({"implausible_values", "outliers", "out_of_range", "scale_errors"}),
    "mixed_units": frozenset({"mixed_units", "numeric_as_text", "invalid_format"}),
    "inconsistent_categories": frozenset({"inconsistent_categories", "invalid_format"}),
    "invalid_format": frozenset({"invalid_format", "inconsistent_categories"}),
    "duplicate_keys": frozenset({"duplicate_keys", "duplicate_rows"}),
    "duplicate_rows": frozenset({"duplicate_rows", "duplicate_keys"}),
    "orphan_references": frozenset({"orphan_references"}),
    "constant_column": frozenset({"constant_column"}),
    "temporal_gap": frozenset({"temporal_gap"}),
}

# Where an issue's details name the values it flags (a detector's examples, its placeholder
# counts, its extreme outliers), an entry with `values` matches only if they share one: an
# outlier issue on the right column that flags the legitimate extremes has not found the cause.
VALUE_DETAILS = ("examples", "values", "min_outlier", "max_outlier")


class AnswerKeyError(ValueError):
    """The answer key is malformed."""


def load_key(path: Path = KEY_PATH) -> dict[str, dict[str, Any]]:
    """The key's tables, checked: every kind known, every root cause with its fields."""
    tables = yaml.safe_load(path.read_text())["tables"]
    known = set(ISSUE_TYPES) | set(NEW_KINDS)
    ids: set[str] = set()
    for table, entry in tables.items():
        for cause in entry.get("root_causes", []):
            missing = {"id", "columns", "kind", "sql", "count", "why"} - cause.keys()
            if missing:
                raise AnswerKeyError(f"{table}: root cause {cause.get('id')} lacks {sorted(missing)}")
            if cause["kind"] not in known:
                raise AnswerKeyError(f"{table}: root cause {cause['id']} has unknown kind {cause['kind']!r}")
        for fact in entry.get("acceptable", []):
            unknown = set(fact["kinds"]) - known
            if unknown:
                raise AnswerKeyError(f"{table}: acceptable {fact['id']} has unknown kinds {sorted(unknown)}")
        for item in entry.get("root_causes", []) + entry.get("acceptable", []):
            if item["id"] in ids:
                raise AnswerKeyError(f"{table}: id {item['id']} appears twice")
            ids.add(item["id"])
        if entry.get("clean") and (entry.get("root_causes") or entry.get("acceptable")):
            raise AnswerKeyError(f"{table} is marked clean but lists findings")
    return tables


def _as_dict(issue: Any) -> dict[str, Any]:
    return issue.model_dump() if hasattr(issue, "model_dump") else dict(issue)


def _kinds_match(issue_type: str, kinds: Iterable[str]) -> bool:
    return any(issue_type in COMPATIBLE.get(kind, frozenset({kind})) for kind in kinds)


def _target_matches(issue: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    named = (issue.get("details") or {}).get("references")
    expected = entry.get("references")
    if not named or not expected:
        return True
    return str(named).split(".", 1)[0] == expected.split(".", 1)[0]


def _normal(value: Any) -> Any:
    try:
        return round(float(value), 6)
    except (TypeError, ValueError):
        return str(value)


def _flagged_values(issue: Mapping[str, Any]) -> set[Any]:
    details = issue.get("details") or {}
    found: set[Any] = set()
    for name in VALUE_DETAILS:
        value = details.get(name)
        if isinstance(value, Mapping):
            found.update(_normal(v) for v in value)
        elif isinstance(value, (list, tuple, set)):
            found.update(_normal(v) for v in value)
        elif value is not None:
            found.add(_normal(value))
    return found


def _values_match(issue: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    expected = entry.get("values")
    flagged = _flagged_values(issue)
    if not expected or not flagged:
        return True  # nothing to compare: table, kind and columns decide
    return bool(flagged & {_normal(v) for v in expected})


def _matches(issue: Mapping[str, Any], entry: Mapping[str, Any], kinds: Iterable[str]) -> bool:
    return (_kinds_match(issue["type"], kinds)
            and bool(set(issue.get("affectedColumns") or ()) & set(entry["columns"]))
            and _target_matches(issue, entry)
            and _values_match(issue, entry))


def classify(table: str, issue: Any, key: Mapping[str, dict[str, Any]] | None = None) -> str:
    """"true" (it matches a root cause), "acceptable" (a true but minor fact) or "false"."""
    key = load_key() if key is None else key
    entry, found = key.get(table, {}), _as_dict(issue)
    if any(_matches(found, c, [c["kind"]]) for c in entry.get("root_causes", [])):
        return "true"
    if any(_matches(found, f, f["kinds"]) for f in entry.get("acceptable", [])):
        return "acceptable"
    return "false"


@dataclass
class Reported:
    table: str
    type: str
    columns: list[str]
    rows: int | None
    description: str = ""

    @classmethod
    def of(cls, table: str, issue: Mapping[str, Any]) -> "Reported":
        return cls(table, issue["type"], list(issue.get("affectedColumns") or ()),
                   issue.get("affectedRows"), issue.get("description", ""))

    def __str__(self) -> str:
        rows = "" if self.rows is None else f", {self.rows} row{'' if self.rows == 1 else 's'}"
        return f"{self.table}: {self.type} on {', '.join(self.columns)}{rows}"


@dataclass
class TableScore:
    root_causes: int = 0
    found: int = 0
    issues: int = 0
    correct: int = 0

    @property
    def recall(self) -> float | None:
        return self.found / self.root_causes if self.root_causes else None

    @property
    def precision(self) -> float | None:
        return self.correct / self.issues if self.issues else None


@dataclass
class Score:
    recall: float
    recall_from_data: float          # leaving out the causes marked domain_knowledge
    precision: float
    found: list[dict[str, Any]] = field(default_factory=list)      # root causes (with "table")
    missed: list[dict[str, Any]] = field(default_factory=list)
    wrong: list[Reported] = field(default_factory=list)
    on_clean: list[Reported] = field(default_factory=list)
    redundant: list[Reported] = field(default_factory=list)
    issues: int = 0
    per_table: dict[str, TableScore] = field(default_factory=dict)

    def passes(self) -> bool:
        """Recall and precision meet the bar, and the clean tables got no issue."""
        return self.recall >= MIN_RECALL and self.precision >= MIN_PRECISION and not self.on_clean

    def summary(self) -> str:
        lines = [f"recall {self.recall:.2f} ({len(self.found)}/{len(self.found) + len(self.missed)} "
                 f"root causes; {self.recall_from_data:.2f} without domain knowledge), "
                 f"precision {self.precision:.2f} ({self.issues - len(self.wrong)}/{self.issues} issues), "
                 f"{len(self.on_clean)} on clean tables, {len(self.redundant)} redundant"]
        lines += [f"  missed {c['table']}: {c['id']} ({c['kind']} on {', '.join(c['columns'])})"
                  for c in self.missed]
        lines += [f"  wrong  {w}" for w in self.wrong]
        lines += [f"  extra  {r} (a second issue for one root cause)" for r in self.redundant]
        return "\n".join(lines)


def score(found: Mapping[str, Iterable[Any]], key: Mapping[str, dict[str, Any]] | None = None) -> Score:
    """Score `found` ({table: [issues as IssueModel or dicts]}) against the key."""
    key = load_key() if key is None else key
    per_table: dict[str, TableScore] = defaultdict(TableScore)
    hits: dict[str, int] = defaultdict(int)
    wrong: list[Reported] = []
    on_clean: list[Reported] = []
    redundant: list[Reported] = []
    issues = 0
    for table, table_issues in found.items():
        entry = key.get(table, {})
        causes = entry.get("root_causes", [])
        facts = entry.get("acceptable", [])
        for raw in table_issues:
            issue = _as_dict(raw)
            issues += 1
            per_table[table].issues += 1
            matched = [c for c in causes if _matches(issue, c, [c["kind"]])]
            if matched and all(hits[c["id"]] for c in matched):
                redundant.append(Reported.of(table, issue))
            for cause in matched:
                hits[cause["id"]] += 1
            if matched or any(_matches(issue, f, f["kinds"]) for f in facts):
                per_table[table].correct += 1
                continue
            wrong.append(Reported.of(table, issue))
            if entry.get("clean"):
                on_clean.append(Reported.of(table, issue))
    found_causes, missed = [], []
    for table, entry in key.items():
        for cause in entry.get("root_causes", []):
            per_table[table].root_causes += 1
            if hits[cause["id"]]:
                per_table[table].found += 1
                found_causes.append({**cause, "table": table})
            else:
                missed.append({**cause, "table": table})
    total = len(found_causes) + len(missed)
    from_data = [c for c in found_causes + missed if not c.get("domain_knowledge")]
    return Score(
        recall=len(found_causes) / total if total else 1.0,
        recall_from_data=(sum(1 for c in from_data if hits[c["id"]]) / len(from_data)
                          if from_data else 1.0),
        precision=(issues - len(wrong)) / issues if issues else 1.0,
        found=found_causes, missed=missed, wrong=wrong, on_clean=on_clean,
        redundant=redundant, issues=issues, per_table=dict(per_table),
    )
