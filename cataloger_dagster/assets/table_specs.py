"""The user's tables in Dagster's asset catalog: one external asset per cataloged table.

Built from the store's stored results each time the code location loads, so that a table
cataloged since appears on the next reload, with no change of code.  Each is an `AssetSpec`
keyed ``catalog/<database>/<table>`` carrying what dagster-dbt and dagster-sling give a table:
its column schema (with each column's meaning from the understanding), row count, description,
owners and tags, and besides: its open findings by severity, health and a link to its page.
With ``CATALOGER_TABLE_LINEAGE=1``, the references the catalog found between tables become
dependencies between their assets.  The pipeline's own (partitioned) assets are apart from these.

Names from the database are data: a key part is made of ``[A-Za-z0-9_]`` only (`key_part`), the
names themselves are kept in metadata, and every text Dagster renders as Markdown is escaped.
"""

from __future__ import annotations

import hashlib
import logging
import re
from typing import Iterable, Mapping

import dagster as dg

from cataloger_dagster.core.sensitive.classes import column_tags
from cataloger_dagster.assets.common import link
from cataloger_dagster.core.alerts import NO_OWNER, owner_of
from cataloger_dagster.core.cataloged import CatalogedTable
from cataloger_dagster.core.layout import parse_timestamp
from cataloger_dagster.core.shown import markdown_text, visible
from cataloger_dagster.resources.store import CatalogStore
from cataloger_dagster.resources.store.cataloged import read_cataloged_tables

log = logging.getLogger(__name__)

KEY_PREFIX = "catalog"
TABLES_GROUP = "tables"
FINDINGS_SHOWN = 10  # the open findings listed in a table's metadata, most severe first
_KEY_CHARS = re.compile(r"[^A-Za-z0-9_]+")
_TAG_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+\Z")
KEY_HASH = 8  # hex digits of the name's hash on a key part that is not the name itself
MAX_KEY_PART = 100


def key_part(name: str) -> str:
    """A table's name as an asset key part (``[A-Za-z0-9_]+``): itself when it is one already, else
    its other characters as ``_`` and a hash of the whole name, so two names never share a part."""
    if re.fullmatch(r"[A-Za-z0-9_]+", name) and len(name) <= MAX_KEY_PART:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:KEY_HASH]
    stem = _KEY_CHARS.sub("_", name).strip("_")[:MAX_KEY_PART]
    return f"{stem}_{digest}" if stem else f"t_{digest}"


def database_part(name: str) -> str:
    """The catalog's name as a key part: its other characters as ``_`` (``shop.duckdb`` ->
    ``shop_duckdb``), with no hash, since a code location holds one catalog."""
    return _KEY_CHARS.sub("_", name).strip("_")[:MAX_KEY_PART] or key_part(name)


def table_key(database: str, table: str) -> dg.AssetKey:
    return dg.AssetKey([KEY_PREFIX, database_part(database), key_part(table)])


def tag_value(text: str) -> str:
    """A text as a Dagster tag value: ``[A-Za-z0-9_.-]``, at most 63 characters."""
    return _TAG_CHARS.sub("_", text)[:63]


def dagster_owner(owner: str) -> str | None:
    """A `CATALOGER_TABLE_OWNERS` owner as Dagster takes one: an email address, or a team."""
    owner = owner.strip()
    if not owner or owner == NO_OWNER:
        return None
    if _EMAIL.match(owner) or (owner.startswith("team:") and len(owner) > len("team:")):
        return owner
    return f"team:{owner}"


def column_schema(entry: CatalogedTable) -> dg.TableSchema:
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name=c.name,
                type=c.type,
                description=markdown_text(c.description) if c.description else None,
                constraints=dg.TableColumnConstraints(nullable=c.nullable),
                tags=column_tags(c.sensitive),
            )
            for c in entry.columns
        ]
    )


