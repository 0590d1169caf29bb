"""Soda's configuration, written from the database URL the catalog was given: where the
database is, never its password."""

import pytest
import yaml

from cataloger_dagster.cli.soda_files import configuration_of, write_configuration


def test_a_postgres_url_becomes_its_connection_and_its_password_stays_out():
    text = configuration_of("postgres://reader:s3cr%40t@db.example:5433/shop?schema=sales&sslmode=require", "shop")
    assert "s3cr" not in text
    assert yaml.safe_load(text) == {"data_source shop": {
        "type": "postgres", "host": "db.example", "port": "5433", "username": "reader",
        "password": "${ env_var('CATALOGER_SOURCE_PASSWORD') }", "database": "shop", "schema": "sales"}}
    public = yaml.safe_load(configuration_of("postgresql://u@h/db", "db"))["data_source db"]
    assert (public["port"], public["schema"]) == ("5432", "public")


def test_a_duckdb_url_becomes_its_file_s_absolute_path_read_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    source = yaml.safe_load(configuration_of("duckdb://shop.duckdb", "shop.duckdb"))["data_source shop_duckdb"]
    assert source == {"type": "duckdb", "path": str(tmp_path / "shop.duckdb"), "read_only": True}


def test_another_source_is_refused_in_one_line_naming_it():
    with pytest.raises(ValueError, match=r"^database 'x': the Soda export configures DuckDB and PostgreSQL sources, "
                                         r"not sqlite: write configuration.yml by hand"):
        configuration_of("sqlite:///x.sqlite", "x")


def test_without_a_database_given_no_configuration_is_guessed(tmp_path, monkeypatch):
    monkeypatch.delenv("CATALOGER_DATABASE", raising=False)
    monkeypatch.chdir(tmp_path)  # no .env here
    said = write_configuration(tmp_path, None, "shop.duckdb", str(tmp_path / "catalog"), "shop.duckdb")
    assert said.startswith("configuration.yml not written: give --database")
    assert not (tmp_path / "configuration.yml").exists()
