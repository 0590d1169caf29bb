"""The reference graph of the index (core/render/reference_graph.py): an SVG drawn in Python from
the references the catalog found, arrows from the referencing table."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from cataloger_dagster.core.render.reference_graph import BOX_W, svg_reference_graph

SVG = "{http://www.w3.org/2000/svg}"


def graph(markup) -> ET.Element:
    return ET.fromstring(str(markup).replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))


def boxes(root: ET.Element) -> dict[str, tuple[float, float]]:
    return {g.get("data-table"): (float(g.find(SVG + "rect").get("x")), float(g.find(SVG + "rect").get("y")))
            for g in root.iter(SVG + "g") if "node" in (g.get("class") or "").split()}


def test_every_arrow_points_right_from_the_referencing_table():
    # a star: two facts reference the same dimensions; one reaches a dimension through another
    refs = {"order_items": ["orders", "products"], "orders": ["customers"], "payments": ["orders"],
            "customers": ["countries"]}
    root = graph(svg_reference_graph(refs, cataloged=list(refs) + ["products", "countries"]))
    at = boxes(root)
    for table, targets in refs.items():
        for target in targets:
            assert at[table][0] < at[target][0], (table, target)
    assert len([p for p in root.iter(SVG + "path") if p.get("class") == "edge"]) == 5
    # a box never overlaps another
    placed = sorted(at.values())
    for (x1, y1), (x2, y2) in zip(placed, placed[1:]):
        assert x1 != x2 or abs(y1 - y2) >= 24
    w = float(root.get("width"))
    assert all(0 <= x and x + BOX_W <= w for x, _ in at.values())


def test_a_cycle_a_self_reference_and_an_uncataloged_table_still_draw():
    refs = {"a": ["b"], "b": ["a"], "c": ["c", "missing"]}
    root = graph(svg_reference_graph(refs, cataloged=["a", "b", "c"], hrefs={"a": "a/r/catalog.html"}))
    assert set(boxes(root)) == {"a", "b", "c", "missing"}
    edges = [p.find(SVG + "title").text for p in root.iter(SVG + "path") if p.get("class") == "edge"]
    assert sorted(edges) == ["a references b", "b references a", "c references missing"]
    [missing] = [g for g in root.iter(SVG + "g") if g.get("data-table") == "missing"]
    assert "missing" in missing.get("class").split() and "not cataloged" in missing.find(SVG + "title").text
    [link] = list(root.iter(SVG + "a"))
    assert link.get("href") == "a/r/catalog.html"


def test_no_reference_no_graph_and_long_names_are_cut_with_the_whole_name_in_the_tooltip():
    assert svg_reference_graph({}) == "" and svg_reference_graph({"a": [], "b": ["b"]}) == ""
    long = "a_table_with_a_name_far_too_long_for_its_box"
    root = graph(svg_reference_graph({long: ["b"]}))
    [g] = [g for g in root.iter(SVG + "g") if g.get("data-table") == long]
    assert g.find(SVG + "text").text.endswith("…") and len(g.find(SVG + "text").text) <= 22
    assert g.find(SVG + "title").text.startswith(long)
