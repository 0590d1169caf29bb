"""`cataloger run --json` against its documented schema (docs/run-json.schema.json)."""

from __future__ import annotations

import json
from pathlib import Path

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "run-json.schema.json"


def schema() -> dict:
    return json.loads(SCHEMA.read_text())


def _resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def undocumented(value, node: dict, root: dict, path: str = "$") -> list[str]:
    """The keys of ``value`` the schema does not name: the schema allows more (later versions may
    add fields), the documentation must not lag behind the output."""
    node = _resolve(node, root)
    if isinstance(value, dict):
        if "properties" not in node:
            # a free-form mapping (the evidence's numbers) or one branch of a oneOf
            branches = [_resolve(b, root) for b in node.get("oneOf", [])]
            node = next((b for b in branches if "properties" in b), node)
        if "properties" not in node:
            return []
        found = [f"{path}.{k}" for k in value if k not in node["properties"]]
        return found + [p for k, v in value.items() if k in node["properties"]
                        for p in undocumented(v, node["properties"][k], root, f"{path}.{k}")]
    if isinstance(value, list) and "items" in node:
        return [p for n, v in enumerate(value) for p in undocumented(v, node["items"], root, f"{path}[{n}]")]
    return []


def assert_valid_run_json(report: dict) -> None:
    """``report`` (parsed) holds to the schema, and names no field the schema leaves out."""
    import jsonschema

    root = schema()
    jsonschema.Draft202012Validator.check_schema(root)
    errors = sorted(jsonschema.Draft202012Validator(root).iter_errors(report), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:10])
    missing = undocumented(report, root, root)
    assert not missing, f"fields docs/run-json.schema.json does not describe: {missing[:10]}"
