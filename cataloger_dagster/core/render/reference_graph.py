"""The references between a database's tables, drawn as an inline SVG computed here (no script,
no library): the index's "what references what".

Tables stand in columns by depth, so that every arrow points right, from the table whose column
holds the reference to the table it references: a table that references nothing (a dimension,
a lookup) stands in the rightmost column, a table referencing only those one column left of it,
and so on.  A cycle is cut where the walk meets it.  Each table is a box with its name (cut to
fit, whole in its tooltip) linking to its page when it has one; a referenced table that is not
cataloged is drawn dashed.  Names are data: every one is escaped text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup

from cataloger_dagster.core.render.charts import truncate

BOX_W, BOX_H = 150, 24  # a table's box
GAP_X, GAP_Y = 60, 12  # between the columns, between the boxes of one column
MARGIN = 8
NAME_CHARS = 22  # a name's characters that fit its box at 11px
MAX_TABLES = 60  # beyond, the tables with the most references are drawn and the drawing says so


def _depths(edges: Mapping[str, Sequence[str]], nodes: list[str]) -> dict[str, int]:
    """A table's depth: 0 when it references nothing drawn, else one more than the deepest table it
    references; a reference back into the walk (a cycle) counts as none."""
    depth: dict[str, int] = {}
    walking: set[str] = set()

    def walk(node: str) -> int:
        if node in depth:
            return depth[node]
        walking.add(node)
        found = [walk(t) for t in edges.get(node, ()) if t in nodes_set and t not in walking and t != node]
        walking.discard(node)
        depth[node] = 1 + max(found) if found else 0
        return depth[node]

    nodes_set = set(nodes)
    for node in nodes:
        walk(node)
    return depth


def _edge_path(source: tuple[float, float], target: tuple[float, float]) -> str:
    """A curve from the referencing table's box to the referenced one's: right side to left side
    when the target stands further right, else (a cycle's way back) top or bottom to the other."""
    (x1, y1), (x2, y2) = source, target
    if x2 > x1:
        start, end = (x1 + BOX_W, y1 + BOX_H / 2), (x2, y2 + BOX_H / 2)
        mid = (start[0] + end[0]) / 2
        controls = ((mid, start[1]), (mid, end[1]))
    else:
        down = y2 > y1
        start, end = (x1 + BOX_W / 2, y1 + (BOX_H if down else 0)), (x2 + BOX_W / 2, y2 + (0 if down else BOX_H))
        bend = max(abs(end[1] - start[1]) / 2, 20)
        controls = ((start[0] + bend, start[1]), (end[0] + bend, end[1]))
    points = [start, *controls, end]
    return "M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}".format(*(v for p in points for v in p))


def svg_reference_graph(
    references: Mapping[str, Sequence[str]],
    *,
    cataloged: Sequence[str] = (),
    hrefs: Mapping[str, str] | None = None,
    title: str = "references between tables",
) -> Markup:
    """``references``: table -> the tables its columns reference.  ``cataloged``: the tables the
    catalog holds (the others are drawn dashed), ``hrefs``: a table's page, relative to the page
    the graph is drawn in.  Empty Markup when no table references another."""
    hrefs = hrefs or {}
    edges = {table: sorted({t for t in targets if t != table}) for table, targets in references.items() if targets}
    edges = {t: targets for t, targets in edges.items() if targets}
    if not edges:
        return Markup("")
    degree: dict[str, int] = {}
    for table, targets in edges.items():
        degree[table] = degree.get(table, 0) + len(targets)
        for target in targets:
            degree[target] = degree.get(target, 0) + 1
    nodes = sorted(degree, key=lambda t: (-degree[t], t))
    left_out = max(len(nodes) - MAX_TABLES, 0)
    nodes = sorted(nodes[:MAX_TABLES])
    depth = _depths(edges, nodes)
    deepest = max(depth.values())
    columns: dict[int, list[str]] = {}
    for node in nodes:
        columns.setdefault(depth[node], []).append(node)
    tallest = max(len(c) for c in columns.values())
    width = 2 * MARGIN + (deepest + 1) * BOX_W + deepest * GAP_X
    height = 2 * MARGIN + tallest * BOX_H + (tallest - 1) * GAP_Y + (16 if left_out else 0)
    place: dict[str, tuple[float, float]] = {}
    for d, members in columns.items():
        x = MARGIN + (deepest - d) * (BOX_W + GAP_X)  # the deepest on the left: arrows point right
        offset = (tallest - len(members)) * (BOX_H + GAP_Y) / 2  # a short column centred
        for i, node in enumerate(members):
            place[node] = (x, MARGIN + offset + i * (BOX_H + GAP_Y))
    known = set(cataloged)
    parts = [
        Markup(
            '<svg class="chart reference-graph" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            'role="img" aria-label="{t}">'
        ).format(w=width, h=height, t=title),
        Markup("<title>{}</title>").format(title),
        Markup(
            '<defs><marker id="ref-arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z" class="arrow"/></marker></defs>'
        ),
    ]
    for table in nodes:
        for target in edges.get(table, ()):
            if target not in place:
                continue
            path = _edge_path(place[table], place[target])
            parts.append(
                Markup(
                    '<path class="edge" d="{d}" marker-end="url(#ref-arrow)"><title>{a} references {b}</title></path>'
                ).format(d=path, a=table, b=target)
            )
    for node in nodes:
        bx, by = place[node]
        outgoing, incoming = len(edges.get(node, ())), sum(1 for t in nodes if node in edges.get(t, ()))
        tip = f"{node}: references {outgoing}, referenced by {incoming}" + (
            "" if node in known or not known else " (not cataloged)"
        )
        box = Markup(
            '<g class="node{cls}" data-table="{name}"><title>{tip}</title>'
            '<rect x="{x:.1f}" y="{y:.1f}" width="{w}" height="{h}" rx="5"/>'
            '<text class="label" x="{tx:.1f}" y="{ty:.1f}" text-anchor="middle">{shown}</text></g>'
        ).format(
            cls="" if node in known or not known else " missing",
            name=node,
            tip=tip,
            x=bx,
            y=by,
            w=BOX_W,
            h=BOX_H,
            tx=bx + BOX_W / 2,
            ty=by + BOX_H / 2 + 4,
            shown=truncate(node, NAME_CHARS),
        )
        href = hrefs.get(node)
        parts.append(Markup('<a href="{}">{}</a>').format(href, box) if href else box)
    if left_out:
        parts.append(
            Markup('<text class="label" x="{x}" y="{y}">{n} more tables with fewer references not drawn</text>').format(
                x=MARGIN, y=height - 4, n=left_out
            )
        )
    parts.append(Markup("</svg>"))
    return Markup("").join(parts)
