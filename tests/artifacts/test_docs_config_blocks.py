"""Every ```toml block of the docs is read by the loader its page describes, so a renamed key fails here.

A block that is a whole flight (it has ``[platform]``, ``[reference]`` and a ``name``) is
loaded as it stands. A fragment (the tables a page is about) is laid over the shipped
configuration the page builds on, table by table (a fragment's table replaces the base's
table of that name), and the result is loaded by that page's loader: the flight loader,
``jaxrotor optimize``'s, ``jaxrotor sweep``'s or ``jaxrotor tune``'s. Every loader
refuses unknown keys and bad values with a ``ConfigError``, so the test fails when a
page drifts from the code. After loading, the values the block sets are checked on the
loaded objects.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from jaxrotor.io import config as flight_config
from jaxrotor.io import design_config
from jaxrotor.io import optimize_config
from jaxrotor.workflows.sweep import sweep_from_dict

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
CONFIGS = ROOT / "configs"
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", flags=re.S | re.M)


def toml_blocks() -> list[tuple[str, int, str]]:
    """``(page, first line, source)`` of every ```toml block under ``docs/``."""
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        for m in FENCE.finditer(text):
            if m.group(1) == "toml":
                out.append((str(page.relative_to(DOCS)), text[: m.start()].count("\n") + 2, m.group(2)))
    return out


BLOCKS = toml_blocks()

#: the shipped configuration each page's fragments extend, and the loader that reads the result
BASES = {
    "aero.md": ("faults_s550.toml", "flight"),
    "analysis.md": ("paper_reproduction.toml", "flight"),
    "batching.md": ("sweep_tilt.toml", "sweep"),
    "design.md": ("design_endurance_quad.toml", "design"),
    "energy.md": ("electric_hover.toml", "flight"),
    "optimization.md": ("optimize_tilt.toml", "optimize"),
    "robust.md": ("tune_gains_robust.toml", "tune"),
    "tilting.md": ("tilting_hex_fullpose.toml", "flight"),
}


#: pages whose fragments add keys to the base's tables (``[parts.battery]`` gains its OCV table): laid over the
#: base key by key (:func:`_deep_merge`)
SUBTABLE_PAGES = {"energy.md"}


def _deep_merge(base: dict, block: dict) -> dict:
    """``base`` with ``block`` laid over it, tables merged key by key."""
    out = dict(base)
    for k, v in block.items():
        out[k] = _deep_merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
    return out


def _load(data: dict, kind: str, where: Path):
    source = str(where / "block.toml")
    if kind == "flight":
        return flight_config.from_dict(data, source, where)
    if kind == "sweep":
        return sweep_from_dict(data, source, where)
    if kind == "design":
        return design_config.design_from_dict(data, source)
    return optimize_config.from_dict(data, source, where, kind=kind)


def test_the_docs_have_toml_blocks_and_every_page_has_a_loader():
    pages = {page for page, _, _ in BLOCKS}
    assert {"quickstart.md", "closed_loop.md", "analysis.md", "optimization.md"} <= pages
    whole = {page for page, _, src in BLOCKS if _is_whole(tomllib.loads(src))}
    assert pages <= set(BASES) | whole, "a page with a TOML fragment needs a base configuration in BASES"


def _is_whole(data: dict) -> bool:
    return {"platform", "reference"} <= set(data) and "name" in data


@pytest.mark.parametrize("page,line,src", BLOCKS, ids=[f"{p}:{n}" for p, n, _ in BLOCKS])
def test_toml_block_loads(page, line, src, tmp_path):
    block = tomllib.loads(src)  # a syntax error fails here, naming the block
    if _is_whole(block):
        if "compare" in block:  # the second flight it names, next to it
            (tmp_path / block["compare"]).write_text((CONFIGS / "paper_realistic.toml").read_text())
        conf = _load(block, "flight", tmp_path)
        assert conf.name == block["name"]
        flight = conf.flight
        if "flight" in block and "t1" in block["flight"]:
            assert flight.end_time == pytest.approx(block["flight"]["t1"])
        if "solver" in block and "dt" in block["solver"]:
            assert flight.integrator.dt == pytest.approx(block["solver"]["dt"])
            assert flight.integrator.adaptive == block["solver"].get("adaptive", True)
        motor = block.get("actuators", {}).get("motor", {})
        if "time_constant" in motor:
            assert flight.actuators.motor.time_constant == pytest.approx(motor["time_constant"])
        return
    base_name, kind = BASES[page]
    data = {**tomllib.loads((CONFIGS / base_name).read_text()), **block}
    if page in SUBTABLE_PAGES:  # [parts.battery] gains keys: laid over the base key by key
        data = _deep_merge(tomllib.loads((CONFIGS / base_name).read_text()), block)
    loaded = _load(data, kind, CONFIGS)  # files the base names (`compare = ...`) are next to it
    _check_values(page, block, loaded)


def _check_values(page: str, block: dict, loaded) -> None:
    """What a fragment sets is what the loader built."""
    if page == "analysis.md":
        t, p = block["platform"], loaded.platform
        assert p.n_rotors == t["n"] and p.mass == pytest.approx(t["mass"]) and p.c_f == pytest.approx(t["c_f"])
        assert abs(float(p.alpha)) == pytest.approx(t["alpha"]) and float(p.beta) == pytest.approx(t["beta"])
    elif page == "batching.md":
        axis = block["sweep"]["parameters"]["platform.alpha"]
        assert loaded.chunk <= block["sweep"]["chunk"] and loaded.metric == block["sweep"]["metric"]
        (a,) = loaded.spec.axes
        assert (a.lower, a.upper, a.points) == (axis["lower"], axis["upper"], axis["points"])
        assert loaded.spec.kind == "grid" and loaded.spec.size == axis["points"]
    elif page == "design.md":
        d, pr = block["design"], loaded.problem
        assert pr.objective == d["objective"] and pr.motor_names == tuple(d["motors"]) and pr.cells == tuple(d["cells"])
        assert pr.names == tuple(d["variables"]) and [c.measure for c in pr.constraints] == list(d["constraints"])
        assert [c.bound for c in pr.constraints] == [next(iter(t.values())) for t in d["constraints"].values()]
        assert loaded.settings.pareto_bounds == tuple(d["pareto"]["bounds"]) and len(pr.flights) == len(d["mission"])
    elif page == "optimization.md":
        assert loaded.options.iterations == block["optimize"]["iterations"]
        names = loaded.problem.parameters.names(loaded.problem.design)
        assert "platform.alpha" in names and any(n.startswith("controller.") for n in names)
    elif page == "robust.md":
        flight = loaded.problem.design.flight
        assert flight.control_rate == pytest.approx(block["control"]["rate"])
        assert flight.sensors is not None and flight.wind is not None
    elif page == "energy.md":
        b, esc, motor = loaded.platform.parts.battery, loaded.platform.parts.esc, loaded.flight.actuators.motor
        t = block["parts"]["battery"]
        assert list(map(float, b.ocv.soc)) == t["ocv_soc"] and list(map(float, b.ocv.volts)) == t["ocv_volts"]
        assert float(b.soc0) == t["soc0"] and float(esc.efficiency) == block["parts"]["esc"]["efficiency"]
        assert float(motor.speed_bandwidth) == block["actuators"]["motor"]["speed_bandwidth"]
    elif page == "tilting.md":
        assert type(loaded.flight.allocator).__name__ == "ExtendedVariable"
    elif page == "aero.md":
        a, t = loaded.flight.aero, block["aero"]
        assert list(map(float, a.parasitic_drag)) == t["parasitic_drag"] and float(a.rotor_drag) == t["rotor_drag"]
        assert float(a.induced_inflow) == t["induced_inflow"] and float(a.translational_lift) == t["translational_lift"]
        assert a.ground_effect is t["ground_effect"] and float(a.floor_height) == t["floor_height"]
