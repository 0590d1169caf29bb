"""The documentation stands alone: the README and every page of docs/ link only to files of the
repository (and to headings those files have) or to upstream projects' own sites; every page of
docs/ is reachable from its index; the README stays one screen."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md")), ROOT / "SECURITY.md", ROOT / "BENCHMARKS.md", ROOT / "deploy" / "README.md"]

# public sites of the projects this one is built on; any other address leaves the repository
UPSTREAM_SITES = ("dagster.io", "ibis-project.org", "duckdb.org", "www.postgresql.org", "mariadb.org",
                  "modelcontextprotocol.io", "docs.anthropic.com", "github.com/containers/bubblewrap")
README_MAX_LINES = 70   # the Quickstart is one screen; the rest lives in docs/

_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE_SPAN = re.compile(r"`[^`\n]*`")


def links(text: str) -> list[str]:
    """The targets of the markdown links and images of `text`, outside code blocks and spans."""
    prose = _CODE_SPAN.sub("", _FENCE.sub("", text))
    return _INLINE_LINK.findall(prose)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of `text`: lower case, punctuation dropped, spaces as '-'."""
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", _FENCE.sub("", text), re.M):
        words = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower())
        anchors.add(words.replace(" ", "-"))
    return anchors


def problems(page: Path, text: str | None = None) -> list[str]:
    """What is wrong with the links of `page` (whose text is `text`, else the file's)."""
    found = []
    for target in links(page.read_text() if text is None else text):
        where = f"{page.relative_to(ROOT)}: ({target})"
        parts = urlsplit(target)
        if parts.scheme in ("http", "https"):
            address = parts.netloc + parts.path
            if not any(address == site or address.startswith((site + "/", site + "."))
                       or parts.netloc.endswith("." + site) for site in UPSTREAM_SITES):
                found.append(f"{where} leaves the repository for a site that is no upstream project's")
            continue
        if parts.scheme:
            found.append(f"{where}: only relative links and upstream sites")
            continue
        path = (page.parent / unquote(parts.path)).resolve() if parts.path else page
        if not path.is_relative_to(ROOT):
            found.append(f"{where} points outside the repository")
        elif not path.is_file():
            found.append(f"{where} points at {path.relative_to(ROOT)}, which is not a file of the repository")
        elif parts.fragment and path.suffix == ".md" and parts.fragment not in heading_anchors(path.read_text()):
            found.append(f"{where}: {path.relative_to(ROOT)} has no heading #{parts.fragment}")
    return found


def test_the_link_check_sees_each_kind():
    page = DOCS / "index.md"
    sample = ("[ok](design.md) [gone](no-such-page.md) [out](../../elsewhere/notes.md) "
              "[anchor](design.md#the-store) [bad anchor](design.md#no-such-heading) "
              "[site](https://dagster.io/blog) [other](https://example.com/x) "
              "`[in code](missing.md)`\n```\n[in a block](missing.md)\n```\n")
    found = [line.split(": (", 1)[1] for line in problems(page, sample)]
    assert found == [
        "no-such-page.md) points at docs/no-such-page.md, which is not a file of the repository",
        "../../elsewhere/notes.md) points outside the repository",
        "design.md#no-such-heading): docs/design.md has no heading #no-such-heading",
        "https://example.com/x) leaves the repository for a site that is no upstream project's",
    ]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(page):
    assert page.is_file()
    assert problems(page) == []


def test_every_page_of_docs_is_linked_from_its_index_and_the_readme_links_the_index():
    index_links = {urlsplit(t).path for t in links((DOCS / "index.md").read_text())}
    pages = {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    assert len(pages) >= 8
    assert pages - index_links == set(), "add each page of docs/ to docs/index.md"
    assert "docs/index.md" in {urlsplit(t).path for t in links(README.read_text())}


def test_the_readme_is_one_screen():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines: keep it to the Quickstart ({README_MAX_LINES} at most) "
        "and move the rest to a page of docs/")
    assert any(line.startswith("## Quickstart") for line in lines)
