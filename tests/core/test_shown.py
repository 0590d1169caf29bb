"""core/shown.py: names and values are data in every output.  `visible` for log lines, terminal
lines and e-mail subjects, `shell_word` for commands to copy, `markdown_text` for the Dagster UI.

Each output surface and the test that shows it:
- the catalog page's review command, pasted into bash:
  tests/core/reviews/test_pasted_command.py
- e-mail subjects, and one table's unencodable name failing its own alerts alone:
  tests/resources/notifier/test_hostile_names.py
- the catalog's log lines in a real Dagster run, and Markdown metadata / column descriptions:
  tests/assets/test_markdown_metadata.py
- `cataloger run`'s terminal lines and the alert sensor's log lines: here.
"""

import logging
import subprocess

import pytest
from markdown_it import MarkdownIt

from cataloger_dagster.cli.progress import RunProgress, summary_lines
from cataloger_dagster.cli.runner import CatalogReport, IssueSummary, TableReport
from cataloger_dagster.core.alerts import Alert, AlertMessage
from cataloger_dagster.core.shown import has_control, markdown_text, shell_word, visible

CONTROLS = ["\x00", "\x07", "\x15", "\x1b", "\x7f", "\x85", "\x9b", "\u2028", "\u2029",
            "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"]
HOSTILE = "c\x15touch X\x0f \u2028\u202eevil"


@pytest.mark.parametrize("char", CONTROLS)
def test_every_control_character_is_shown_as_an_escape(char):
    shown = visible(f"a{char}b")
    assert not has_control(shown)
    code = ord(char)
    assert shown == (f"a\\x{code:02x}b" if code <= 0xFF else f"a\\u{code:04x}b")


def test_printable_text_stays_as_it_is():
    text = "prénom 日本 😀 it's \"q\" <b> \\ $x"
    assert visible(text) == text and shell_word("plain_name") == "plain_name"


# NUL aside: no program argument can hold it
@pytest.mark.parametrize("char", CONTROLS[1:] + ["\udcff"])
def test_a_shell_word_reads_back_as_the_same_bytes(char, tmp_path):
    word = f"it's {char} \\ !x $(touch pwned)"
    quoted = shell_word(word)
    assert not has_control(quoted)
    out = subprocess.run(["bash", "-c", f"printf '%s\\0' {quoted}"], capture_output=True, cwd=tmp_path,
                         check=True).stdout
    assert out == word.encode("utf-8", "surrogateescape") + b"\0"   # as Python reads argv back: the word
    assert list(tmp_path.iterdir()) == []


def test_markdown_text_opens_no_image_link_html_or_code():
    parser = MarkdownIt("commonmark").enable("table")
    for text in ["c![c](http://127.0.0.1:9/x)", "<img src=x>", "<http://a.b>", "`code`", "[l]: http://x",
                 "- item", "# heading", "1. item", "a | b", "**bold**", "line\nbreak\u2028sep"]:
        tokens = [t for block in parser.parse(f"| {markdown_text(text)} |\n|---|\n\n{markdown_text(text)}")
                  for t in [block, *(block.children or [])]]
        kinds = {t.type for t in tokens}
        assert not kinds & {"image", "link_open", "html_inline", "html_block", "code_inline", "strong_open",
                            "bullet_list_open", "ordered_list_open", "heading_open", "reference"}, text


def test_cataloger_run_lines_show_a_name_with_escapes(capsys):
    progress = RunProgress(expected=2, bar=False)
    progress.table_done(TableReport(table=HOSTILE, status="failed", error=f"cannot read {HOSTILE}"))
    progress.table_done(TableReport(table=HOSTILE + "2", status="degraded", degradations=[f"col {HOSTILE}"]))
    said = capsys.readouterr().err
    assert not has_control(said.replace("\n", " ")) and visible(HOSTILE) in said
    report = CatalogReport(database="d", store="s", index="i", tables=[
        TableReport(table=HOSTILE, status="ok", issues=[IssueSummary(
            id="i", type="missing_values", severity="high", category="quick_fixes", affectedColumns=[HOSTILE],
            description=f"{HOSTILE} is missing")]),
        TableReport(table="bad", status="failed", error=HOSTILE)])
    lines = list(summary_lines(report, seconds=1.0))
    assert all(not has_control(line) for line in lines) and any(visible(HOSTILE) in line for line in lines)


def test_an_alert_title_shows_a_name_with_escapes():
    alert = Alert(table=HOSTILE, owner="o", kind="new_high", issue_id="i", issue_type="t", severity="high",
                  description="d", page="p", evidence="e")
    title = AlertMessage(run_id="r", alerts=[alert]).title
    assert not has_control(title) and visible(HOSTILE) in title


def test_the_alert_sensor_logs_a_bad_run_folder_with_escapes(tmp_path, caplog):
    from cataloger_dagster.sensors.alert_sensor import deliver
    from cataloger_dagster.resources.notifier import SmtpNotifier
    from cataloger_dagster.resources.store import store_from_url

    alert = Alert(table=HOSTILE, owner="o", kind="new_high", issue_id="i", issue_type="t", severity="high",
                  description="d", page="p", evidence="e")
    notifier = SmtpNotifier(host="127.0.0.1", port=1, sender="a@x.org", recipients=["b@x.org"], attempts=1,
                            timeout_s=2)
    with caplog.at_level(logging.INFO, logger="shown-test"):
        deliver(logging.getLogger("shown-test"), store_from_url(str(tmp_path)), "db", notifier,
                AlertMessage(run_id="r", alerts=[alert]))
    (record,) = caplog.records
    assert "failed" in record.getMessage() and not has_control(record.getMessage())
    assert visible(HOSTILE) in record.getMessage()


def test_cataloger_profile_prints_a_hostile_column_and_value_with_escapes(tmp_path):
    import duckdb
    from click.testing import CliRunner

    from cataloger_dagster.cli.app import main

    db = tmp_path / "shop.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(f"""CREATE TABLE t AS SELECT '{HOSTILE}' AS "{HOSTILE}" FROM range(3)""")
    result = CliRunner().invoke(main, ["profile", "--database", f"duckdb://{db}", "--table", "t"])
    assert result.exit_code == 0, result.output
    assert not has_control(result.output.replace("\n", " ")) and visible(HOSTILE) in result.output


def test_a_text_of_several_lines_keeps_its_line_breaks_and_tabs_only():
    assert visible("a\n\tb\r\x1b[2J", keep="\n\t") == "a\n\tb\\x0d\\x1b[2J"
