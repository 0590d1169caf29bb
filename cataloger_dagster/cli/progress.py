"""What `cataloger run` tells the user while it runs (stderr) and when it ends (stdout).

Progress counts each step of each table as it finishes (`runner.STEPS` make a table), so it
moves within a batch of tables as much as across batches, and a table's line ("done orders in
2.1 s") shows when its last step is done, not when its batch's run ends.  A terminal gets a
bar; a pipe or a file gets the lines alone.  Every line and the bar's text go through
`visible`: a table name's control characters are shown as escapes, never sent to the terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Iterator, Optional

import click

from cataloger_dagster.cli.runner import STEPS, CatalogReport, TableReport
from cataloger_dagster.cli.stopping import Interrupted
from cataloger_dagster.core.shown import visible


class RunProgress:
    def __init__(self, expected: Optional[int], bar: bool) -> None:
        self.started = time.monotonic()
        self.total = expected
        self.steps: dict[str, set[str]] = {}  # table -> its steps done
        self.own: dict[str, dict[str, float]] = {}  # table -> step -> its own seconds in it
        self.finished: set[str] = set()  # tables whose every step is done (so stored), or kept
        self.reported: set[str] = set()
        self._bar = None
        if bar:
            from tqdm import tqdm

            self._bar = tqdm(
                total=expected,
                file=sys.stderr,
                unit="table",
                dynamic_ncols=True,
                bar_format="{desc} {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}{postfix}]",
            )
            self._describe()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def _describe(self) -> None:
        if self._bar is not None:
            self._bar.set_description_str(f"cataloged {len(self.finished)}/{self.total or '?'}", refresh=False)

    def _say(self, line: str) -> None:
        line = visible(line)
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            click.echo(line, err=True)

    def _advance(self, now: str) -> None:
        """The bar at the tables' steps done (a fraction of a table each), and what just finished."""
        if self._bar is not None:
            done = sum(len(steps) for steps in self.steps.values()) / len(STEPS)
            self._bar.n = min(done, self._bar.total) if self._bar.total else done
            self._describe()
            self._bar.set_postfix_str(visible(now))  # refreshes

    def start(self, names: list[str]) -> None:
        self.total = len(names)
        if self._bar is not None:
            self._bar.total = len(names)  # known once the database has been listed
            self._describe()
            self._bar.refresh()

    def step_done(self, table: str, step: str, seconds: float) -> None:
        # a step done again (its batch failed on another table and it runs anew) counts its latest time
        self.own.setdefault(table, {})[step] = seconds
        done = self.steps.setdefault(table, set())
        if step in done:
            return
        done.add(step)
        finished = len(done) == len(STEPS)
        if finished:
            self.finished.add(table)
        self._advance(f"{table}: {step} done")
        if finished and table not in self.reported:
            self.reported.add(table)
            self._say(f"  done {table} in {sum(self.own[table].values()):.1f} s")

    def table_done(self, report: TableReport) -> None:
        self.steps[report.table] = set(STEPS)
        if report.status != "failed":
            self.finished.add(report.table)
        self._advance(f"{report.table}: {'kept' if report.resumed else report.status}")
        if report.status == "failed":
            self._say(f"  {failed_line(report)}")
        elif report.resumed:
            self._say(f"  kept {report.table}: already cataloged for its current data")
        elif report.table not in self.reported:
            self._say(f"  done {report.table} in {report.seconds:.1f} s")
        if report.status == "degraded":
            self._say(f"  degraded {report.table}: {'; '.join(report.degradations)}")
        self.reported.add(report.table)

    def interrupted_line(self, stop: Interrupted) -> str:
        total = self.total or len(self.finished)
        left = max(total - len(self.finished), 0)
        return (
            f"stopped ({stop}): {len(self.finished)} of {total} tables finished and stay in the store; "
            f"`cataloger run --resume` catalogs the other {left}"
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def failed_line(report: TableReport) -> str:
    """A failed table in one line: what went wrong, and where its full error is."""
    where = f" (full error in {report.log})" if report.log else ""
    return f"FAILED {report.table}: {report.error or 'failed'}{where}"


def summary_lines(report: CatalogReport, seconds: float) -> Iterator[str]:
    """The end of a run: tables, failures, issues by severity, each high-severity finding."""
    return (visible(line) for line in _summary(report, seconds))


def _summary(report: CatalogReport, seconds: float) -> Iterator[str]:
    ok = len(report.tables) - len(report.failed)
    yield f"cataloged {ok}/{len(report.tables)} tables of {report.database} in {seconds:.1f} s"
    if report.resumed_from:
        yield f"resumed the run started at {report.resumed_from}, which did not finish"
    kept = [t.table for t in report.tables if t.resumed]
    if kept:
        yield (
            f"  {len(kept)} already cataloged for their current data, not run again "
            f"(--no-resume runs them): {', '.join(kept)}"
        )
    for t in report.failed:
        yield f"  {failed_line(t)}"
    for t in report.tables:
        if t.status == "degraded":
            yield f"  DEGRADED {t.table}: {'; '.join(t.degradations)}"
    counts = report.totals["issues"]
    yield "issues: " + ", ".join(f"{n} {severity}" for severity, n in counts.items())
    for table, issue in report.high_severity():
        columns = ", ".join(issue.affectedColumns) or "-"
        yield f"  HIGH {table} {issue.type} ({columns}): {issue.description}"
    yield f"catalog: {report.index or '(index not written)'}"
