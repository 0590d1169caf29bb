"""Score reported issues against the real-data answer key (answer_key.yaml and keys/*.yaml).

An issue *matches* a key entry (a root cause or a debatable fact) when it is on the same
table, its type is compatible with the entry's kind (COMPATIBLE below), and its affectedColumns
share at least one column with the entry's. Two checks narrow this where the issue gives the
means: for a reference, an issue that names its target in `details["references"]`
("table.column") must name the key's target table; for an entry with `values`, an issue whose
details name the values it flags (VALUE_DETAILS) must flag one of them.

- recall: root causes matched by at least one issue / all root causes;
- precision: issues that match a root cause / issues that are not debatable (an issue that
  matches only a debatable fact counts on neither side);
- wrong: issues that match nothing, and issues that flag only values the key calls extreme but
  true (`extreme_but_true`); on_clean: issues on a table the key marks clean;
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
# one key file per source added after the first three (keys/<source>.yaml), merged with KEY_PATH
KEYS_DIR = Path(__file__).with_name("keys")

# the bar on the corpus: root causes found, reported issues that are right
MIN_RECALL = 0.8
MIN_PRECISION = 0.9

# Kinds of root cause that no issue type expresses (the key's NEW_KINDS).
NEW_KINDS = (
    "temporal_gap",         # a period missing from a regular series
    "whitespace_values",    # leading/trailing/doubled spaces that split one value in two
    "case_variants",        # one label in several casings
    "spelling_variants",    # one label spelled or abbreviated several ways
    "scale_errors",         # a value off by a power of ten or a unit factor
    "rule_violations",      # a rule between columns broken (min <= max, total = sum, Y when X)
    "mixed_units",          # one text column holding several units or notations
    "implausible_values",   # an implausible magnitude on a robust log scale within its group
)

# A root cause's kind -> the issue types that report it. Only where one finding can honestly be
# typed two ways: the placeholder ('NA') that turns a numeric column into text is one cause with
# two facts ("one root cause, one issue"); text that holds dates is also a bad format;
# an implausible value is also an outlier, and a value off by a unit factor (a scale error) is an
# outlier or an implausible value whose cause is named; a column of mixed units is also numbers
# stored as text or a bad format; a variant label is also a bad format; a repeated key
# also repeats rows. A placeholder is not "missing values": NULL counts do not see it. A column
# NULL wherever another is but on a few rows is reported as those rows (rule_violations, rule_kind
# "not_null_when"), its other NULLs as the other column's: its missing values, typed as a rule.
COMPATIBLE: dict[str, frozenset[str]] = {
    "missing_values": frozenset({"missing_values", "rule_violations"}),
    "sentinel_values": frozenset({"sentinel_values"}),
    "numeric_as_text": frozenset({"numeric_as_text", "sentinel_values"}),
    "date_as_text": frozenset({"date_as_text", "invalid_format"}),
    "out_of_range": frozenset({"out_of_range", "outliers", "implausible_values", "scale_errors", "rule_violations"}),
    "outliers": frozenset({"outliers", "out_of_range", "implausible_values", "scale_errors"}),
    "inconsistent_categories": frozenset({"inconsistent_categories", "invalid_format", "whitespace_values",
                                          "case_variants", "spelling_variants"}),
    "invalid_format": frozenset({"invalid_format", "inconsistent_categories"}),
    "duplicate_keys": frozenset({"duplicate_keys", "duplicate_rows"}),
    "duplicate_rows": frozenset({"duplicate_rows", "duplicate_keys"}),  # also near-duplicates
    "orphan_references": frozenset({"orphan_references"}),
    "constant_column": frozenset({"constant_column"}),
    "temporal_gap": frozenset({"temporal_gap"}),
    # a variant label is one cause whichever detector names it
    "whitespace_values": frozenset({"whitespace_values", "inconsistent_categories", "invalid_format"}),
    "case_variants": frozenset({"case_variants", "inconsistent_categories", "spelling_variants"}),
    "spelling_variants": frozenset({"spelling_variants", "inconsistent_categories", "case_variants"}),
    # a wrong magnitude is also an outlier and an implausible value
    "scale_errors": frozenset({"scale_errors", "implausible_values", "outliers", "out_of_range"}),
    "implausible_values": frozenset({"implausible_values", "scale_errors", "outliers", "out_of_range"}),
    "rule_violations": frozenset({"rule_violations", "out_of_range"}),
    "mixed_units": frozenset({"mixed_units", "invalid_format", "numeric_as_text"}),
}

# Where an issue's details name the values it flags (a detector's examples, its placeholder
# counts, its extreme outliers), an entry with `values` matches only if they share one: an
# outlier issue on the right column that flags the legitimate extremes has not found the cause.
VALUE_DETAILS = ("examples", "values", "min_outlier", "max_outlier")


class AnswerKeyError(ValueError):
    """The answer key is malformed."""


def _key_files() -> list[Path]:
    return [KEY_PATH, *sorted(KEYS_DIR.glob("*.yaml"))]


def load_key(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The key's tables, checked: every kind known, every entry with its fields.

    Without `path`, answer_key.yaml merged with every keys/*.yaml; a table in two files is an
    error (each source's tables are keyed in one file)."""
    tables: dict[str, dict[str, Any]] = {}
    origin: dict[str, Path] = {}
    for file in [path] if path is not None else _key_files():
        for table, entry in (yaml.safe_load(file.read_text()) or {}).get("tables", {}).items():
            if table in tables:
                raise AnswerKeyError(f"{table} is keyed twice, in {origin[table].name} and {file.name}: "
                                     f"keep one entry")
            tables[table], origin[table] = entry, file
    _check(tables)
    return tables


