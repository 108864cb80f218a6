#!/usr/bin/env bash
# Drop-in cost: `strata plan` in one unit's dir against `terraform plan` in a
# copy of it, interleaved, with changes and with nothing to change.
# Usage: bench/dropin/run.sh [ROUNDS]   (STRATA_BIN, TERRAFORM_BIN to override)
set -euo pipefail
rounds=${1:-20}
here=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA_BIN:-$here/bin/strata}
tf=${TERRAFORM_BIN:-$(command -v terraform)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TF_CLI_CONFIG_FILE=$work/empty.tfrc CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
: >"$TF_CLI_CONFIG_FILE"
for side in strata terraform; do
  mkdir -p "$work/$side/unit"
  cat >"$work/$side/unit/main.tf" <<'TF'
variable "trigger" {
  type    = string
  default = "0"
}
resource "terraform_data" "x" {
  input = var.trigger
}
output "x" {
  value = terraform_data.x.output
}
TF
done
: >"$work/strata/strata.yml"
(cd "$work/terraform/unit" && "$tf" init -input=false >/dev/null && "$tf" apply -auto-approve -input=false >/dev/null)
(cd "$work/strata/unit" && "$strata" apply -auto-approve -input=false >/dev/null)
# One timed command; prints "wall_ms cpu_ms" (children's user+sys).
timed() {
  python3 - "$@" <<'PY'
import os, subprocess, sys, time
t0 = time.perf_counter(); c0 = os.times()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
t1 = time.perf_counter(); c1 = os.times()
cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
print(f"{(t1-t0)*1000:.1f} {cpu*1000:.1f}")
PY
}
out=$work/times.tsv
for ((i = 0; i < rounds; i++)); do
  for trig in 0 1; do
    export TF_VAR_trigger=$trig
    echo "terraform $trig $(cd "$work/terraform/unit" && timed "$tf" plan -input=false -out=p.plan)" >>"$out"
    echo "strata $trig $(cd "$work/strata/unit" && timed "$strata" plan -input=false -out=p.plan)" >>"$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    who, trig, wall, cpu = line.split()
    rows.setdefault((who, trig), []).append((float(wall), float(cpu)))
print("| plan | terraform wall / CPU ms | strata wall / CPU ms | strata - terraform wall |")
print("|---|---|---|---|")
for trig, name in (("0", "nothing to change"), ("1", "with changes")):
    t = rows[("terraform", trig)]; s = rows[("strata", trig)]
    tw = statistics.median(w for w, _ in t); tc = statistics.median(c for _, c in t)
    sw = statistics.median(w for w, _ in s); sc = statistics.median(c for _, c in s)
    print(f"| {name} | {tw:.0f} / {tc:.0f} | {sw:.0f} / {sc:.0f} | {sw-tw:+.0f} ms |")
PY
