"""Merge a table's guardrails and descriptions into a dbt schema file, as a round trip.

The file keeps everything a person wrote: comments, key order, indentation and their own tests.
The catalog's part is what carries `config: meta: cataloger:` (each test, and the description it
last wrote on a table or a column); a new export replaces exactly that part, so a re-run never
duplicates a test, and a test a person wrote that says the same as one of the catalog's stands
for it.  A description a person wrote (one the catalog did not write last) stays unless
`overwrite_descriptions`.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.util import load_yaml_guess_indent

from cataloger_dagster.core.guardrails.export_dbt import MARK, jinja_text, source_name, suite_tests
from cataloger_dagster.core.guardrails.model import GuardrailSuite


@dataclass
class Descriptions:
    """What the understanding says of a table and its columns."""

    table: Optional[str] = None
    columns: Sequence[tuple[str, str]] = ()


@dataclass
class TableExport:
    """One table as the export writes it: its tests (from its suite) and its descriptions."""

    table: str
    suite: Optional[GuardrailSuite] = None
    descriptions: Optional[Descriptions] = None


def _yaml(sequence: int = 4, offset: int = 2) -> YAML:
    """dbt's usual layout by default (`  - name:` under its key), else the file's own: a sequence's
    items `sequence` in, their dash `offset` in, and a mapping's keys as far in as an item's."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # a person's long line is not folded
    yaml.indent(mapping=sequence - offset if sequence > offset else sequence, sequence=sequence, offset=offset)
    return yaml


def load(text: str) -> tuple[Any, YAML]:
    """The document of `text`, and a YAML that writes it back with the file's own indentation."""
    if not text.strip():
        return CommentedMap(version=2), _yaml()
    _, sequence, offset = load_yaml_guess_indent(text)
    yaml = _yaml(sequence or 4, offset if offset is not None else 2)
    data = yaml.load(text)
    if not isinstance(data, CommentedMap):
        raise ValueError("the file does not hold a mapping of dbt properties")
    return data, yaml


def dump(data: Any, yaml: YAML) -> str:
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def declares(data: Any, database: str) -> bool:
    """Whether a loaded schema file declares the source of `database`."""
    sources = data.get("sources") if isinstance(data, dict) else None
    return isinstance(sources, list) and any(_named(s, source_name(database)) for s in sources)


def merge(
    data: CommentedMap, database: str, schema: str, what: TableExport, *, overwrite_descriptions: bool = False
) -> None:
    """Write a table's tests and descriptions into the loaded file, in place, under the source of
    `database` (declared in `schema` when the file has none)."""
    table, suite, descriptions = what.table, what.suite, what.descriptions
    data.setdefault("version", 2)
    sources = _list(data, "sources")
    source = _find(sources, source_name(database))
    if source is None:
        source = CommentedMap(name=source_name(database), schema=schema)
        source["quoting"] = CommentedMap(identifier=True, schema=True)
        source["config"] = CommentedMap(meta=CommentedMap({MARK: CommentedMap(database=database)}))
        sources.append(source)
    tables = _list(source, "tables")
    entry = _find(tables, jinja_text(table))
    if entry is None:
        entry = CommentedMap(name=jinja_text(table))
        tables.append(entry)
    described = descriptions or Descriptions()
    if described.table:
        _describe(entry, described.table, overwrite_descriptions)
    table_tests, by_column = suite_tests(suite) if suite is not None else ([], {})
    column_tests = {jinja_text(c): tests for c, tests in by_column.items()}
    texts = {jinja_text(c): text for c, text in described.columns}
    for name in [*texts, *(c for c in column_tests if c not in texts)]:
        column = _find(entry.get("columns"), name)
        if column is None:
            column = CommentedMap(name=name, quote=True)
            _list(entry, "columns").append(column)
        if texts.get(name):
            _describe(column, texts[name], overwrite_descriptions)
    if suite is not None:
        _replace_tests(entry, table_tests)
        for column in entry.get("columns") or []:
            if isinstance(column, dict):
                _replace_tests(column, column_tests.get(str(column.get("name")), []))


