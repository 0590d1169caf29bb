"""The review command as the catalog page shows it, pasted into an interactive bash: it reaches
`cataloger review` with exactly the real table name and issue id, and runs nothing else.

The page is rendered for real, the command is read back from its HTML as a browser shows it,
and the text goes to bash through a pseudo-terminal as typed (or pasted without bracketed
paste, the default before bash 5.1): readline acts on every control character, so a raw
Ctrl-U (kill the line) and Ctrl-O (run it) in a name would run what follows them."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import time
from html.parser import HTMLParser

import pytest

from cataloger_dagster.core.models import (
    AnalysisResultModel, ColumnProfile, Fingerprint, DatasetSummaryModel, DatasetUnderstandingModel, IssueModel, TableProfile,
)
from cataloger_dagster.core.render.pages import render_catalog_page
from cataloger_dagster.core.shown import has_control

# Ctrl-U, then a command, then Ctrl-O: what a raw paste would run
KEYSTROKES = "c\x15touch PWNED\x0f"
TABLES = [KEYSTROKES, "sep\u2028arated \u202eevil", "del\x7f and c1\x85 and 'quote' \\ !bang", "plain"]


class _Commands(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.commands: list[str] = []
        self._inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "code" and "review-command" in (dict(attrs).get("class") or ""):
            self._inside = True
            self.commands.append("")

    def handle_endtag(self, tag):
        self._inside = self._inside and tag != "code"

    def handle_data(self, data):
        if self._inside:
            self.commands[-1] += data


def shown_commands(table: str, issue_id: str, store: str) -> list[str]:
    column = ColumnProfile(name="c", dtype="string", kind="string", count=1, nulls=0, null_fraction=0.0)
    profile = TableProfile(database="shop", table=table, row_count=1, column_count=1, columns=[column],
                           sample_rows=[], fingerprint=Fingerprint(schema_hash="h", row_count=1, value="h:1"))
    understanding = DatasetUnderstandingModel(
        summary=DatasetSummaryModel(name=table, description="d", rowCount=1, columnCount=1, observations=[]),
        columns=[], suggested_context="")
    issues = AnalysisResultModel(issues=[IssueModel(
        id=issue_id, type="constant_column", severity="low", category="quick_fixes", description="one value",
        affectedColumns=["c"], suggestedAction="drop it")], summary="", completedAt="")
    html = render_catalog_page(profile=profile, understanding=understanding, issues=issues,
                               review={"database": "shop", "store": store})
    parser = _Commands()
    parser.feed(html)
    parser.close()
    return parser.commands


def paste_into_bash(text: str, cwd) -> None:
    """``text`` typed into an interactive bash (readline on a pseudo-terminal), then ``exit``."""
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "TERM": "dumb", "INPUTRC": "/dev/null",
           "PS1": "$ ", "LANG": "C.UTF-8", "HISTFILE": "/dev/null"}
    main, child = pty.openpty()
    bash = subprocess.Popen(["bash", "--norc", "--noprofile", "-i"], stdin=child, stdout=child, stderr=child,
                            cwd=cwd, env=env, start_new_session=True)
    os.close(child)
    try:
        os.write(main, text.encode("utf-8") + b"\nexit\n")
        deadline = time.monotonic() + 20
        while bash.poll() is None and time.monotonic() < deadline:
            if select.select([main], [], [], 0.2)[0]:
                try:
                    os.read(main, 65536)
                except OSError:
                    break
        bash.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if bash.poll() is None:
            bash.kill()
        os.close(main)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("table", TABLES)
def test_the_pasted_review_command_names_the_real_table_and_runs_nothing_else(table, tmp_path):
    issue_id = f"{table}_constant"
    store = str(tmp_path / "store")
    (command,) = shown_commands(table, issue_id, store)
    assert command.startswith("cataloger review --dismiss ")
    assert not has_control(command), f"raw control character in {command!r}"
    # `cataloger` here records its arguments, NUL-separated, as the real CLI would receive them
    stand_in = "cataloger() { printf '%s\\0' \"$@\" > args; }"
    paste_into_bash(f"{stand_in}\n{command}", tmp_path)
    assert not (tmp_path / "PWNED").exists()
    received = (tmp_path / "args").read_bytes().decode("utf-8").split("\0")[:-1]
    assert received == ["review", "--dismiss", "--note", "", "--name", "shop", "--store", store,
                        "--", table, issue_id]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["args"]


def test_bash_c_reads_the_shown_command_as_the_same_words(tmp_path):
    (command,) = shown_commands(KEYSTROKES, "i", str(tmp_path))
    out = subprocess.run(["bash", "-c", "cataloger() { printf '%s\\0' \"$@\"; }\n" + command],
                         capture_output=True, cwd=tmp_path, check=True).stdout
    assert out.decode("utf-8").split("\0")[-3:-1] == [KEYSTROKES, "i"]
    assert list(tmp_path.iterdir()) == []
