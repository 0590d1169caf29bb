"""One category written several ways (never numbers, signs or dates), and values that break a format."""

from __future__ import annotations

import random

import pytest

from cataloger_dagster.core.issues import text_values
from cataloger_dagster.core.issues.detectors.labels import inconsistent_categories, invalid_format

MAKES = {
    "chevrolet": ["chevelle malibu", "impala", "monte carlo", "nova", "vega 2300", "caprice classic", "camaro",
                  "citation", "malibu", "concours", "monza 2+2", "chevette", "vega", "bel air"],
    "ford": ["pinto", "maverick", "torino", "galaxie 500", "mustang", "fiesta", "granada", "fairmont",
             "ltd", "gran torino", "mustang ii", "futura", "thunderbird", "country squire (sw)"],
    "toyota": ["corolla", "corona", "celica gt", "carina", "cressida", "starlet", "tercel", "mark ii",
               "corolla 1200", "corona mark ii", "corolla tercel", "celica gt liftback", "corona hardtop"],
    "mazda": ["rx-4", "glc deluxe", "rx3", "626", "rx-7 gs", "glc", "glc custom", "rx2 coupe", "glc 4"],
    "volkswagen": ["rabbit", "dasher", "super beetle", "jetta", "scirocco", "type 3", "model 111", "pickup",
                   "rabbit custom", "rabbit l"],
    "honda": ["civic", "accord", "prelude", "civic cvcc", "accord lx", "civic 1300", "civic 1500 gl"],
    "datsun": ["510", "b210", "710", "200sx", "280-zx", "pl510", "b-210", "f-10 hatchback", "1200", "610"],
    "plymouth": ["fury iii", "valiant", "duster", "volare", "horizon", "satellite", "arrow gs", "champ",
                 "reliant", "sapporo", "cricket"],
    "amc": ["hornet", "gremlin", "matador", "ambassador dpl", "rebel sst", "pacer", "concord", "spirit dl"],
    "dodge": ["colt", "dart custom", "aspen", "charger 2.2", "omni", "challenger se", "coronet", "rampage"],
}


def _cars(tables, misspelled: list[str]) -> None:
    names = [f"{make} {model}" for make, models in MAKES.items() for model in models]
    # most names once, some twice (a model sold over several years), as in the cars dataset
    rows = [(n,) for n in names] + [(n,) for n in names[::3]] + [(m,) for m in misspelled]
    tables.rows("cars", "name VARCHAR", rows)


def test_misspelled_makes_inside_car_names(tables):
    _cars(tables, ["chevroelt chevelle malibu", "toyouta corona mark ii", "maxda glc deluxe", "maxda rx3"])
    found = inconsistent_categories(tables.context("cars"), *_col(tables, "cars", "name"))
    assert found is not None and found.details["part"] == "first word"
    groups = found.details["groups"]
    assert set(groups) == {"chevrolet", "toyota", "mazda"}
    assert set(groups["chevrolet"]) == {"chevrolet", "chevroelt"}
    assert set(groups["toyota"]) == {"toyota", "toyouta"}
    assert groups["mazda"]["maxda"] == 2
    assert found.affectedRows == 4
    assert "in its first word" in found.description


def test_correct_car_names_are_clean(tables):
    _cars(tables, [])
    assert inconsistent_categories(tables.context("cars"), *_col(tables, "cars", "name")) is None


def test_company_suffix_variants_but_not_a_studio_and_its_division(tables):
    makers = ["BOEING"] * 90 + ["AIRBUS"] * 50 + ["AIRBUS INDUSTRIE"] * 30 + ["EMBRAER"] * 20 + ["CESSNA"] * 10
    studios = (["Sony Pictures"] * 50 + ["Sony Pictures Classics"] * 30 + ["Paramount Pictures"] * 60
               + ["Paramount Vantage"] * 10 + ["Warner Bros."] * 50)
    tables.rows("strikes", "aircraft_make VARCHAR, distributor VARCHAR", list(zip(makers, studios)))
    ctx = tables.context("strikes")
    make = inconsistent_categories(ctx, *_col(tables, "strikes", "aircraft_make"))
    assert make.details["groups"] == {"AIRBUS": {"AIRBUS": 50, "AIRBUS INDUSTRIE": 30}}
    assert make.affectedRows == 30
    assert inconsistent_categories(ctx, *_col(tables, "strikes", "distributor")) is None


