"""The files a table's page offers for download: the run's guardrail suite in each tool's
format, written beside the page in the run's folder, so that a reader takes them without the
command line.  The same renderers as `cataloger export` (one copy of each format)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from cataloger_dagster.core.guardrails import dbt_schema
from cataloger_dagster.core.guardrails.dbt_schema import Descriptions, TableExport
from cataloger_dagster.core.guardrails.export_dbt import default_schema
from cataloger_dagster.core.guardrails.export_gx import suite_json
from cataloger_dagster.core.guardrails.export_soda import suite_soda
from cataloger_dagster.core.guardrails.export_sql import suite_sql
from cataloger_dagster.core.guardrails.model import GuardrailSuite
from cataloger_dagster.core.layout import GUARDRAILS_DBT, GUARDRAILS_GX, GUARDRAILS_SODA, GUARDRAILS_SQL


@dataclass(frozen=True)
class Download:
    key: str  # the page's link (its label: core/render/pages.py LINK_LABELS)
    filename: str  # in the run's folder
    render: Callable[[GuardrailSuite, Optional[Descriptions]], str]


def _dbt(suite: GuardrailSuite, descriptions: Optional[Descriptions]) -> str:
    """A schema file declaring the table as a source, for a dbt project's models/ folder."""
    data, yaml = dbt_schema.load("")
    dbt_schema.merge(data, suite.database, default_schema(suite.dialect), TableExport(suite.table, suite, descriptions))
    return dbt_schema.dump(data, yaml)


DOWNLOADS: tuple[Download, ...] = (
    Download("guardrails_sql", GUARDRAILS_SQL, lambda suite, _: suite_sql(suite)),
    Download("guardrails_soda", GUARDRAILS_SODA, lambda suite, _: suite_soda(suite)),
    Download("guardrails_dbt", GUARDRAILS_DBT, _dbt),
    Download("guardrails_gx", GUARDRAILS_GX, lambda suite, _: suite_json(suite)),
)


def suite_files(suite: GuardrailSuite, descriptions: Optional[Descriptions] = None) -> list[tuple[Download, str]]:
    """Each download with its content."""
    return [(d, d.render(suite, descriptions)) for d in DOWNLOADS]
