"""Every module the package imports by name comes from a distribution that pyproject.toml declares:
in the base dependencies, or in an extra a user installs (not the dev or bench extras, which only
the tests and benchmarks have).  The imports are read from the source as tests/test_architecture.py
reads them, each top-level name mapped to its distribution by importlib.metadata."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import packages_distributions

from tests.conftest import service_unavailable
from tests.test_architecture import MODULES, NAME, ROOT, imported_names

# the extras only the tests and benchmarks install
TOOLING_EXTRAS = {"dev", "bench"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> tuple[str, set[str]]:
    """A requirement's distribution and the extras it asks for: `a[b,c]>=1` -> ("a", {"b", "c"})."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?", requirement)
    assert match, requirement
    extras = {e.strip() for e in (match.group(2) or "").split(",") if e.strip()}
    return normalized(match.group(1)), extras


def declared(project: dict) -> set[str]:
    """The distributions a user can install with the package: the base and every user-facing extra,
    an extra that names the package's own extras (`cataloger-dagster[docker]`) included."""
    extras = project["optional-dependencies"]
    found: set[str] = set()
    for requirement in project["dependencies"] + [r for e, rs in extras.items() if e not in TOOLING_EXTRAS
                                                 for r in rs]:
        name, _ = requirement_name(requirement)
        found.add(name)
    return found - {normalized(project["name"])}


def imports_by_top_level() -> dict[str, set[str]]:
    """Top-level module name -> the package's modules that import it (the standard library left out)."""
    found: dict[str, set[str]] = {}
    for module in MODULES:
        for name in imported_names(module):
            top = name.split(".")[0]
            if top != NAME and top != "__future__" and top not in sys.stdlib_module_names:
                found.setdefault(top, set()).add(module)
    return found


def undeclared(imports: dict[str, set[str]], distributions: dict[str, list[str]], known: set[str]) -> list[str]:
    problems = []
    for top, modules in sorted(imports.items()):
        providers = {normalized(d) for d in distributions.get(top, [])}
        where = ", ".join(sorted(modules))
        if not providers:
            problems.append(f"{top} (imported by {where}) comes from no installed distribution")
        elif not providers & known:
            problems.append(f"{top} (imported by {where}) comes from {', '.join(sorted(providers))}, "
                            "which pyproject.toml does not declare")
    return problems


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_every_imported_module_comes_from_a_declared_distribution():
    imports = imports_by_top_level()
    assert {"dagster", "ibis", "upath", "anthropic", "mcp"} <= set(imports)   # the walk reads the package
    distributions = packages_distributions()
    installed = {top: modules for top, modules in imports.items() if top in distributions}
    assert undeclared(installed, distributions, declared(PROJECT)) == []
    # an extra this environment lacks (`make check`'s has no mysql): CI installs every extra
    absent = sorted(set(imports) - set(installed))
    if absent:
        service_unavailable(f"the distributions of {', '.join(absent)} (an extra), to check that they are declared")


def test_an_import_whose_distribution_is_not_declared_is_named():
    # `upath` is the import name of universal-pathlib: the check goes through the distribution
    imports = {"upath": {f"{NAME}.resources.io_manager"}, "yaml": {f"{NAME}.x"}, "nowhere": {f"{NAME}.y"}}
    distributions = {"upath": ["universal_pathlib"], "yaml": ["PyYAML"]}
    assert undeclared(imports, distributions, {"universal-pathlib"}) == [
        f"nowhere (imported by {NAME}.y) comes from no installed distribution",
        f"yaml (imported by {NAME}.x) comes from pyyaml, which pyproject.toml does not declare",
    ]


def test_the_tooling_extras_do_not_count_and_the_user_extras_do():
    names = declared(PROJECT)
    assert {"anthropic", "docker", "mcp", "dagster"} <= names
    assert "pytest" not in names and "ydata-profiling" not in names
    assert requirement_name("ibis-framework[duckdb,postgres]==12.0.0") == ("ibis-framework", {"duckdb", "postgres"})
