"""Investigations that can say no, measured on real data.

Two sets of issues on the real-data corpus (tests/support/realdata):

* the catalog's own: what the detectors raise; those the answer key calls root causes are the
  *true* issues;
* a careless detector's (realdata/naive.py: Tukey fences on every number, one-edit "variants"
  among numbers and dates, "NA" inside words, every mostly-distinct column as a key); those the
  answer key does not know are the *false* alarms: real storms, Alaska's airports, remakes that
  share a title, temperatures one digit apart.

Each table is investigated as the investigations asset does it: a snapshot in the local sandbox
(bubblewrap) and the heuristic agent's checks.  The checks must confirm at least 95% of the true
issues and refute (or call inconclusive) at least 80% of the false ones.  Issues the key calls
debatable (a reasonable analyst may or may not report them) count for neither.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
import realdata
from realdata import split
from realdata.detect import detect_all
from realdata.investigate import investigate
from realdata.naive import naive_issues
from realdata.scoring import classify, load_key

from cataloger_dagster.core.models import CodeInvestigation, IssueModel

pytestmark = [pytest.mark.slow]

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory, realdata_corpus) -> Path:
    # the tables the checks were tuned on (realdata/split.py); benchmarks/real_data.py
    # --investigate measures them on the held-out half
    path = tmp_path_factory.mktemp("realdata") / "corpus.duckdb"
    realdata.load_duckdb(path, split.TUNED_ON)
    return path


@pytest.fixture(scope="module")
def judged(corpus_db, local_sandbox_for_module) -> list[tuple[str, str, IssueModel, CodeInvestigation]]:
    """(label, table, issue, investigation) for the catalog's issues and the careless ones."""
    key = {t: e for t, e in load_key().items() if t in split.TUNED_ON}
    ours = detect_all(corpus_db, now=NOW)
    careless = naive_issues(corpus_db)
    # one sandbox session per table for both sets (the careless ids are prefixed apart)
    investigated = investigate(corpus_db, {t: ours.get(t, []) + careless.get(t, []) for t in ours.keys() | careless.keys()})
    out = []
    for source, found in (("ours", ours), ("careless", careless)):
        for table, issues in found.items():
            for issue in issues:
                label = classify(table, issue, key)
                if source == "careless" and label == "true":
                    continue   # a careless detector's hit proves nothing about the checks
                out.append((label, table, issue, investigated[table, issue.id]))
    return out


def _lines(rows) -> str:
    return "\n".join(f"  {inv.verdict}: {table} {issue.type} on {', '.join(issue.affectedColumns)} "
                     f"({issue.source}): {inv.reason or inv.error}" for _, table, issue, inv in rows)


def test_every_investigation_states_its_hypothesis_and_reason(judged):
    assert len(judged) >= 60
    broken = [r for r in judged if not (r[3].success and r[3].verdict and r[3].hypothesis and r[3].reason)]
    assert not broken, "investigations without a verdict, hypothesis or reason:\n" + _lines(broken)


def test_true_issues_are_confirmed_and_false_alarms_dismissed(judged):
    true = [r for r in judged if r[0] == "true"]
    false = [r for r in judged if r[0] == "false"]
    confirmed = [r for r in true if r[3].verdict == "confirmed"]
    dismissed = [r for r in false if r[3].verdict in ("refuted", "inconclusive")]
    assert len(true) >= 20 and len(false) >= 40, (len(true), len(false))
    report = (f"true issues confirmed: {len(confirmed)}/{len(true)}; false alarms dismissed: "
              f"{len(dismissed)}/{len(false)} {Counter(r[3].verdict for r in false)}\n"
              f"true issues not confirmed:\n{_lines([r for r in true if r not in confirmed])}\n"
              f"false alarms confirmed:\n{_lines([r for r in false if r not in dismissed])}")
    assert len(confirmed) >= 0.95 * len(true) and len(dismissed) >= 0.8 * len(false), report
