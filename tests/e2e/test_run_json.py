"""`cataloger run --json` says what was found: each finding's description, the numbers behind it,
its investigation's verdict and reason, and what people said of it, as a script reading the
output would use them.

The real commands in subprocesses over the demo database's `orders` (the local sandbox, the
heuristic agent): a run, three reviews with `cataloger review`, a second run, then a third that
keeps the second's results (`--resume`, read back from the store).  Each output holds to
docs/run-json.schema.json.
"""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
from cli_support import cataloger
from run_json import assert_valid_run_json

pytestmark = pytest.mark.slow

TABLE = "orders"


def run(db, store, *extra) -> dict:
    out = cataloger("run", "--database", f"duckdb://{db}", "--store", str(store), "--table", TABLE, "--json", *extra)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert_valid_run_json(report)
    [table] = report["tables"]
    return table


def review(db, store, issue_id: str, verdict: str) -> None:
    out = cataloger("review", TABLE, issue_id, f"--{verdict}", "--note", f"{verdict} in the test",
                    "--reviewer", "ana", "--database", f"duckdb://{db}", "--store", str(store))
    assert out.returncode == 0, out.stderr


def text_values(db) -> set[str]:
    """Every text value of `orders` longer than 3 characters: none may be in the evidence."""
    with duckdb.connect(str(db), read_only=True) as con:
        columns = [r[0] for r in con.execute(f"DESCRIBE {TABLE}").fetchall()
                   if r[1] == "VARCHAR"]
        return {v for c in columns for (v,) in con.execute(f'SELECT DISTINCT "{c}" FROM {TABLE}').fetchall()
                if isinstance(v, str) and len(v) > 3}


def test_each_finding_says_what_was_found_its_verdict_and_its_review(demo_db, tmp_path, local_sandbox):
    db = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, db)
    store = tmp_path / "store"

    first = run(db, store)
    assert len(first["issues"]) >= 3
    for issue in first["issues"] + first["dismissed"]:
        assert issue["description"] and issue["source"] == "detector"
        assert issue["evidence"]["finding"], issue["id"]          # the detector's numbers
        # every finding of a scan is investigated: a verdict, and the sentence that decided it
        assert issue["verdict"] in ("confirmed", "refuted", "inconclusive"), issue
        assert issue["verdict_reason"] and issue["evidence"]["investigation"], issue["id"]
        assert (issue["review"], issue["review_mark"]) == ("none", None)
    assert all(i["verdict"] == "refuted" for i in first["dismissed"])
    evidence = json.dumps([i["evidence"] for i in first["issues"] + first["dismissed"]])
    assert not [v for v in text_values(db) if json.dumps(v)[1:-1] in evidence], "a value of the table in the evidence"

    accepted, dismissed, expected = (i["id"] for i in first["issues"][:3])
    review(db, store, accepted, "accept")
    review(db, store, dismissed, "dismiss")
    review(db, store, expected, "expected")

    second = run(db, store, "--no-resume")
    raised = {i["id"]: i for i in second["issues"]}
    reviewed = {i["id"]: i for i in second["reviewed"]}
    assert raised[accepted]["review"] == "accepted"
    mark = raised[accepted]["review_mark"]
    assert (mark["mark"], mark["reviewer"], mark["note"]) == ("accepted", "ana", "accept in the test")
    assert mark["open_since"]
    assert (reviewed[dismissed]["review"], reviewed[dismissed]["review_mark"]["mark"]) == ("dismissed", "dismissed")
    assert (reviewed[expected]["review"], reviewed[expected]["review_mark"]["mark"]) == ("expected", "expected")
    assert dismissed not in raised and expected not in raised
    assert all(i["review"] == "none" for i in second["issues"] if i["id"] != accepted)
    assert all(i["description"] for i in second["reviewed"])

    # a table kept from its earlier run says the same of its findings, read back from the store
    kept = run(db, store, "--resume")
    assert kept["resumed"] and kept["run"] == second["run"]
    for key in ("issues", "dismissed", "reviewed"):
        assert kept[key] == second[key], key