def _check(tables: Mapping[str, dict[str, Any]]) -> None:
    known = set(ISSUE_TYPES) | set(NEW_KINDS)
    ids: set[str] = set()
    for table, entry in tables.items():
        if "acceptable" in entry:
            raise AnswerKeyError(f"{table}: 'acceptable' is now called 'debatable' (same fields)")
        for cause in entry.get("root_causes", []):
            missing = {"id", "columns", "kind", "sql", "count", "why"} - cause.keys()
            if missing:
                raise AnswerKeyError(f"{table}: root cause {cause.get('id')} lacks {sorted(missing)}")
            if cause["kind"] not in known:
                raise AnswerKeyError(f"{table}: root cause {cause['id']} has unknown kind {cause['kind']!r}")
        for fact in entry.get("debatable", []):
            unknown = set(fact["kinds"]) - known
            if unknown:
                raise AnswerKeyError(f"{table}: debatable {fact['id']} has unknown kinds {sorted(unknown)}")
        for extreme in entry.get("extreme_but_true", []):
            missing = {"id", "columns", "sql", "count", "values", "why"} - extreme.keys()
            if missing:
                raise AnswerKeyError(f"{table}: extreme_but_true {extreme.get('id')} lacks {sorted(missing)}")
        for item in _entries(entry):
            if item["id"] in ids:
                raise AnswerKeyError(f"{table}: id {item['id']} appears twice")
            ids.add(item["id"])
        if entry.get("clean") and (entry.get("root_causes") or entry.get("debatable")):
            raise AnswerKeyError(f"{table} is marked clean but lists findings")


