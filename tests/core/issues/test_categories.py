"""Labels written several ways: misspellings, company-suffix variants, makes inside names, capitals."""

from __future__ import annotations

import pytest

from cataloger_dagster.core.issues.categories import (
    case_inside_labels, code_case_variants, edit_distance, first_word_variants, group_variants, normal_key,
)


@pytest.mark.parametrize("a, b, distance", [
    ("chevroelt", "chevrolet", 1),   # a transposition is one edit
    ("toyouta", "toyota", 1),
    ("maxda", "mazda", 1),
    ("vokswagen", "volkswagen", 1),
    ("mazda", "mazda", 0),
    ("abc", "abcdefgh", 3),          # capped at limit + 1
    ("kitten", "sitting", 3),
])
def test_edit_distance(a, b, distance):
    assert edit_distance(a, b, limit=2) == distance


def test_normal_key():
    assert normal_key(" Rock_&-Roll ") == normal_key("rock and roll")


def test_case_and_spacing_variants():
    found = group_variants({"Zürich": 40, "zürich ": 2, "ZÜRICH": 1, "Kraków": 30})
    assert found.groups == {"Zürich": {"Zürich": 40, "zürich ": 2, "ZÜRICH": 1}}
    assert found.why["Zürich"] == "letter case"
    assert found.rows == 3


def test_a_rare_misspelling_joins_its_frequent_value():
    found = group_variants({"chevrolet": 43, "chevroelt": 1, "ford": 51, "toyota": 25, "toyouta": 1})
    assert found.groups == {"chevrolet": {"chevrolet": 43, "chevroelt": 1},
                            "toyota": {"toyota": 25, "toyouta": 1}}
    assert found.why["toyota"] == "one letter apart" and found.rows == 2


def test_two_frequent_values_one_letter_apart_are_two_values():
    # 'Marina' is no misspelling of 'Marine' when both are common
    assert not group_variants({"Marine": 50, "Marina": 45, "Desert": 30})


def test_short_codes_are_never_misspellings():
    assert not group_variants({"CA": 100, "CO": 3, "IL": 40, "AL": 2, "PG": 50, "PG-13": 40, "G": 9, "R": 90,
                               "NC-17": 1})


def test_company_suffix_variants():
    found = group_variants({"AIRBUS": 500, "AIRBUS INDUSTRIE": 300, "BOEING": 900, "EMBRAER": 80,
                            "BOMBARDIER INC": 60})
    assert set(found.groups) == {"AIRBUS"}
    assert set(found.groups["AIRBUS"]) == {"AIRBUS", "AIRBUS INDUSTRIE"}
    assert found.why["AIRBUS"] == "the same first words"


def test_a_company_and_its_division_are_two_companies():
    assert not group_variants({"Sony Pictures": 50, "Sony Pictures Classics": 30, "Paramount Pictures": 70,
                               "Paramount Vantage": 12, "Paramount Classics": 9, "Warner Bros.": 90,
                               "20th Century Fox": 60, "Fox Searchlight": 20})


def test_signed_numbers_are_never_spellings_of_each_other():
    values = {"-0.6": 12, "0.6": 11, "0.5": 2, "-1.2": 1, "1.2": 30, "10": 4, "1O": 1}
    found = group_variants(values)
    assert all(not any(ch.isdigit() for ch in v) for g in found.groups.values() for v in g), found.groups


def test_dates_one_keystroke_apart_are_different_dates():
    days = {f"2001/01/{d:02d} 00:47": 20 for d in range(1, 29)} | {"2001/01/01 00:48": 1}
    assert not group_variants(days)
    named = {f"Jun {d:02d} 1998": 20 for d in range(1, 29)} | {"Jun 12 1989": 1}
    assert not group_variants(named)


MAKES = {
    "chevrolet": ["chevelle malibu", "impala", "monte carlo", "nova", "vega", "caprice classic", "camaro", "citation"],
    "toyota": ["corolla", "corona", "celica", "carina", "cressida", "starlet", "tercel", "mark ii"],
    "mazda": ["rx-4", "glc deluxe", "rx3", "626", "rx-7 gs", "glc", "glc custom", "rx2 coupe"],
    "volkswagen": ["rabbit", "dasher", "super beetle", "jetta", "scirocco", "type 3", "model 111", "pickup"],
    "ford": ["pinto", "maverick", "torino", "galaxie 500", "mustang", "fiesta", "granada", "fairmont"],
    "honda": ["civic", "accord", "prelude", "civic cvcc", "accord lx", "civic 1300", "civic 1500 gl", "accord cvcc"],
    "datsun": ["510", "b210", "710", "200sx", "280-zx", "pl510", "b-210", "f-10 hatchback"],
    "buick": ["skylark", "century", "estate wagon", "lesabre custom", "regal", "opel isuzu deluxe", "skyhawk",
              "electra 225"],
    "dodge": ["colt", "dart custom", "aspen", "charger 2.2", "omni", "challenger se", "coronet", "rampage"],
    "plymouth": ["fury iii", "valiant", "duster", "volare", "horizon", "satellite", "arrow gs", "champ"],
}


def _car_names(extra: dict[str, int]) -> dict[str, int]:
    names = {f"{make} {model}": 2 for make, models in MAKES.items() for model in models}
    return names | extra