def test_capitals_inside_species_labels(tables):
    species = (["Adelie Penguin (Pygoscelis adeliae)"] * 152 + ["Gentoo penguin (Pygoscelis papua)"] * 124
               + ["Chinstrap penguin (Pygoscelis antarctica)"] * 68)
    islands = ["Torgersen", "Biscoe", "Dream"] * (len(species) // 3) + ["Dream"] * (len(species) % 3)
    tables.rows("penguins", "species VARCHAR, island VARCHAR", list(zip(species, islands)))
    ctx = tables.context("penguins")
    found = inconsistent_categories(ctx, *_col(tables, "penguins", "species"))
    assert found is not None
    assert set(found.details["case_variants"]) == {"penguin"}
    assert found.affectedRows == 152        # the rarer spelling, 'Penguin'
    assert found.details["groups"] == {}
    assert inconsistent_categories(ctx, *_col(tables, "penguins", "island")) is None


def test_signed_numbers_in_a_text_column_are_not_categories(tables):
    # SQLite's .import leaves every column TEXT: temperatures are text there
    rng = random.Random(1)
    temps = [f"{rng.choice([-1, 1]) * rng.randint(0, 150) / 10:.1f}" for _ in range(1500)]
    tables.rows("weather", "temp_min VARCHAR", [(t,) for t in temps])
    assert "-0.6" in temps and "0.6" in temps
    assert inconsistent_categories(tables.context("weather"), *_col(tables, "weather", "temp_min")) is None


def test_dates_one_keystroke_apart_in_text_are_not_categories(tables):
    days = [f"2012-{m:02d}-{d:02d}" for m in range(1, 13) for d in range(1, 29)]
    rows = [(d, f"2001/01/{1 + i % 28:02d} 00:{i % 60:02d}") for i, d in enumerate(days)]
    tables.rows("weather", "date VARCHAR, observed VARCHAR", rows * 2)
    ctx = tables.context("weather")
    assert inconsistent_categories(ctx, *_col(tables, "weather", "date")) is None
    assert inconsistent_categories(ctx, *_col(tables, "weather", "observed")) is None


def test_numbers_mixed_into_labels_are_not_spellings(tables):
    # mostly labels, with a few numbers one keystroke apart: the numbers are never grouped
    rows = [(["Sunny", "Rain", "Fog", "Drizzle", "Snow"][i % 5],) for i in range(300)] + \
           [("-0.6",), ("0.6",), ("0.6",), ("10",), ("100",)]
    tables.rows("w", "weather VARCHAR", rows)
    assert inconsistent_categories(tables.context("w"), *_col(tables, "w", "weather")) is None


def test_placeholders_are_not_variants(tables):
    rows = [(["R", "PG", "PG-13", "G", "Not Rated", "Unrated", "NC-17"][i % 7],) for i in range(350)]
    tables.rows("movies", "mpaa_rating VARCHAR", rows)
    assert inconsistent_categories(tables.context("movies"), *_col(tables, "movies", "mpaa_rating")) is None


def test_invalid_emails_but_not_placeholders(tables):
    rows = [("N/A" if i % 20 == 0 else ("person" + str(i) + ".example.com" if i % 25 == 0
                                         else f"person{i}@example.com"),) for i in range(500)]
    tables.rows("people", "email VARCHAR", rows)
    found = invalid_format(tables.context("people"), *_col(tables, "people", "email"))
    broken = sum(1 for i in range(500) if i % 20 and i % 25 == 0)
    assert found.affectedRows == broken and "N/A" not in found.details["examples"]


def test_no_format_issue_when_most_values_do_not_match(tables):
    # a column called email that holds names: it is no email column with bad values
    rows = [(f"name {i}",) for i in range(90)] + [(f"x{i}@example.com",) for i in range(10)]
    tables.rows("contacts", "email VARCHAR", rows)
    assert invalid_format(tables.context("contacts"), *_col(tables, "contacts", "email")) is None


@pytest.mark.parametrize("read_on_host", [True, False])
def test_titles_kept_in_their_json_quotes(tables, monkeypatch, read_on_host):
    if not read_on_host:   # too many values for the host: the database counts them
        monkeypatch.setattr(text_values, "MAX_DISTINCT", 50)
    rows = [(f'"Film {i}"' if i % 3 else f"Film {i}",) for i in range(300)]
    tables.rows("movies", "title VARCHAR", rows)
    ctx = tables.context("movies")
    assert (ctx.values(_col(tables, "movies", "title")[0]) is not None) == read_on_host
    found = invalid_format(ctx, *_col(tables, "movies", "title"))
    assert found.affectedRows == 200 and found.details["values"] == 300
    assert found.details["examples"] == ['"Film 1"', '"Film 10"', '"Film 100"']


def _col(tables, table: str, column: str):
    cp = next(c for c in tables.profile(table).columns if c.name == column)
    return cp, tables.con.table(table).schema()[column]


def test_one_storm_code_in_another_case_among_hundreds(tables):
    # 600 storm codes (more than a category holds), each on 10-40 rows; one written 'Al'
    rows = [(f"{basin}{year}{n:02d}",) for basin in ("AL", "EP") for year in range(2000, 2020)
            for n in range(1, 16) for _ in range(10 + (year + n) % 30)]
    rows += [("Al201811",)] * 12
    tables.rows("storms", "storm_id VARCHAR", rows)
    found = inconsistent_categories(tables.context("storms"), *_col(tables, "storms", "storm_id"))
    assert found is not None and found.affectedRows == 12
    assert found.details["groups"] == {"AL201811": {"AL201811": 29, "Al201811": 12}}
    assert "upper case" in found.details["rules"]["AL201811"]


def test_upper_case_codes_without_an_odd_one_are_clean(tables):
    rows = [(f"{basin}{year}{n:02d}",) for basin in ("AL", "EP") for year in range(2000, 2020)
            for n in range(1, 16) for _ in range(3)]
    tables.rows("storms", "storm_id VARCHAR", rows)
    assert inconsistent_categories(tables.context("storms"), *_col(tables, "storms", "storm_id")) is None


def _damage(tables, labels: dict[str, int]) -> None:
    tables.rows("strikes", "damage VARCHAR", [(label,) for label, n in labels.items() for _ in range(n)])


def test_single_letters_among_words_are_another_coding_scheme(tables):
    # damage written as words, and 15 rows in a letter code of another form
    _damage(tables, {"None": 900, "Minor": 60, "Medium": 30, "Substantial": 10, "C": 14, "B": 1})
    found = inconsistent_categories(tables.context("strikes"), *_col(tables, "strikes", "damage"))
    assert found is not None
    assert found.details["letter_codes"] == {"C": 14, "B": 1}
    assert found.affectedRows == 15
    assert "'C' (14)" in found.description and "another coding scheme" in found.description


@pytest.mark.parametrize("labels, why", [
    ({"S": 300, "M": 500, "L": 200}, "a column of letter codes"),
    ({"Small": 300, "Medium": 500, "Large": 200, "S": 150, "L": 100}, "letters in common use: a scheme of its own"),
    ({"A": 40, "B": 30, "AB": 10, "O": 45}, "blood groups: short codes only"),
    ({"Yes": 500, "No": 480}, "two words only"),
    ({"Drama": 400, "Comedy": 300, "Action": 200, "Sci-Fi": 50}, "words only"),
])
def test_letters_that_are_the_column_s_scheme_are_clean(tables, labels, why):
    _damage(tables, labels)
    assert inconsistent_categories(tables.context("strikes"), *_col(tables, "strikes", "damage")) is None, why
