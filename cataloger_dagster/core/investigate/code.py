"""The code the heuristic agent writes to investigate issues, and how it reads old code back.

A session script is made of *blocks*, each starting with a marker line:

    # block: setup                      connection, the table, `record`
    # block: helpers                    what the checks share (always today's version)
    # block: check <issue type>         a function that tests one kind of issue
    # block: explore <issue id>         a look at the data before testing (cold runs)
    # block: investigate <issue id>     one `record(...)` call: the verdict and evidence

A marker is a comment, so it carries the id only as `codegen.comment_id` writes
it (printable ASCII, a hash for anything else); the id itself is a literal in
the block's code (`record('<issue id>', ...)`, `_issue = '<issue id>'`), and
every name or value reaches the code through `codegen.literal` alone.

Every investigation ends in `record(issue_id, check, ...)`, which prints one
JSON line `{"issue", "hypothesis", "verdict", "reason", "affected", "evidence"}` (or `"error"`):
the checks themselves are the files of the `checks` package.  The same script
runs in the sandbox against the snapshot and by hand against the real
database: only DB_CONNECTION_STRING differs.
"""

from __future__ import annotations

import ast
import io
import json
import tokenize
from dataclasses import dataclass, field
from typing import Any, Optional

from cataloger_dagster.core import portable, vocabulary
from cataloger_dagster.core.investigate.checks import CHECKS, HELPERS, block_of
from cataloger_dagster.core.investigate.codegen import SCRIPT_HEADER, comment_id, is_comment_id, literal, python_lines
from cataloger_dagster.core.issues.detectors import units
from cataloger_dagster.core.models import IssueModel

MARKER = "# block: "

_SETUP_HEAD = """\
# block: setup
import json
import os

import ibis

"""

_SETUP_BODY = block_of("setup.py")

_EXPLORE_BODY = block_of("explore.py")

# values the format check leaves aside: placeholders, of any column and of typed ones
STRING_SENTINELS = [*vocabulary.UNKNOWN_WORDS, *vocabulary.TYPED_PLACEHOLDERS]


def check_type(issue: IssueModel) -> str:
    return issue.type if issue.type in CHECKS else "generic"


def _sentinels_of(column: Optional[str], issues: list[IssueModel]) -> list[Any]:
    for other in issues:
        if other.type == "sentinel_values" and other.affectedColumns == [column]:
            values = list((other.details or {}).get("values", {}))
            try:
                return [float(v) for v in values]
            except ValueError:
                return []
    return []


def _reference(details: dict) -> tuple[str, str]:
    """The table and column an orphan issue points at: named apart, since either may hold a dot
    (issues stored before they were only have "table.column")."""
    if "target_table" in details and "target_column" in details:
        return details["target_table"], details["target_column"]
    table, _, column = details["references"].partition(".")
    return table, column


def check_args(issue: IssueModel, issues: list[IssueModel]) -> tuple:
    """The arguments of the issue's check, from what the detector saw."""
    d = issue.details or {}
    column = issue.affectedColumns[0] if issue.affectedColumns else None
    kind = check_type(issue)
    if kind == "duplicate_rows":
        return (d.get("compared_columns") or issue.affectedColumns, d.get("ignored_columns") or {})
    if kind == "sentinel_values":
        return (column, list(d.get("values", {})))
    if kind == "outliers":
        return (column, float(d["fence_low"]), float(d["fence_high"]), _sentinels_of(column, issues))
    if kind == "inconsistent_categories":
        return (
            column,
            {k: sorted(v) for k, v in d.get("groups", {}).items()},
            d.get("part", "value"),
            {
                word: {form: sorted(labels) for form, labels in forms.items()}
                for word, forms in (d.get("case_variants") or {}).items()
            },
        )
    if kind == "duplicate_keys":
        return (d.get("columns") or column,)
    if kind == "numeric_as_text":
        return (column, sorted(d.get("placeholders", {})))
    if kind == "date_as_text":
        return (column, d.get("date_format") or "ISO 8601", sorted(d.get("placeholders", {})))
    if kind == "invalid_format":
        # a value wrapped in double quotes breaks "unquoted text"; RE2 has no look-ahead
        pattern = d.get("pattern") or (r'^[^"]|[^"]$' if d.get("format") == "unquoted text" else r".")
        return (column, pattern, STRING_SENTINELS)
    if kind == "out_of_range":
        # "now" at day resolution: the investigation (and the script fed forward) stays the
        # same from one run to the next within a day, instead of changing every second
        return (column, sorted(d.get("counts", {})), f"{d['now'][:10]}T00:00:00+00:00", _sentinels_of(column, issues))
    if kind == "orphan_references":
        other_table, other_column = _reference(d)
        return (column, other_table, other_column, d.get("match", "equal"))
    if kind == "rule_violations":
        return (
            d.get("rule", ""),
            d.get("kind", "sum"),
            d.get("result", column),
            list(d.get("operands", [])),
            float(d.get("factor", 1.0)),
            bool(d.get("divides", False)),
            {k: float(v) for k, v in (d.get("steps") or {}).items()},
            float(d.get("relative", 1e-6)),
        )
    if kind in ("scale_errors", "implausible_values"):
        groups = [g for e in d.get("flagged", []) for g in e.get("group", {})]
        group = max(set(groups), key=groups.count) if groups else None
        values = d.get("values") or d.get("examples", [])
        return (
            (column, values, float(d.get("factor", 1.0)), group) if kind == "scale_errors" else (column, values, group)
        )
    if kind == "mixed_units":
        return (
            column,
            units.spellings(d.get("dimension")),
            sorted(v.strip().lower() for v in d.get("placeholders", {})),
        )
    if kind == "sensitive_class":
        return (column, {k: d[k] for k in ("data_class", "label", "needed", "rules", "bound", "today", "most", "seed")})
    if kind == "generic":
        return (issue.affectedColumns,)
    if kind == "empty_table":
        return ()
    return (column,)


