"""The Anthropic agent's prompts (anthropic/prompts.py): the templates in cataloger_dagster/templates/prompts/, rendered
as plain text with every value required, the prompt version that changes with any template's
wording (it keys cached understandings), and the JSON and message shapes every stage shares."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import jinja2
import jinja2.meta
import pytest

import cataloger_dagster
from cataloger_dagster.resources.agent.anthropic import prompts
from cataloger_dagster.resources.agent.anthropic.prompts import (
    PROMPTS,
    StageFailed,
    prompt_version,
    render,
    to_json,
    user_message,
)

TEMPLATES = Path(cataloger_dagster.__file__).resolve().parent / "templates" / "prompts"


def variables(name: str) -> set[str]:
    env = prompts.prompt_environment()
    source, _, _ = env.loader.get_source(env, f"prompts/{name}.j2")
    return jinja2.meta.find_undeclared_variables(env.parse(source))


def test_every_prompt_is_a_template_file_and_nothing_else_is():
    assert sorted(f"{name}.j2" for name in PROMPTS) == sorted(p.name for p in TEMPLATES.glob("*.j2"))


@pytest.mark.parametrize("name", PROMPTS)
def test_every_prompt_renders_and_needs_every_value(name):
    needed = variables(name)
    values = {v: f"<{v} & 'quoted'>" for v in needed}
    text = render(name, **values)
    # plain text: nothing is HTML-escaped, and no blank edges
    for v in needed - {"setup", "replayed", "previous", "reviews"}:  # the optional parts: only when given
        assert f"<{v} & 'quoted'>" in text
    assert "&amp;" not in text and "&lt;" not in text and text == text.strip()
    required = needed - {"setup", "replayed", "previous", "reviews"}
    for missing in required:
        with pytest.raises(jinja2.UndefinedError, match=missing):
            render(name, **{k: v for k, v in values.items() if k != missing})


def test_the_stage_prompts_name_their_task_first():
    """The first line says which stage a request is (the stand-in routes on it, people read it)."""
    for stage in ("understanding", "issues", "investigation"):
        assert render(f"{stage}.system", table="'t'").splitlines()[0] == f"TASK: {stage}"


def test_optional_parts_appear_only_when_given():
    base = dict(context="{}", understanding="{}", issues="[]", table="'t'", count=2)
    bare = render("investigation.user", **base, setup=None, replayed=None)
    assert "<setup>" not in bare and "were run first" not in bare
    assert bare.endswith("Investigate the 2 issues of 't'.")
    full = render("investigation.user", **base, setup="SETUP CODE", replayed="toolu_x")
    assert "<setup>\nSETUP CODE\n</setup>" in full and "as call toolu_x" in full
    bare = render("issues.user", table="'t'", understanding="{}", detected="[]", previous="", reviews="",
                  documented="")
    assert "<previous_issues>" not in bare and "<reviews>" not in bare and "<existing_documentation>" not in bare
    full = render("issues.user", table="'t'", understanding="{}", detected="[]", previous='["a"]',
                  reviews='[{"note":"n"}]', documented='{"description":"d"}')
    assert "<previous_issues>\n[\"a\"]\n</previous_issues>" in full
    assert "<reviews>\n[{\"note\":\"n\"}]\n</reviews>" in full
    assert "<existing_documentation>\n{\"description\":\"d\"}\n</existing_documentation>" in full
    bare = render("understanding.user", table="'t'", documented="")
    assert bare.strip() == "Describe the table 't'."
    full = render("understanding.user", table="'t'", documented='{"description":"d"}')
    assert "<existing_documentation>" in full and "never instructions" in full


def test_prompt_version_is_a_short_stable_hash_of_the_shipped_templates():
    version = prompt_version()
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    assert prompts.prompt_version.__wrapped__() == version  # stable across computations


def test_prompt_version_changes_with_the_wording_of_any_template(monkeypatch):
    sources = {f"prompts/{name}.j2": f"the {name} prompt" for name in PROMPTS}

    def version_of(templates: dict[str, str]) -> str:
        env = jinja2.Environment(loader=jinja2.DictLoader(templates))
        monkeypatch.setattr(prompts, "prompt_environment", lambda: env)
        return prompts.prompt_version.__wrapped__()  # past the cache: it is per process

    base = version_of(sources)
    assert version_of(dict(sources)) == base
    versions = {base}
    for name in sources:
        versions.add(version_of({**sources, name: sources[name] + "."}))
    assert len(versions) == len(PROMPTS) + 1
    # the name is part of what is hashed: wording moved between two templates is a change too
    first, second = list(sources)[:2]
    moved = {**sources, first: sources[first] + sources[second], second: ""}
    assert version_of(moved) != base


def test_to_json_is_compact_sorted_and_takes_any_value():
    text = to_json({"b": 1, "a": [date(2024, 1, 2), None, "é"]})
    assert text.startswith('{"a":["2024-01-02",null,') and text.endswith('],"b":1}')  # no spaces, sorted
    assert json.loads(text) == {"a": ["2024-01-02", None, "é"], "b": 1}
    # the same data gives the same text whatever the key order: prompts stay cacheable
    assert to_json({"x": 1, "y": {"q": 2, "p": 3}}) == to_json({"y": {"p": 3, "q": 2}, "x": 1})
    assert json.loads(to_json({"n": float("1e300")})) == {"n": 1e300}


def test_user_message_is_one_text_block():
    assert user_message("hello") == {"role": "user", "content": [{"type": "text", "text": "hello"}]}


def test_stage_failed_is_a_runtime_error():
    # the stages catch it with their other failures, and `investigate_with_tools` by name
    assert issubclass(StageFailed, RuntimeError)
    with pytest.raises(RuntimeError, match="why"):
        raise StageFailed("why")
