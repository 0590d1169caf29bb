"""No function takes more than six parameters (self and cls aside): past six, a function's
inputs want to be one object that says what they are together.

Read from the source with `ast`: every def and lambda, at any depth, counting positional,
keyword-only, *args and **kwargs parameters.  The profiler (core/profile) has no exception.
Elsewhere the functions that took more before the rule are listed in LONGER, each with its
count: the list may only shrink (an entry that no longer exceeds six, or whose count
changed, must be taken out or corrected), and nothing new may join it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import cataloger_dagster

PACKAGE = Path(cataloger_dagster.__file__).resolve().parent
MOST = 6

# "path:function" -> parameters, for the functions that took more than MOST before the rule.
# Dagster assets take their resources as parameters and click commands their options.
LONGER = {
    "assets/catalog_page.py:catalog_page": 7,
    "assets/investigations.py:investigations": 10,  # the sandbox pool is a resource it names
    "assets/investigations.py:_investigations": 9,
    "assets/investigations.py:_metadata": 8,
    "assets/investigations.py:_investigate": 10,
    "assets/quality_issues.py:quality_issues": 7,
    "assets/recent_summary.py:recent_summary": 7,
    "cli/app.py:run": 12,
    "cli/app.py:mcp": 9,
    "cli/review.py:review": 10,
    "cli/scripts.py:show_cmd": 8,
    "cli/scripts.py:diff_cmd": 9,
    "core/cataloged.py:cataloged_table": 10,
    "core/fixes/followups.py:_scripted": 9,
    "core/fixes/followups.py:_set_null": 8,
    "core/history/anomalies.py:_issue": 9,
    "core/investigate/checks/rule_violations.py:check_rule_violations": 8,
    "core/investigate/learning.py:choose_previous_script": 7,
    "core/investigate/outcome.py:script_metrics": 8,
    "core/issues/detectors/__init__.py:detect_issues": 8,
    "core/issues/detectors/magnitudes.py:_judge": 9,
    "core/issues/detectors/ranges.py:_outlier_issue": 11,
    "core/issues/rule_candidates.py:_within_quantiles": 7,
    "core/render/pages.py:render_catalog_page": 11,
    "core/reviews/record.py:record_review": 8,
    "mcp/capsules.py:record": 9,
    "mcp/sql_run.py:__init__": 7,
    "resources/agent/anthropic/agent.py:call": 7,
    "resources/agent/anthropic/tool_loop.py:investigate_with_tools": 7,
    "resources/sandbox/docker.py:start_docker": 11,
    "resources/sandbox/local.py:start_local": 10,
}


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    a = node.args
    names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]
    names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
    return [n for n in names if n not in ("self", "cls")]


def longer_functions(root: Path) -> dict[str, int]:
    """"path:function" -> parameters, for every function under `root` taking more than MOST."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                count = len(parameters(node))
                if count > MOST:
                    name = getattr(node, "name", f"lambda at line {node.lineno}")
                    found[f"{path.relative_to(PACKAGE).as_posix()}:{name}"] = count
    return found


def test_the_count_reads_every_kind_of_parameter():
    tree = ast.parse("def f(self, a, /, b, *c, d, e=1, **f): pass\ng = lambda a, b, c, d, e, f, h: a")
    counts = [len(parameters(node)) for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.Lambda))]
    assert sorted(counts) == [6, 7]


def test_no_function_of_the_profiler_takes_more_than_six_parameters():
    assert longer_functions(PACKAGE / "core" / "profile") == {}


def test_no_function_of_the_package_takes_more_than_six_parameters_but_the_listed_ones():
    found = longer_functions(PACKAGE)
    new = {name: n for name, n in found.items() if LONGER.get(name) != n}
    gone = sorted(name for name in LONGER if name not in found)
    assert not new, f"functions of more than {MOST} parameters (make their inputs one object): {new}"
    assert not gone, f"no longer more than {MOST} parameters, take them out of LONGER: {gone}"
