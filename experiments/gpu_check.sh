#!/usr/bin/env bash
# GPU check: install jaxrotor from this repository, then run on the default accelerator
#   1. the batched throughput benchmark in float32, batch 1024 ... 1048576 (experiments/benchmark_batch.py),
#   2. the MJX batch, if the physics layer (jaxrotor.physics) is present,
#   3. the tilt sweep (configs/sweep_tilt.toml, 400 points),
# and print one table of the figures.
#
#   experiments/gpu_check.sh [OUT]          # on the GPU machine (default OUT: jaxrotor-out/gpu_check)
#   experiments/gpu_check.sh --tiny [OUT]   # the same steps at tiny sizes on whatever JAX runs on (CPU test)
#
# Environment: PYTHON (default python3), SKIP_INSTALL=1 to use the installed package as it is.
set -euo pipefail
TINY=0
if [[ "${1:-}" == "--tiny" ]]; then TINY=1; shift; fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-jaxrotor-out/gpu_check}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"

if [[ -z "${SKIP_INSTALL:-}" ]]; then
  echo "== installing jaxrotor from $ROOT"
  if [[ "$TINY" == 0 ]]; then "$PY" -m pip install -q "jax[cuda12]"; fi
  "$PY" -m pip install -q -e "$ROOT"
fi
"$PY" -c "import jax; print('jax', jax.__version__, 'on', jax.default_backend(), jax.devices())"

echo "== 1. batched throughput, float32"
if [[ "$TINY" == 1 ]]; then
  "$PY" "$ROOT/experiments/benchmark_batch.py" --dtypes float32 --sizes 4 16 --t1 0.1 --repeats 1 \
    --diffeqsolve-size 0 --out "$OUT/benchmark_batch"
else
  "$PY" "$ROOT/experiments/benchmark_batch.py" --device gpu --dtypes float32 --t1 2 --repeats 3 \
    --diffeqsolve-size 1024 --out "$OUT/benchmark_batch"
fi

echo "== 2. MJX batch"
if "$PY" -c "import jaxrotor.physics" 2>/dev/null; then
  if [[ -f "$ROOT/experiments/benchmark_mjx.py" ]]; then
    "$PY" "$ROOT/experiments/benchmark_mjx.py" $([[ "$TINY" == 1 ]] && echo --quick) --out "$OUT/benchmark_mjx" || true
  else
    echo "skipped: no experiments/benchmark_mjx.py"
  fi
else
  echo "skipped: the physics layer (jaxrotor.physics) is not in this build"
fi

echo "== 3. tilt sweep, float32"
CFG="$ROOT/configs/sweep_tilt.toml"
if [[ "$TINY" == 1 ]]; then
  sed -e 's/^points = 20/points = 2/' -e 's/^chunk = 100/chunk = 2/' "$CFG" > "$OUT/sweep_tiny.toml"
  CFG="$OUT/sweep_tiny.toml"
  T1=(--t1 0.1)
else
  T1=()
fi
START=$("$PY" -c "import time; print(time.time())")
"$PY" -c "from jaxrotor.cli import main; main()" sweep "$CFG" --out "$OUT/sweep" --float32 --no-progress \
  ${T1[@]+"${T1[@]}"} | tee "$OUT/sweep.log"
"$PY" -c "import json, sys, time; print(json.dumps({'wall_s': time.time() - float(sys.argv[1])}))" "$START" \
  > "$OUT/sweep_time.json"

echo "== table"
"$PY" - "$OUT" <<'PYEOF'
import csv, json, sys
from pathlib import Path
out = Path(sys.argv[1])
b = json.loads((out / "benchmark_batch" / "benchmark_batch.json").read_text())
print(f"device: {b['device']} ({b['device_kind']}), flight {b['horizon_s']} s at dt {b['dt']} s, float32")
print(f"{'what':<26} {'batch':>9} {'steps/s':>12} {'wall [ms]':>10} {'mem/member':>12}")
for r in b["rows"]:
    mem = r.get("memory_per_member_bytes")
    print(f"{'benchmark ' + r['variant']:<26} {r['batch']:>9} {r['steps_per_s']:>12.4g} {r['wall_s'] * 1e3:>10.2f} "
          f"{(format(mem, '.0f') + ' B') if mem else 'n/a':>12}")
rows = list(csv.DictReader(open(out / "sweep" / "sweep.csv")))
t = json.loads((out / "sweep_time.json").read_text())
print(f"{'sweep (incl. compile)':<26} {len(rows):>9} {'':>12} {t['wall_s'] * 1e3:>10.0f} {'':>12}")
print("checks passed:", b["passed"])
PYEOF
