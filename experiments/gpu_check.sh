#!/usr/bin/env bash
# GPU check: install jaxrotor from this repository, then run on the default accelerator
#   1. the batched throughput benchmark in float32, batch 1024 ... 1048576 (experiments/benchmark_batch.py: the
#      continuous loop, its plain-RK4 floor, and the discrete-rate loop batched by map_batch; the target
#      >= 2e9 hexarotor member-steps/s),
#   2. the MJX batch (the MJX part of experiments/benchmark_physics.py: --quick --mjx --batch N),
#   3. the tilt sweep (configs/sweep_tilt.toml, 400 points),
# and print one table of the figures (also written as OUT/gpu_check.json). Any failing step fails the script.
#
#   experiments/gpu_check.sh [OUT]          # on the GPU machine (default OUT: jaxrotor-out/gpu_check)
#   experiments/gpu_check.sh --tiny [OUT]   # the same steps at tiny sizes on whatever JAX runs on (CPU test)
#
# Environment: PYTHON (default python3), SKIP_INSTALL=1 to use the installed package as it is (or PYTHONPATH=<repo>
# on a machine that cannot install: it needs jax with its GPU plugin, equinox, diffrax, optax, jaxtyping, click,
# tqdm, matplotlib, scipy), SKIP_MJX=1 to leave out step 2 (it needs mujoco and mujoco-mjx), MJX_BATCH (MJX
# batch size, default 4096), MJX=1 to run the MJX step in --tiny mode too (skipped there by default: compiling the
# MJX flight takes minutes on a CPU).
set -euo pipefail
TINY=0
if [[ "${1:-}" == "--tiny" ]]; then TINY=1; shift; fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-jaxrotor-out/gpu_check}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"
rm -f "$OUT/benchmark_physics/benchmark_physics.json"

if [[ -z "${SKIP_INSTALL:-}" ]]; then
  echo "== installing jaxrotor from $ROOT"
  if [[ "$TINY" == 0 ]]; then "$PY" -m pip install -q "jax[cuda12]"; fi
  "$PY" -m pip install -q -e "$ROOT"
fi
"$PY" -c "import jax; print('jax', jax.__version__, 'on', jax.default_backend(), jax.devices())"

echo "== 1. batched throughput, float32"
if [[ "$TINY" == 1 ]]; then
  "$PY" "$ROOT/experiments/benchmark_batch.py" --dtypes float32 --sizes 4 --t1 0.05 --repeats 1 \
    --diffeqsolve-size 0 --discrete --out "$OUT/benchmark_batch"
else
  "$PY" "$ROOT/experiments/benchmark_batch.py" --device gpu --dtypes float32 --t1 2 --repeats 3 \
    --diffeqsolve-size 1024 --discrete --out "$OUT/benchmark_batch"
fi

echo "== 2. MJX batch"
if [[ -n "${SKIP_MJX:-}" ]]; then
  echo "skipped (SKIP_MJX=1)"
elif [[ "$TINY" == 1 && -z "${MJX:-}" ]]; then
  echo "skipped in --tiny mode (set MJX=1 to run it: compiling the MJX flight takes minutes on a CPU)"
else
  BATCH="${MJX_BATCH:-4096}"
  if [[ "$TINY" == 1 ]]; then BATCH=2; fi
  "$PY" "$ROOT/experiments/benchmark_physics.py" --quick --mjx --batch "$BATCH" --out "$OUT/benchmark_physics"
fi

echo "== 3. tilt sweep, float32"
CFG="$ROOT/configs/sweep_tilt.toml"
if [[ "$TINY" == 1 ]]; then
  sed -e 's/^points = 20/points = 2/' -e 's/^chunk = 100/chunk = 4/' "$CFG" > "$OUT/sweep_tiny.toml"
  CFG="$OUT/sweep_tiny.toml"
  T1=(--t1 0.05)
else
  T1=()
fi
rm -rf "$OUT/sweep"
START=$(date +%s.%N)
"$PY" -c "from jaxrotor.cli import main; main()" sweep "$CFG" --out "$OUT/sweep" --float32 --no-progress \
  ${T1[@]+"${T1[@]}"} | tee "$OUT/sweep.log"
awk -v a="$START" -v b="$(date +%s.%N)" 'BEGIN { printf "{\"wall_s\": %.3f}\n", b - a }' > "$OUT/sweep_time.json"

echo "== table"
"$PY" - "$OUT" <<'PYEOF'
import csv, json, sys
from pathlib import Path
out = Path(sys.argv[1])
b = json.loads((out / "benchmark_batch" / "benchmark_batch.json").read_text())
rows = [{"what": "benchmark " + r["variant"], "batch": r["batch"], "steps_per_s": r["steps_per_s"],
         "wall_s": r["wall_s"], "memory_per_member_bytes": r.get("memory_per_member_bytes")} for r in b["rows"]]
phys = out / "benchmark_physics" / "benchmark_physics.json"
mjx = json.loads(phys.read_text()).get("mjx") if phys.exists() else None
if mjx:
    rows.append({"what": "MJX batch", "batch": mjx["batch"], "steps_per_s": mjx["steps_per_s"],
                 "wall_s": mjx["wall_batch_s"], "memory_per_member_bytes": None})
points = list(csv.DictReader(open(out / "sweep" / "sweep.csv")))
t = json.loads((out / "sweep_time.json").read_text())
rows.append({"what": "sweep (incl. compile)", "batch": len(points), "steps_per_s": None, "wall_s": t["wall_s"],
             "memory_per_member_bytes": None, "diverged": sum(p["diverged"] == "True" for p in points)})
print(f"device: {b['device']} ({b['device_kind']}), flight {b['horizon_s']} s at dt {b['dt']} s, float32")
print(f"{'what':<26} {'batch':>9} {'steps/s':>12} {'wall [ms]':>10} {'mem/member':>12}")
for r in rows:
    sps = format(r["steps_per_s"], ".4g") if r["steps_per_s"] else ""
    mem = r["memory_per_member_bytes"]
    print(f"{r['what']:<26} {r['batch']:>9} {sps:>12} {r['wall_s'] * 1e3:>10.2f} "
          f"{(format(mem, '.0f') + ' B') if mem else 'n/a':>12}")
for name, t in b.get("targets", {}).items():
    print(f"target {name}: measured {t['measured']:.4g} (target {t['target']:g}): {'MET' if t['met'] else 'NOT MET'}")
passed = bool(b["passed"]) and (mjx is None or bool(json.loads(phys.read_text())["passed"]))
print("checks passed:", passed)
summary = {"device": b["device"], "device_kind": b["device_kind"], "horizon_s": b["horizon_s"], "dt": b["dt"],
           "mjx": mjx is not None, "rows": rows, "passed": passed}
(out / "gpu_check.json").write_text(json.dumps(summary, indent=1))
sys.exit(0 if passed else 1)
PYEOF
