"""What the catalog page shows to copy for a review: the `cataloger review` command and the
`review_issue` job's launchpad config.

Table names, issue ids and notes are hostile, so every part of the command is quoted by
`shown.shell_word` (``shlex.quote``, or bash's ``$'...'`` when it holds a control character,
so that the text to paste holds none) and every YAML value is a double-quoted scalar in printable ASCII (anything
else escaped).  The page's script (templates/pages/_review_script.html.j2) rebuilds both
when the reader picks a verdict or types a note, with the same two quotings in JavaScript;
only the note and the verdict change there, the rest comes from here.
"""

from __future__ import annotations

from typing import Optional

from cataloger_dagster.core.shown import shell_word

JOB = "review_issue"  # cataloger_dagster.jobs.REVIEW_JOB (the core cannot import it)
OP = "record_review"  # cataloger_dagster.jobs.REVIEW_OP
DEFAULT_VERDICT = "dismiss"


def yaml_quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar of printable ASCII (``\\uXXXX`` / ``\\UXXXXXXXX``
    for the rest), so that no parser reads it as anything but this string."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= code <= 0x7E:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def command_tail(table: str, issue_id: str, *, database: Optional[str] = None, store: Optional[str] = None) -> str:
    """Everything after the verdict and the note; `--` keeps a name starting with '-' a name."""
    parts = []
    if database:
        parts += ["--name", database]
    if store:
        parts += ["--store", store]
    return " ".join(shell_word(p) for p in [*parts, "--", table, issue_id])


def review_command(tail: str, verdict: str = DEFAULT_VERDICT, note: str = "") -> str:
    return f"cataloger review --{verdict} --note {shell_word(note)} {tail}"


def not_personal_command(
    table: str, column: str, *, database: Optional[str] = None, store: Optional[str] = None
) -> str:
    """The command that says ``column`` holds no personal data of the classes it was given."""
    return f"cataloger review --not-personal {command_tail(table, column, database=database, store=store)}"


def launchpad_head(table: str, issue_id: str) -> str:
    return f"ops:\n  {OP}:\n    config:\n      table: {yaml_quote(table)}\n      issue_id: {yaml_quote(issue_id)}\n"


def launchpad_config(head: str, verdict: str = DEFAULT_VERDICT, note: str = "") -> str:
    return f"{head}      verdict: {verdict}\n      note: {yaml_quote(note)}\n"


def review_control(table: str, issue_id: str, *, database: Optional[str] = None, store: Optional[str] = None) -> dict:
    """What the page's review control of one issue needs: the fixed parts, and both texts
    as shown before the reader changes anything."""
    tail = command_tail(table, issue_id, database=database, store=store)
    head = launchpad_head(table, issue_id)
    return {
        "tail": tail,
        "head": head,
        "verdict": DEFAULT_VERDICT,
        "job": JOB,
        "command": review_command(tail),
        "config": launchpad_config(head),
    }