def _named(item: Any, name: str) -> bool:
    return isinstance(item, dict) and str(item.get("name")) == name


def _find(items: Any, name: str) -> Optional[CommentedMap]:
    return next((i for i in items if _named(i, name)), None) if isinstance(items, list) else None


def _list(mapping: CommentedMap, key: str) -> CommentedSeq:
    if not isinstance(mapping.get(key), list):
        mapping[key] = CommentedSeq()
    return mapping[key]


def _mark(item: Any) -> Optional[dict]:
    """The catalog's mark on a test, table or column (`config: meta: cataloger:`), if any."""
    config = item.get("config") if isinstance(item, dict) else None
    meta = config.get("meta") if isinstance(config, dict) else None
    mark = meta.get(MARK) if isinstance(meta, dict) else None
    return mark if isinstance(mark, dict) else None


def _describe(item: CommentedMap, text: str, overwrite: bool) -> None:
    """Set the description unless a person wrote the one there (`meta` holds what the catalog
    wrote last, as it is: dbt does not render `meta`)."""
    current, mark = item.get("description"), _mark(item)
    written_by_us = (
        mark is not None and isinstance(mark.get("description"), str) and jinja_text(mark["description"]) == current
    )
    if current and not written_by_us and not overwrite:
        return
    if current == jinja_text(text) and written_by_us:
        return
    item["description"] = jinja_text(text)
    config = item.setdefault("config", CommentedMap())
    meta = config.setdefault("meta", CommentedMap())
    meta.setdefault(MARK, CommentedMap())["description"] = text


def _replace_tests(item: CommentedMap, new: list[dict[str, Any]]) -> None:
    """The item's tests: a person's kept as they are, the catalog's replaced by `new`, but for
    those a person's test already says."""
    key = "tests" if "tests" in item and "data_tests" not in item else "data_tests"
    existing = item.get(key) if isinstance(item.get(key), list) else []
    kept = [t for t in existing if not _catalogs(t)]
    added = [t for t in new if not any(_same(t, k) for k in kept)]
    if not kept and not added:
        if key in item and existing:
            del item[key]
        return
    tests = item[key] if isinstance(item.get(key), list) else CommentedSeq()
    for i in reversed(range(len(tests))):
        if _catalogs(tests[i]):
            del tests[i]
    tests.extend(_commented(t) for t in added)
    item[key] = tests


def _catalogs(test: Any) -> bool:
    """Whether a test entry is the catalog's (its body carries the mark)."""
    return isinstance(test, dict) and len(test) == 1 and _mark(next(iter(test.values()))) is not None


def _same(ours: dict[str, Any], theirs: Any) -> bool:
    """Whether a person's test says what one of the catalog's native tests says."""
    ((test, body),) = ours.items()
    if isinstance(theirs, str):
        return theirs == test and "arguments" not in body
    if not isinstance(theirs, dict) or len(theirs) != 1 or test not in theirs:
        return False
    given: dict = theirs[test] if isinstance(theirs[test], dict) else {}
    args: dict = given["arguments"] if isinstance(given.get("arguments"), dict) else given
    wanted = body.get("arguments", {})
    if test == "accepted_values":
        return sorted(map(str, args.get("values") or [])) == sorted(wanted["values"])
    if test == "relationships":
        return str(args.get("field")) == wanted["field"] and str(args.get("to")).replace('"', "'") == wanted["to"]
    return test in ("not_null", "unique")


def _commented(value: Any) -> Any:
    if isinstance(value, dict):
        return CommentedMap((k, _commented(v)) for k, v in value.items() if v is not None)
    if isinstance(value, list):
        return CommentedSeq(_commented(v) for v in value)
    return value