def _entries(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every item of a table's key: root causes, debatable facts, true extremes."""
    return [*entry.get("root_causes", []), *entry.get("debatable", []), *entry.get("extreme_but_true", [])]


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


def _extreme(issue: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    """The issue flags values, on a column of a true extreme, and every one is that extreme."""
    flagged = _flagged_values(issue)
    return bool(flagged) and any(
        set(issue.get("affectedColumns") or ()) & set(e["columns"])
        and flagged <= {_normal(v) for v in e["values"]}
        for e in entry.get("extreme_but_true", []))


def classify(table: str, issue: Any, key: Mapping[str, dict[str, Any]] | None = None) -> str:
    """"true" (it matches a root cause), "debatable" (a fact an analyst may or may not report) or
    "false" (it matches nothing, or it flags only values the key knows to be extreme but true)."""
    key = load_key() if key is None else key
    entry, found = key.get(table, {}), _as_dict(issue)
    if _extreme(found, entry):
        return "false"
    if any(_matches(found, c, [c["kind"]]) for c in entry.get("root_causes", [])):
        return "true"
    if any(_matches(found, f, f["kinds"]) for f in entry.get("debatable", [])):
        return "debatable"
    return "false"


def open_findings(found: Mapping[str, Iterable[Any]],
                  verdicts: Mapping[tuple[str, str], str]) -> dict[str, list[Any]]:
    """`found` without the issues whose investigation refuted them; verdicts are
    {(table, issue id): "confirmed" | "refuted" | "inconclusive"}, as the investigations give them."""
    return {table: [i for i in issues if verdicts.get((table, _as_dict(i).get("id"))) != "refuted"]
            for table, issues in found.items()}


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
    correct: int = 0       # issues that match a root cause
    debatable: int = 0     # issues that match only a debatable fact

    @property
    def recall(self) -> float | None:
        return self.found / self.root_causes if self.root_causes else None

    @property
    def precision(self) -> float | None:
        judged = self.issues - self.debatable
        return self.correct / judged if judged else None

    @property
    def wrong(self) -> int:
        return self.issues - self.debatable - self.correct


@dataclass
class Score:
    recall: float
    recall_from_data: float          # leaving out the causes marked domain_knowledge
    precision: float
    found: list[dict[str, Any]] = field(default_factory=list)      # root causes (with "table")
    missed: list[dict[str, Any]] = field(default_factory=list)
    wrong: list[Reported] = field(default_factory=list)
    on_clean: list[Reported] = field(default_factory=list)
    on_extremes: list[Reported] = field(default_factory=list)      # wrong: they flag true extremes
    redundant: list[Reported] = field(default_factory=list)
    issues: int = 0
    debatable: int = 0
    per_table: dict[str, TableScore] = field(default_factory=dict)

    @property
    def correct(self) -> int:
        return self.issues - self.debatable - len(self.wrong)

    def passes(self) -> bool:
        """Recall and precision meet the bar, and the clean tables got no issue."""
        return self.recall >= MIN_RECALL and self.precision >= MIN_PRECISION and not self.on_clean

    def summary(self) -> str:
        lines = [f"recall {self.recall:.2f} ({len(self.found)}/{len(self.found) + len(self.missed)} "
                 f"root causes; {self.recall_from_data:.2f} without domain knowledge), "
                 f"precision {self.precision:.2f} ({self.correct}/{self.issues - self.debatable} issues, "
                 f"{self.debatable} debatable left out), "
                 f"{len(self.on_clean)} on clean tables, {len(self.redundant)} redundant"]
        lines += [f"  missed {c['table']}: {c['id']} ({c['kind']} on {', '.join(c['columns'])})"
                  for c in self.missed]
        lines += [f"  wrong  {w}" + (" (a true extreme)" if w in self.on_extremes else "") for w in self.wrong]
        lines += [f"  extra  {r} (a second issue for one root cause)" for r in self.redundant]
        return "\n".join(lines)


def score(found: Mapping[str, Iterable[Any]], key: Mapping[str, dict[str, Any]] | None = None) -> Score:
    """Score `found` ({table: [issues as IssueModel or dicts]}) against the key."""
    key = load_key() if key is None else key
    per_table: dict[str, TableScore] = defaultdict(TableScore)
    hits: dict[str, int] = defaultdict(int)
    wrong: list[Reported] = []
    on_clean: list[Reported] = []
    on_extremes: list[Reported] = []
    redundant: list[Reported] = []
    issues = debatable = 0
    for table, table_issues in found.items():
        entry = key.get(table, {})
        causes = entry.get("root_causes", [])
        facts = entry.get("debatable", [])
        for raw in table_issues:
            issue = _as_dict(raw)
            issues += 1
            per_table[table].issues += 1
            extreme = _extreme(issue, entry)
            matched = [] if extreme else [c for c in causes if _matches(issue, c, [c["kind"]])]
            if matched and all(hits[c["id"]] for c in matched):
                redundant.append(Reported.of(table, issue))
            for cause in matched:
                hits[cause["id"]] += 1
            if matched:
                per_table[table].correct += 1
                continue
            if not extreme and any(_matches(issue, f, f["kinds"]) for f in facts):
                per_table[table].debatable += 1
                debatable += 1
                continue
            wrong.append(Reported.of(table, issue))
            if extreme:
                on_extremes.append(wrong[-1])
            if entry.get("clean"):
                on_clean.append(wrong[-1])
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
    judged = issues - debatable
    return Score(
        recall=len(found_causes) / total if total else 1.0,
        recall_from_data=(sum(1 for c in from_data if hits[c["id"]]) / len(from_data)
                          if from_data else 1.0),
        precision=(judged - len(wrong)) / judged if judged else 1.0,
        found=found_causes, missed=missed, wrong=wrong, on_clean=on_clean, on_extremes=on_extremes,
        redundant=redundant, issues=issues, debatable=debatable, per_table=dict(per_table),
    )


def score_by_half(found: Mapping[str, Iterable[Any]],
                  key: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Score]:
    """{"tuning": ..., "held_out": ..., "all": ...}: each half scored on its own tables alone
    (split.py decides the half of a table)."""
    from .split import HALVES, half

    key = load_key() if key is None else key
    out = {}
    for name in HALVES:
        tables = {t for t in key.keys() | found.keys() if half(t) == name}
        out[name] = score({t: i for t, i in found.items() if t in tables},
                          {t: e for t, e in key.items() if t in tables})
    out["all"] = score(found, key)
    return out