def _marker(kind: str, name: str = "") -> str:
    """A block's marker line: printable ASCII whatever the name (the name itself is in the code)."""
    return f"{MARKER}{kind} {comment_id(name)}\n" if name else f"{MARKER}{kind}\n"


def investigate_block(issue: IssueModel, issues: list[IssueModel]) -> str:
    args = [literal(issue.id), f"check_{check_type(issue)}", *(literal(a) for a in check_args(issue, issues))]
    return f"{_marker('investigate', issue.id)}record({', '.join(args)})\n"


def helpers_block() -> str:
    """What the checks share, after the placeholder vocabulary they read (as literals: the script
    stands alone)."""
    return (
        f"{_marker('helpers')}UNKNOWN_WORDS = {literal(vocabulary.UNKNOWN_WORDS)}\n"
        f"TYPED_PLACEHOLDERS = {literal(vocabulary.TYPED_PLACEHOLDERS)}\n"
        f"PLACEHOLDER_MARKS = {literal(vocabulary.PLACEHOLDER_MARKS)}\n{HELPERS}"
    )


def check_block(kind: str) -> str:
    return _marker("check", kind) + CHECKS[kind]


def explore_block(issue: IssueModel) -> str:
    return (
        f"{_marker('explore', issue.id)}_issue = {literal(issue.id)}\n"
        f"_columns = {literal(list(issue.affectedColumns[:3]))}\n{_EXPLORE_BODY}"
    )


def connection_block(table: str) -> str:
    return (
        f"{_SETUP_HEAD}TABLE = {literal(table)}\nNO_NAN_BACKENDS = {literal(portable.NO_NAN_BACKENDS)}\n{_SETUP_BODY}"
    )


def setup_block(table: str) -> str:
    """The connection and the table, then what the checks share (a block of its own, so that a
    run reusing an earlier setup still gets today's helpers)."""
    return connection_block(table) + "\n" + helpers_block()


def referenced_tables(issues: list[IssueModel]) -> dict[str, list[str]]:
    """Other tables (and their key columns) the checks read: the snapshot must hold them."""
    refs: dict[str, list[str]] = {}
    for issue in issues:
        if issue.type == "orphan_references" and "references" in (issue.details or {}):
            other_table, other_column = _reference(issue.details)
            refs.setdefault(other_table, [])
            if other_column not in refs[other_table]:
                refs[other_table].append(other_column)
    return refs


# ---------------------------------------------------------------------------
# reading an earlier script back
# ---------------------------------------------------------------------------


@dataclass
class ParsedScript:
    setup: Optional[str] = None
    checks: dict[str, str] = field(default_factory=dict)  # issue type -> block
    investigations: dict[str, str] = field(default_factory=dict)  # issue id -> block
    # exported by a version that puts names into code only as literals (`codegen.SCRIPT_HEADER`)
    current_format: bool = True


_BOUNDARY = ("# block: ", "# %% cell ")
_OPEN, _CLOSE = set("([{"), set(")]}")