def test_misspelled_makes_inside_car_names():
    names = _car_names({"chevroelt chevelle malibu": 1, "toyouta corona mark ii": 1, "maxda glc deluxe": 1,
                        "maxda rx3": 1, "vokswagen rabbit": 1, "chevy s-10": 1})
    found = first_word_variants(names)
    assert found.part == "first word"
    assert found.groups == {
        "chevrolet": {"chevrolet": 16, "chevroelt": 1},
        "toyota": {"toyota": 16, "toyouta": 1},
        "mazda": {"mazda": 16, "maxda": 2},
        "volkswagen": {"volkswagen": 16, "vokswagen": 1},
    }


def test_makes_with_a_hyphenated_name():
    found = first_word_variants(_car_names({"mercedes-benz 240d": 1, "mercedes-benz 280s": 1,
                                            "mercedes-benz 300d": 1, "mercedes 300d": 1}))
    # 'mercedes-benz' and 'mercedes' are one make; no other make is touched
    assert list(found.groups) == ["mercedes-benz"] and set(found.groups["mercedes-benz"]) == {
        "mercedes-benz", "mercedes"}


def test_correct_car_names_have_no_variants():
    assert not first_word_variants(_car_names({}))


def test_first_words_of_free_text_are_no_category():
    # as many first words as values: the first word is no make
    titles = {f"{w} story {i}": 1 for i, w in enumerate(["The", "A", "Tha", "An", "Our", "Out", "One", "Once"])}
    assert not first_word_variants(titles)


def test_capitals_inside_labels():
    labels = {"Adelie Penguin (Pygoscelis adeliae)": 152, "Gentoo penguin (Pygoscelis papua)": 124,
              "Chinstrap penguin (Pygoscelis antarctica)": 68}
    assert case_inside_labels(labels) == {"penguin": {
        "Penguin": ["Adelie Penguin (Pygoscelis adeliae)"],
        "penguin": ["Chinstrap penguin (Pygoscelis antarctica)", "Gentoo penguin (Pygoscelis papua)"],
    }}


def test_capitals_of_a_first_word_or_a_new_sentence_are_no_variant():
    assert case_inside_labels({"Adelie": 152, "adelie": 3, "Torgersen": 50}) == {}
    assert case_inside_labels({"Nest observed. Adult not sampled.": 3, "Adult not sampled.": 9,
                               "Full clutch": 4}) == {}


def test_a_rare_value_one_letter_from_a_frequent_one_among_rare_values():
    hair = {"brown": 18, "black": 13, "none": 37, "white": 4, "blond": 3, "blonde": 1, "auburn": 1,
            "grey": 1, "auburn, white": 1, "brown, grey": 1, "auburn, grey": 1}
    found = group_variants(hair)
    assert found.groups == {"blond": {"blond": 3, "blonde": 1}}
    assert found.why["blond"] == "one letter apart"


def test_two_edits_only_in_long_words_much_rarer():
    assert group_variants({"Accommodation": 200, "Acommodaton": 3, "Transport": 150}).groups == {
        "Accommodation": {"Accommodation": 200, "Acommodaton": 3}}
    # two edits in short words make other words: no variant
    assert not group_variants({"Slovenia": 40, "Slovakia": 12, "Austria": 30})
    assert not group_variants({"Monday": 40, "Sunday": 3})


@pytest.mark.parametrize("values", [
    {"A1": 50, "A2": 3, "B1": 40},                          # codes one digit apart
    {"2019": 50, "2018": 4, "2017": 30},                    # years
    {"MA": 80, "ME": 4, "NH": 20},                          # short codes
    {"Mr": 60, "Ms": 5, "Mrs": 30, "Dr": 3},                # titles
    {"Jan": 31, "Jun": 3, "Jul": 31, "Feb": 28},            # months
    {"Type I": 80, "Type II": 5, "Type III": 20},           # numerals as words
    {"Class A": 70, "Class B": 6},                          # letters as words
    {"North East": 60, "North West": 7, "South": 50},       # short words that differ
    {"Gentoo": 124, "Adelie": 152, "Chinstrap": 68},        # distinct words
])
def test_legitimately_distinct_values_are_never_variants(values):
    assert not group_variants(values), values


def test_a_code_in_another_case_than_every_other_code():
    codes = {f"AL{year}{n:02d}": 40 for year in range(2000, 2012) for n in range(1, 15)}
    codes |= {f"EP{year}{n:02d}": 30 for year in range(2000, 2012) for n in range(1, 10)}
    found = code_case_variants(codes | {"Al201111": 5})
    assert found.groups == {"AL201111": {"AL201111": 40, "Al201111": 5}}
    # without its twin the odd code is still another case of the column's codes
    found = code_case_variants({k: v for k, v in codes.items() if k != "AL201111"} | {"Al201111": 5})
    assert found.groups == {"AL201111": {"Al201111": 5}} and found.rows == 5


def test_codes_of_mixed_case_by_nature_have_no_case_variant():
    # case-sensitive identifiers (base 62): no case is the column's
    ids = {"aB3x": 1, "Qz81": 1, "mm0P": 1, "K9dd": 1, "x7Yt": 1, "PP2a": 1, "r5Ts": 1, "ZZ9z": 1}
    assert not code_case_variants(ids)
    # words are no codes
    assert not code_case_variants({"iPhone": 3, "Gentoo": 50, "Adelie": 40})
