"""The catalog page's column dictionary offers, beside each classified column's badges, the
command that says the column holds no personal data; hostile names stay data in it."""

from __future__ import annotations

import shlex

from cataloger_dagster.core.models import SensitiveClass
from cataloger_dagster.core.render.pages import render_catalog_page
from tests.core.render.test_pages import HOSTILE, make_results, parse


def classified(name: str, **extra) -> SensitiveClass:
    return SensitiveClass(name=name, share=0.9, sampled=100, matched=90, signals=["a test"], **extra)


def render() -> str:
    profile, understanding, issues, investigations = make_results()
    for column in profile.columns:
        if column.name == "customer_email":
            column.sensitive = [classified("email", reviewed=True)]
        elif column.name == HOSTILE:
            column.sensitive = [classified("person_name")]
    return render_catalog_page(profile=profile, understanding=understanding, issues=issues,
                               investigations=investigations, review={"database": "shop", "store": "/tmp/a b"})


def commands(html: str) -> dict[str, list[str]]:
    doc = parse(html)
    rows = [r for r in doc.root.find_all("tr") if "data-column" in r.attrs]
    out = {}
    for row in rows:
        found = row.find_all("code", cls="personal-review-command")
        if found:
            out[row.attrs["data-column"]] = shlex.split(found[0].text())
    return out


def test_each_classified_column_offers_its_not_personal_command_with_the_name_as_data():
    html = render()
    tail = ["--name", "shop", "--store", "/tmp/a b", "--", "orders"]
    assert commands(html) == {
        "customer_email": ["cataloger", "review", "--not-personal", *tail, "customer_email"],
        HOSTILE: ["cataloger", "review", "--not-personal", *tail, HOSTILE],
    }
    assert HOSTILE not in html  # escaped everywhere


def test_a_confirmed_class_is_marked_and_an_added_one_says_who_added_it():
    doc = parse(render())
    [email] = [b for b in doc.root.find_all("span") if b.attrs.get("data-sensitive") == "email"][:1]
    assert email.attrs.get("data-reviewed") == "yes" and email.text().endswith("✓")
    profile, understanding, issues, _ = make_results(hostile=False)
    profile.columns[3].sensitive = [SensitiveClass(name="email", share=0.0, sampled=0, matched=0, source="review",
                                                   reviewed=True, signals=["reviewed by ana on 2026-11-27 said so"])]
    doc = parse(render_catalog_page(profile=profile, understanding=understanding, issues=issues))
    [added] = [b for b in doc.root.find_all("span") if b.attrs.get("data-sensitive") == "email"][:1]
    assert added.attrs["title"] == "reviewed by ana on 2026-11-27 said so"