def _boundaries(source: str) -> Optional[list[tuple[int, str]]]:
    """(line index, text) of the comments that start a line outside any bracket and open a block
    or a cell, found by Python's tokenizer (so never inside a string); None if it cannot read it."""
    found, depth = [], 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.OP and tok.string in _OPEN:
                depth += 1
            elif tok.type == tokenize.OP and tok.string in _CLOSE:
                depth -= 1
            elif tok.type == tokenize.COMMENT and tok.start[1] == 0 and depth == 0 and tok.string.startswith(_BOUNDARY):
                found.append((tok.start[0] - 1, tok.string))
    except (tokenize.TokenError, SyntaxError):
        return None
    return found


def _recorded_id(tree: ast.AST) -> Optional[str]:
    """The issue id an investigate block names in code: the literal first argument of record()."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "record"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            return node.args[0].value
    return None


def parse_script(code: str) -> ParsedScript:
    """Split a session script into its blocks, where Python's tokenizer sees the marker comments.
    Blocks of failed cells are commented out by the sandbox (`# # block: ...`), so they are not
    found; neither is a block that is not valid Python on its own.  Each block comes back with its
    marker line as this version writes it, filed under the id its code names (or its marker's,
    when that is a plain [A-Za-z0-9_.-] id and the code names none)."""
    lines = python_lines(code)
    parsed = ParsedScript(current_format=lines[0] == SCRIPT_HEADER)
    found = _boundaries("\n".join(lines))
    if found is None:
        return parsed
    ends = [i for i, _ in found[1:]] + [len(lines)]
    for (start, comment), end in zip(found, ends):
        if not comment.startswith(MARKER):
            continue  # a cell boundary only ends the block before it
        kind, _, name = comment[len(MARKER) :].strip().partition(" ")
        name = name.strip()
        body = "\n".join(lines[start + 1 : end]).rstrip() + "\n"
        try:
            tree = ast.parse(body)
        except SyntaxError:
            continue
        if kind == "setup":
            parsed.setup = _marker("setup") + body
        elif kind == "helpers" and parsed.setup:
            # kept with the setup, so that a replayed setup is whole; a run of today's code
            # runs today's helpers after it
            parsed.setup += "\n" + _marker("helpers") + body
        elif kind == "check" and name:
            parsed.checks[name] = _marker("check", name) + body
        elif kind == "investigate":
            ident = _recorded_id(tree) or (name if is_comment_id(name) else None)
            if ident is not None:
                parsed.investigations[ident] = _marker(kind, ident) + body
    return parsed


def reusable_blocks(code: str, written_for: str, issues: list[IssueModel]) -> ParsedScript:
    """The blocks of an earlier script (of table `written_for`) that may run again.

    All of them when the script is of the current format.  An earlier version wrote issue ids
    raw into marker comments, so a name with a line break could turn into code there: of its
    scripts, only the blocks this version would write itself from today's names are kept
    (the heuristic agent's plain-named tables stay warm; anything else is investigated afresh).
    """
    parsed = parse_script(code)
    if parsed.current_format:
        return parsed
    same = lambda block, expected: block.rstrip() == expected.rstrip()  # noqa: E731
    checks = {k: b for k, b in parsed.checks.items() if k in CHECKS and same(b, check_block(k))}
    by_id = {i.id: i for i in issues}
    return ParsedScript(
        setup=parsed.setup
        if parsed.setup
        and any(same(parsed.setup, b) for b in (connection_block(written_for), setup_block(written_for)))
        else None,
        checks=checks,
        investigations={
            k: b
            for k, b in parsed.investigations.items()
            if k in by_id and check_type(by_id[k]) in checks and same(b, investigate_block(by_id[k], issues))
        },
        current_format=False,
    )


def retarget_setup(setup: str, table: str) -> Optional[str]:
    """An earlier setup block pointed at another table (cross-table transfer): its top-level
    `TABLE = ...` assignments now name `table`.  None when it has none to change."""
    lines = python_lines(setup)
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    values = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["TABLE"]
    ]
    for value in reversed(values):  # from the end, so earlier positions stay valid
        # ast gives columns as UTF-8 byte offsets
        head = lines[value.lineno - 1].encode()[: value.col_offset].decode()
        end = value.end_lineno or value.lineno  # always set by ast.parse
        tail = lines[end - 1].encode()[value.end_col_offset :].decode()
        lines[value.lineno - 1 : end] = [head + literal(table) + tail]
    return "\n".join(lines) if values else None


def parse_records(stdout: str) -> dict[str, dict]:
    """The JSON lines `record` printed, by issue id (the last one wins)."""
    found: dict[str, dict] = {}
    # print ends lines with \n alone: a value holding U+2028 or \x0c must not start a fake record
    for line in stdout.split("\n"):
        line = line.strip()
        if not line.startswith('{"issue"'):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("issue"), str):
            found[value.pop("issue")] = value
    return found