def findings_summary(entry: CatalogedTable) -> dg.MetadataValue:
    if not entry.findings:
        return dg.MetadataValue.md("No open finding.")
    lines = ["| severity | finding |", "|---|---|"]
    lines += [f"| {f.severity} | {markdown_text(f.description)} |" for f in entry.findings[:FINDINGS_SHOWN]]
    if len(entry.findings) > FINDINGS_SHOWN:
        lines.append(f"\n{len(entry.findings) - FINDINGS_SHOWN} more on the table's page.")
    return dg.MetadataValue.md("\n".join(lines))


def table_spec(entry: CatalogedTable, *, owners: Mapping[str, str], lineage: bool) -> dg.AssetSpec:
    counts = entry.findings_by_severity
    metadata = {
        "dagster/column_schema": column_schema(entry),
        "dagster/row_count": entry.row_count,
        "table": entry.table,
        "database": entry.database,
        "page": link(entry.page),
        **({"timelapse": link(entry.timelapse)} if entry.timelapse else {}),
        "health": entry.health,
        **{f"findings_{severity}": n for severity, n in counts.items()},
        "findings": findings_summary(entry),
        "cataloged_at": dg.MetadataValue.timestamp(parse_timestamp(entry.run)),
        **({"pass_rate": entry.pass_rate} if entry.pass_rate is not None else {}),
        **({"references": ", ".join(entry.references)} if entry.references else {}),
    }
    owner = dagster_owner(owner_of(entry.table, owners))
    description = entry.description or f"Table {entry.table} of {entry.database}."
    return dg.AssetSpec(
        key=table_key(entry.database, entry.table),
        description=markdown_text(description),
        metadata=metadata,
        group_name=TABLES_GROUP,
        owners=[owner] if owner else [],
        tags={
            "cataloger/database": tag_value(entry.database),
            "cataloger/health": entry.health_band,
            "cataloger/worst_finding": entry.worst_severity,
            "cataloger/status": tag_value(entry.status),
            # the table holds personal data somewhere: the filter of "where personal data lives"
            **({"cataloger/personal_data": "yes"} if any(c.sensitive for c in entry.columns) else {}),
            **{f"sensitive/{k}": "" for k in sorted({k for c in entry.columns for k in c.sensitive})},
        },
        kinds={"table"},
        deps=[table_key(entry.database, other) for other in entry.references] if lineage else [],
    )


def table_specs(entries: Iterable[CatalogedTable], *, owners: Mapping[str, str], lineage: bool) -> list[dg.AssetSpec]:
    """One spec per table; a table whose key another already has is left out, logged by name.
    Lineage only between the tables listed: a reference to one not cataloged draws nothing."""
    entries = list(entries)
    specs: dict[dg.AssetKey, dg.AssetSpec] = {}
    for entry in entries:
        key = table_key(entry.database, entry.table)
        if key in specs:
            log.warning(
                visible(
                    f"table {entry.table!r} left out of Dagster's catalog: its asset key "
                    f"{key.to_user_string()} is another table's"
                )
            )
            continue
        specs[key] = table_spec(entry, owners=owners, lineage=lineage)
    return [spec.replace_attributes(deps=[d for d in spec.deps if d.asset_key in specs]) for spec in specs.values()]


def stored_table_specs(
    store: CatalogStore, database: str, *, owners: Mapping[str, str], lineage: bool
) -> list[dg.AssetSpec]:
    """The specs of every table of ``database`` cataloged in ``store``.  A store that cannot be read
    lists none, and says why in one line: the pipeline still loads, to catalog them."""
    try:
        entries, problems = read_cataloged_tables(store, database)
    except Exception as e:  # any backend's failure (a missing bucket, no credentials): never the pipeline's
        log.warning(
            visible(
                f"the cataloged tables of {database!r} are not in Dagster's catalog: "
                f"{store.describe()} could not be read ({type(e).__name__}: {e})"
            )
        )
        return []
    for problem in problems:
        log.warning(problem)
    return table_specs(entries, owners=owners, lineage=lineage)
