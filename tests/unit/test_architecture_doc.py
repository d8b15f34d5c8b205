"""docs/architecture.md is a map a maintainer works from: these tests keep it equal to the code, so a step,
a package, a table, a fault point or a thread added or renamed without the page fails here."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import vaultops
from vaultops.engine.driver import STEPS, Pass

ROOT = Path(vaultops.__file__).parent
DOC = (ROOT.parent / "docs" / "architecture.md").read_text()


def section(title: str) -> str:
    start = DOC.index(f"\n{title}\n")
    end = DOC.find("\n#", start + len(title) + 2)  # the next heading, of any level
    return DOC[start : end if end != -1 else len(DOC)]


def table_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[2:]]


def sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in ROOT.rglob("*.py")}


def test_the_step_table_is_the_drivers_steps_in_order() -> None:
    rows = table_rows(section("### The steps"))
    assert [f"`Pass.{m}`" for m in STEPS] == [row[1] for row in rows]
    assert all(callable(getattr(Pass, m, None)) for m in STEPS)
    for _, _, modules, _ in rows:  # every module a step names exists
        for module in re.findall(r"`(engine/[a-z_]+\.py)", modules):
            assert (ROOT / module).is_file(), module


def test_every_module_of_the_engine_is_on_the_page() -> None:
    named = set(re.findall(r"engine/([a-z_]+)\.py", DOC))
    modules = {p.stem for p in (ROOT / "engine").glob("*.py") if p.stem != "__init__"}
    assert modules - named == set()
    assert named - modules == set()


def test_the_layers_are_the_import_contracts_layers() -> None:
    block = section("## Layers").split("```")[1]
    drawn = [
        set(layer.split(" | "))
        for line in block.strip().splitlines()
        for layer in line.split("  ")[0].strip().split(" → ")  # "lines → model": two layers on one line
    ]
    pyproject = tomllib.loads((ROOT.parent / "pyproject.toml").read_text())
    contracts = pyproject["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c["type"] == "layers")
    assert drawn == [{m.removeprefix("vaultops.") for m in layer.split(" | ")} for layer in layers]
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - set().union(*drawn) == set()


def test_every_table_of_state_db_has_its_owner_on_the_page() -> None:
    schema = (ROOT / "store" / "state.py").read_text()
    tables = set(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", schema))
    rows = table_rows(section("## state.db: who owns each table"))
    assert {row[0] for row in rows} == tables
    code = sources()
    for table, owner, _ in rows:
        owner_file = owner.strip("`").split("`")[0]
        assert owner_file.removeprefix("vaultops/") in code, owner
        assert re.search(rf"\b{table}\b", code[owner_file]), (table, owner_file)


def test_the_fault_points_are_the_codes() -> None:
    code = "\n".join(sources().values())
    points = set(re.findall(r'faults\.reach\("([\w.]+)"\)', code))
    stages = set(re.findall(r'swap\([^)]*stage="?(\w+)"?\)', code)) | {"claim", "result", "notice"}
    points |= {f"{s}.{when}_push" for s in stages for when in ("before", "after")}
    switches = set(re.findall(r'faults\.enabled\("([\w.]+)"\)', code))
    page = section("## Fault points")
    listed = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", page))
    assert listed == points | switches


def test_every_named_thread_is_on_the_page() -> None:
    names = set(re.findall(r'name="(vaultops-[\w-]+)"', "\n".join(sources().values())))
    assert names
    page = section("## Threads and processes")
    assert {n for n in names if f"`{n}`" not in page} == set()
