"""The Anthropic agent's prompts (cataloger_dagster/templates/prompts/) and the pieces every stage shares."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

import jinja2

PROMPTS = (
    "context.system",
    "understanding.system",
    "understanding.user",
    "issues.system",
    "issues.user",
    "investigation.system",
    "investigation.user",
    "followups.system",
    "followups.user",
)


@lru_cache(maxsize=1)
def prompt_environment() -> jinja2.Environment:
    """The pages' template loader, without HTML escaping: prompts are plain text."""
    from cataloger_dagster.core.render.pages import template_environment

    return jinja2.Environment(
        loader=template_environment().loader,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
    )


@lru_cache(maxsize=1)
def prompt_version() -> str:
    """A hash of the prompt templates: a change of wording invalidates cached understandings."""
    env = prompt_environment()
    loader = env.loader
    assert loader is not None  # prompt_environment gives its environment a loader
    digest = hashlib.sha256()
    for name in PROMPTS:
        source, _, _ = loader.get_source(env, f"prompts/{name}.j2")
        digest.update(name.encode() + b"\0" + source.encode() + b"\0")
    return digest.hexdigest()[:12]


def render(name: str, **values: Any) -> str:
    return prompt_environment().get_template(f"prompts/{name}.j2").render(**values).strip()


class StageFailed(RuntimeError):
    """A stage that must fall back to the heuristics."""


def to_json(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True, separators=(",", ":"))


def user_message(text: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text}]}
