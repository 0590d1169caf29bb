"""What the deployment files under deploy/ are checked for: YAML read, quantities, secrets."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

# an environment variable whose name says it holds a secret may only come from a Secret
SECRET_NAME = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|CREDENTIAL|PRIVATE", re.I)
# a URL with a password in it (postgres://user:pw@host)
URL_WITH_PASSWORD = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.I)
SECRET_KEYS = {"password", "postgresqlPassword", "secretKey", "awsSecretAccessKey", "token"}


def yaml_documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (dotted path, value) of a YAML tree, containers included."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}" if path else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, f"{path}[{i}]")


def secret_literals(doc: Any) -> list[str]:
    """Where `doc` writes a secret's value instead of referring to a Secret by name."""
    found = []
    for path, value in walk(doc):
        key = path.rsplit(".", 1)[-1]
        if isinstance(value, str) and URL_WITH_PASSWORD.search(value):
            found.append(f"{path}: a URL with a password")
        if key in SECRET_KEYS and value not in (None, ""):
            found.append(f"{path}: a secret's value")
        if key == "env" and isinstance(value, dict):     # the chart's name: value form
            found += [f"{path}.{name}: set literally" for name, v in value.items()
                      if SECRET_NAME.search(name) and v not in (None, "")]
        if key == "env" and isinstance(value, list):     # Kubernetes' EnvVar form
            found += [f"{path}.{var.get('name')}: set literally" for var in value
                      if isinstance(var, dict) and SECRET_NAME.search(str(var.get("name", "")))
                      and "value" in var]
    return found


_UNITS = {"": 1, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
          "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}


def quantity(value: str | int | float) -> float:
    """A Kubernetes quantity ("250m", "1", "512Mi") as a number (cores, bytes)."""
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", str(value))
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"not a Kubernetes quantity: {value!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]
