#!/usr/bin/env bash
# LC ladder: ngspice (transient analysis, trapezoidal and Gear-2) against
# diracvi ((+) Lagrange–Dirac stepper of the run-time core, forward and midpoint maps) on
# the same circuit: relative energy error over PERIODS periods of the
# excited mode, and wall time. Not part of CI.
#
#   sudo apt-get install -y ngspice
#   scripts/ngspice_ladder.sh [CELLS=10] [MODE=1] [PERIODS=10000] [STEPS_PER_PERIOD=40]
#
# ngspice: `.tran h T 0 h uic` (the step is bounded by the diracvi step h;
# ngspice's own truncation-error control may take smaller ones), capacitor
# initial voltages v0 sin(j·mode·π/(N+1)), inductor currents zero; energy
# E = Σ ½ C v² + Σ ½ L i² at every accepted time point.
set -euo pipefail
cells=${1:-10}
mode=${2:-1}
periods=${3:-10000}
per_period=${4:-40}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

read -r h tstop < <(awk -v n="$cells" -v k="$mode" -v P="$periods" -v s="$per_period" 'BEGIN {
  pi = atan2(0, -1); w = 2 * sin(k * pi / (2 * (n + 1))); T = 2 * pi / w;
  printf "%.17g %.17g\n", T / s, T * P }')

for method in trap gear; do
  deck="$work/ladder-$method.cir"
  {
    echo "LC ladder, $cells cells, mode $mode"
    awk -v n="$cells" -v k="$mode" 'BEGIN {
      pi = atan2(0, -1);
      for (j = 1; j <= n + 1; j++) {
        a = (j == 1) ? 0 : j - 1; b = (j == n + 1) ? 0 : j;
        printf "L%d %d %d 1 IC=0\n", j, a, b;
        if (j <= n) printf "C%d %d 0 1 IC=%.17g\n", j, j, sin(j * k * pi / (n + 1));
      } }'
    echo ".options method=$method maxord=2"
    echo ".tran $h $tstop 0 $h uic"
    echo ".control"
    echo "run"
    expr="0"
    for ((j = 1; j <= cells; j++)); do expr="$expr + 0.5*v($j)*v($j)"; done
    for ((j = 1; j <= cells + 1; j++)); do expr="$expr + 0.5*l$j#branch*l$j#branch"; done
    echo "let e = $expr"
    echo "let e0 = e[0]"
    echo "let dev = abs(e - e0) / e0"
    echo "let n = length(e)"
    echo "let m = vecmax(dev)"
    echo "let f = (e[n-1] - e0) / e0"
    echo "echo RESULT points=\$&n max_rel_energy_dev=\$&m final_rel_energy_change=\$&f"
    echo "quit"
    echo ".endc"
    echo ".end"
  } > "$deck"
  start=$(date +%s.%N)
  out=$(ngspice -b "$deck" 2>&1 || true)
  end=$(date +%s.%N)
  line=$(grep RESULT <<< "$out" || echo "RESULT failed: $(tail -3 <<< "$out")")
  echo "ngspice-$method ${line#RESULT } wall_s=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
done

cd "$here"
cargo build --release -q -p diracvi-circuit-tests --example ladder_energy
for disc in forward midpoint; do
  "${CARGO_TARGET_DIR:-$here/target}/release/examples/ladder_energy" "$cells" "$mode" "$periods" "$per_period" "$disc"
done
