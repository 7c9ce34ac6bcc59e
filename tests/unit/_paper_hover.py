"""The paper hexarotor's use-case config turned into a 3 s hover at 1 m on a fixed step: the flight the fault
tests fly (tests/unit/optimize/test_fault_objective.py; tests/integration/test_fault_flights.py,
test_fault_objective_flights.py, test_fault_stats_flights.py)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def paper_hover_toml(dt: float = 0.002) -> str:
    """TOML text: ``configs/paper_reproduction.toml`` without its comparison, its reference a 3 s hover at
    (0, 0, 1) m, Tsit5 on the fixed step ``dt`` [s]."""
    base = (ROOT / "configs" / "paper_reproduction.toml").read_text().replace('compare = "paper_realistic.toml"', "")
    return base[:base.index("[reference]")] + f"""[reference]
kind = "hover"
position = [0.0, 0.0, 1.0]
duration = 3.0

[solver]
adaptive = false
dt = {dt}
"""
