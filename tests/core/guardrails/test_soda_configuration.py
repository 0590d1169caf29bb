"""Soda's configuration of the catalog's database: the connection as Soda Core 3 names it, the
password only as the name of its environment variable, and no value Soda would read as a template."""

import pytest
import yaml

from cataloger_dagster.core.guardrails.soda_configuration import (
    PASSWORD_VARIABLE,
    data_source_name,
    duckdb_source,
    postgres_source,
    soda_configuration,
)


def test_the_configuration_names_the_password_s_variable_never_a_password():
    text = soda_configuration("shop.duckdb", postgres_source("db.example", 5433, "reader", "shop", "sales"))
    (name, source), = yaml.safe_load(text).items()
    assert name == "data_source shop_duckdb"
    assert source == {"type": "postgres", "host": "db.example", "port": "5433", "username": "reader",
                      "password": "${ env_var('" + PASSWORD_VARIABLE + "') }", "database": "shop", "schema": "sales"}
    duck = yaml.safe_load(soda_configuration("xy", duckdb_source("/data/a b's.duckdb")))["data_source xy"]
    assert duck == {"type": "duckdb", "path": "/data/a b's.duckdb", "read_only": True}


def test_a_configuration_value_soda_would_read_as_a_template_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"the DuckDB file '/data/\$\{x\}.duckdb' holds '\$' or '\{'.*by hand"):
        duckdb_source("/data/${x}.duckdb")
    with pytest.raises(ValueError, match="the schema 'a{b'"):
        postgres_source("h", 5432, "u", "d", "a{b")


def test_the_data_source_s_name_is_one_soda_accepts():
    assert [data_source_name(n) for n in ("shop.duckdb", "x", "2024 sales", "é", "db.example:5432/shop/public")] == [
        "shop_duckdb", "source_x", "source_2024_sales", "source", "db_example_5432_shop_public"]
