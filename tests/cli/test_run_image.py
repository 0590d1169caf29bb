"""run_image.py: the run workers' image is labelled with what its code is made of.

The build itself (minutes, PyPI) runs in CI's .ci/run_image.sh; the image it makes is used by
tests/e2e/test_docker_run_launcher.py, which needs it current for these very sources.
"""

import shutil
from importlib import metadata

from cataloger_dagster.cli import run_image


def test_the_pins_are_this_environments_versions_and_never_the_package_itself():
    pins = run_image.constraints()
    assert f"dagster=={metadata.version('dagster')}" in pins
    assert f"dagster-docker=={metadata.version('dagster-docker')}" in pins
    assert not [p for p in pins if p.startswith(f"{run_image.PACKAGE}==")]
    names = [p.split("==")[0] for p in pins]
    assert names == sorted(set(names))  # one pin a name, in a stable order (the source hash hashes them)


def _copy_checkout(dest):
    root = run_image.checkout_root()
    for top in (*run_image._SOURCES, "deploy"):
        src = root / top
        if src.is_dir():
            shutil.copytree(src, dest / top, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / top)
    return dest


def test_the_source_hash_follows_the_code_the_recipe_and_nothing_else(tmp_path):
    copy = _copy_checkout(tmp_path / "checkout")
    original = run_image.source_hash()
    assert run_image.source_hash(copy) == original
    cache = copy / "cataloger_dagster" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "x.cpython-311.pyc").write_bytes(b"compiled")
    assert run_image.source_hash(copy) == original  # bytecode is not source
    page = next(p for p in (copy / "cataloger_dagster" / "templates").rglob("*") if p.is_file())
    page.write_text(page.read_text() + "<!-- changed -->")
    changed = run_image.source_hash(copy)
    assert changed != original
    dockerfile = copy / "deploy" / "docker" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "\n# changed\n")
    assert run_image.source_hash(copy) not in (original, changed)
