#!/usr/bin/env bash
# Times strata, Terramate and Terragrunt on one generated 40-unit DAG:
# apply from no state, then plan with nothing to change; and on a wide
# repository of WIDE independent units (default 200): apply from no state,
# plan with nothing to change and plan with a change in every unit, with
# plain `xargs -P WIDE_PAR terraform -chdir=DIR ...` beside them as the
# floor. Interleaved (strata, terramate, terragrunt, strata, ...), ROUNDS
# times each.
#
#   bench/peers/run.sh [ROUNDS]        # default 5
#
# WIDE_PAR (default: the machine's cores) is the parallelism of every tool
# on the wide repository; WIDE=0 leaves the wide repository out.
#
# Binaries: STRATA_BIN (default: built from this checkout), TERRAMATE_BIN and
# TERRAGRUNT_BIN (default: from PATH); a peer that is not found is skipped.
# terraform comes from PATH. WORK (default: a new temporary directory) holds
# the trees, the logs, results.tsv and summary.md; its file system counts
# (README.md, Figures).
#
# TOOLS and COMMANDS narrow a run to some tools (strata, terramate,
# terragrunt, terragrunt-noinit, xargs, xargs-out) and some timed commands
# (apply, plan, wide-apply, wide-plan, wide-plan-changes), each a list
# separated by spaces: TOOLS="strata xargs-out" COMMANDS="wide-plan
# wide-apply" bench/peers/run.sh 10 is the pair that measures strata's own
# cost. Each strata run writes its report, whose cpu says how much of the
# CPU was strata's own process; the summary gives it a unit.
#
# Not part of `make test` and not run by CI: it takes minutes and needs the
# peers, which are not the project's dependencies.
set -euo pipefail

ROUNDS="${1:-5}"
PAR=4
WIDE="${WIDE:-200}"
WIDE_PAR="${WIDE_PAR:-$(nproc)}"
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK="${WORK:-$(mktemp -d -t strata-peers.XXXXXX)}"
mkdir -p "$WORK"
echo "work dir: $WORK"

TERRAFORM="$(command -v terraform)" || { echo "terraform is not on PATH" >&2; exit 1; }
if [[ -z "${STRATA_BIN:-}" ]]; then
  STRATA_BIN="$WORK/bin/strata"
  make -s -C "$REPO" build BIN="$STRATA_BIN"
fi
TERRAMATE_BIN="${TERRAMATE_BIN:-$(command -v terramate || true)}"
TERRAGRUNT_BIN="${TERRAGRUNT_BIN:-$(command -v terragrunt || true)}"

tools=(strata)
[[ -x "$TERRAMATE_BIN" ]] && tools+=(terramate) || echo "terramate not found: skipped (set TERRAMATE_BIN)"
[[ -x "$TERRAGRUNT_BIN" ]] && tools+=(terragrunt) || echo "terragrunt not found: skipped (set TERRAGRUNT_BIN)"
# terragrunt-noinit: terragrunt with --no-auto-init. Terragrunt runs init
# before plan or apply when a unit has no provider dir or no lock file,
# which is always so here (terraform_data is built in), so by default it
# starts terraform twice per unit; this variant shows the cost of that.
# TG_NOINIT=0 leaves it out.
[[ -x "$TERRAGRUNT_BIN" && "${TG_NOINIT:-1}" != 0 ]] && tools+=(terragrunt-noinit)

# xargs-out: xargs saving each plan (-out), as strata does so that apply
# applies what was planned: the floor for strata's plans.
wide_tools=("${tools[@]}" xargs xargs-out)

# picked LIST NAME: whether NAME is in the space-separated LIST, or LIST
# is empty (everything).
picked() { [[ -z $1 || " $1 " == *" $2 "* ]]; }
# only NAME...: sets KEPT to the NAMEs TOOLS picks.
only() {
  KEPT=()
  local t
  for t in "$@"; do picked "${TOOLS:-}" "$t" && KEPT+=("$t"); done
  return 0
}
only "${tools[@]}"
tools=("${KEPT[@]}")
only "${wide_tools[@]}"
wide_tools=("${KEPT[@]}")

# One environment for every tool: nothing from the caller's but PATH, an
# empty home and terraform CLI config, no update checks, terraform from PATH.
HOMEDIR="$WORK/home"
mkdir -p "$HOMEDIR"
: >"$HOMEDIR/terraformrc"
printf 'disable_checkpoint = true\n' >"$HOMEDIR/terramaterc"
ENV=(env -i
  "PATH=$PATH" "HOME=$HOMEDIR" "TF_CLI_CONFIG_FILE=$HOMEDIR/terraformrc"
  CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1
  "STRATA_CACHE_DIR=$HOMEDIR/strata-cache"
  "TM_CLI_CONFIG_FILE=$HOMEDIR/terramaterc"
  "TG_TF_PATH=terraform")

# cmd TOOL COMMAND: sets CMD to the argv of the tool's init, apply or plan,
# at the parallelism par (PAR on the DAG, WIDE_PAR on the wide repository).
# The wide repository's commands (wide-apply, wide-plan, wide-plan-changes)
# are the same apply and plan.
par=$PAR
cmd() {
  local c=${2#wide-}
  c=${c%-changes}
  case "$1:$c" in
    strata:init) CMD=("$STRATA_BIN" init --parallelism "$par") ;;
    strata:apply) CMD=("$STRATA_BIN" apply -auto-approve --parallelism "$par") ;;
    strata:plan) CMD=("$STRATA_BIN" plan --parallelism "$par") ;;
    terramate:init) CMD=("$TERRAMATE_BIN" run --parallel "$par" -- terraform init -input=false) ;;
    terramate:apply) CMD=("$TERRAMATE_BIN" run --parallel "$par" -- terraform apply -auto-approve -input=false) ;;
    terramate:plan) CMD=("$TERRAMATE_BIN" run --parallel "$par" -- terraform plan -input=false) ;;
    terragrunt:init) CMD=("$TERRAGRUNT_BIN" run --all --parallelism "$par" --non-interactive -- init -input=false) ;;
    terragrunt:apply) CMD=("$TERRAGRUNT_BIN" run --all --parallelism "$par" --non-interactive -- apply -auto-approve -input=false) ;;
    terragrunt:plan) CMD=("$TERRAGRUNT_BIN" run --all --parallelism "$par" --non-interactive -- plan -input=false) ;;
    terragrunt-noinit:init) cmd terragrunt init ;;
    terragrunt-noinit:apply) CMD=("$TERRAGRUNT_BIN" run --all --parallelism "$par" --non-interactive --no-auto-init -- apply -auto-approve -input=false) ;;
    terragrunt-noinit:plan) CMD=("$TERRAGRUNT_BIN" run --all --parallelism "$par" --non-interactive --no-auto-init -- plan -input=false) ;;
    xargs:init) CMD=(xargs -a dirs.txt -P "$par" -I '{}' terraform -chdir='{}' init -input=false) ;;
    xargs:apply) CMD=(xargs -a dirs.txt -P "$par" -I '{}' terraform -chdir='{}' apply -auto-approve -input=false) ;;
    xargs:plan) CMD=(xargs -a dirs.txt -P "$par" -I '{}' terraform -chdir='{}' plan -input=false) ;;
    xargs-out:plan) CMD=(xargs -a dirs.txt -P "$par" -I '{}' terraform -chdir='{}' plan -input=false -out=tfplan) ;;
    xargs-out:*) cmd xargs "$c" ;;
  esac
}

# trigger COMMAND: the TF_VAR_trigger of a command: a plan with changes
# sets the wide units' variable to another value than the one applied.
trigger() {
  case "$1" in
    *-changes) echo TF_VAR_trigger=1 ;;
    *) echo TF_VAR_trigger=0 ;;
  esac
}

# run TOOL COMMAND DIR LOG [PATH]: runs the command in DIR, output to LOG;
# stops the script when the tool fails.
run() {
  local tool=$1 c=$2 dir=$3 log=$4 path=${5:-$PATH}
  cmd "$tool" "$c"
  if ! (cd "$dir" && "${ENV[@]}" "PATH=$path" "$(trigger "$c")" "${CMD[@]}" >"$log" 2>&1 </dev/null); then
    echo "$tool $c failed in $dir; see $log" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

# timed TOOL COMMAND DIR LOG: as run, under /usr/bin/time, which writes
# "wall user sys" (seconds) to LOG.time; strata writes its report to
# LOG.json.
timed() {
  local tool=$1 c=$2 dir=$3 log=$4
  cmd "$tool" "$c"
  [[ $tool == strata ]] && CMD+=(--report "$log.json")
  if ! (cd "$dir" && /usr/bin/time -f '%e %U %S' -o "$log.time" "${ENV[@]}" "$(trigger "$c")" "${CMD[@]}" >"$log" 2>&1 </dev/null); then
    echo "$tool $c failed in $dir; see $log" >&2
    tail -20 "$log" >&2
    exit 1
  fi
}

# applied DIR [N]: every unit of DIR (N, default 40) has its resource in
# its state (Terragrunt keeps it under the unit's .terragrunt-cache).
applied() {
  local n want=${2:-40}
  n=$(find "$1" -name terraform.tfstate -exec grep -l '"type": "terraform_data"' {} + | wc -l)
  [[ $n -eq $want ]] || { echo "$1: $n of $want units applied" >&2; exit 1; }
}

# unchanged LOG N: the plan in LOG found nothing to change in each of
# the N units: terraform's own line, once a unit at least.
unchanged() {
  local n
  n=$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -c 'No changes. Your infrastructure matches the configuration.' || true)
  [[ $n -ge $2 ]] || { echo "$1: $n of $2 units found nothing to change" >&2; exit 1; }
}

# changed LOG: the plan in LOG found one change in each of the WIDE units:
# terraform's own line, which every tool passes on, once a unit at least.
changed() {
  local n
  n=$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -c 'Plan: 0 to add, 1 to change, 0 to destroy' || true)
  [[ $n -ge $WIDE ]] || { echo "$1: $n of $WIDE units planned a change" >&2; exit 1; }
}

# 1. The DAG, written once per tool.
rm -rf "$WORK/src"
(cd "$HERE" && GOFLAGS='' go run gen.go -out "$WORK/src" -wide "$WIDE") | tee "$WORK/dag.txt"

# 2. Per tool, two templates: init (initialised by the tool's own init, no
#    state) and applied (the init template applied once by the tool, which
#    also warms the page cache). Every timed apply runs on a fresh copy of
#    the init template, every timed plan on a fresh copy of the applied one.
dag=0
picked "${COMMANDS:-}" apply || picked "${COMMANDS:-}" plan && dag=1
for t in "${tools[@]}"; do
  [[ $dag == 1 ]] || break
  rm -rf "$WORK/$t-init" "$WORK/$t-applied"
  cp -a "$WORK/src/${t%-noinit}" "$WORK/$t-init"
  run "$t" init "$WORK/$t-init" "$WORK/$t-init.log"
  cp -a "$WORK/$t-init" "$WORK/$t-applied"
  run "$t" apply "$WORK/$t-applied" "$WORK/$t-applied.log"
  applied "$WORK/$t-applied"
  echo "$t: initialised and applied once (untimed)"
done
# The same for the wide repository, at WIDE_PAR.
par=$WIDE_PAR
for t in "${wide_tools[@]}"; do
  [[ $WIDE -gt 0 ]] || break
  rm -rf "$WORK/wide-$t-init" "$WORK/wide-$t-applied"
  src=${t%-noinit}
  cp -a "$WORK/src/wide/${src%-out}" "$WORK/wide-$t-init"
  run "$t" init "$WORK/wide-$t-init" "$WORK/wide-$t-init.log"
  cp -a "$WORK/wide-$t-init" "$WORK/wide-$t-applied"
  run "$t" apply "$WORK/wide-$t-applied" "$WORK/wide-$t-applied.log"
  applied "$WORK/wide-$t-applied" "$WIDE"
  echo "$t: wide repository initialised and applied once (untimed)"
done
par=$PAR

# commands: what each round times, in order; tools_of COMMAND sets TS to
# the tools that run it, template_of COMMAND TOOL names the template a
# run copies.
commands=(apply plan)
[[ $WIDE -gt 0 ]] && commands+=(wide-apply wide-plan wide-plan-changes)
kept=()
for c in "${commands[@]}"; do picked "${COMMANDS:-}" "$c" && kept+=("$c"); done
commands=("${kept[@]}")
tools_of() { if [[ $1 == wide-* ]]; then TS=("${wide_tools[@]}"); else TS=("${tools[@]}"); fi; }
template_of() {
  local pre="" kind=applied
  [[ $1 == wide-* ]] && pre=wide-
  [[ $1 == *apply ]] && kind=init
  echo "$WORK/$pre$2-$kind"
}

# fresh TEMPLATE: sets dir to TEMPLATE, a fresh copy of it in its own
# place, the template kept aside until restore DIR puts it back. A run
# works where the template was made: Terragrunt keeps a unit's copy, and
# its state, under a .terragrunt-cache dir named for the unit's path, so in
# a copy elsewhere it would plan from no state and init again.
fresh() {
  dir=$1
  rm -rf "$dir.kept"
  mv "$dir" "$dir.kept"
  cp -a "$dir.kept" "$dir"
}
restore() {
  rm -rf "$1"
  mv "$1.kept" "$1"
}

# 3. Timed rounds, interleaved.
printf 'tool\tcommand\tround\twall_s\tuser_s\tsys_s\tload1\town_cpu_ms\n' >"$WORK/results.tsv"
mkdir -p "$WORK/runs" "$WORK/logs"
for r in $(seq 1 "$ROUNDS"); do
  for c in "${commands[@]}"; do
    tools_of "$c"
    par=$PAR
    [[ $c == wide-* ]] && par=$WIDE_PAR
    for t in "${TS[@]}"; do
      fresh "$(template_of "$c" "$t")"
      sync
      log="$WORK/logs/$t-$c-$r.log"
      read -r load _ </proc/loadavg
      timed "$t" "$c" "$dir" "$log"
      read -r wall user sys <"$log.time"
      case $c in
        apply) applied "$dir" ;;
        wide-apply) applied "$dir" "$WIDE" ;;
        wide-plan-changes) changed "$log" ;;
        plan) unchanged "$log" 40 ;;
        wide-plan) unchanged "$log" "$WIDE" ;;
      esac
      # strata's own CPU, from its report: the rest is its engines'.
      own=-
      [[ $t == strata ]] && own=$(sed -n 's/.*"own_ms": *\([0-9]*\).*/\1/p' "$log.json")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$c" "$r" "$wall" "$user" "$sys" "$load" "${own:--}" | tee -a "$WORK/results.tsv"
      restore "$dir"
    done
  done
done

# 4. How often each tool starts terraform, by subcommand, in one apply and
#    one plan of the DAG and one plan with changes of the wide repository
#    (untimed): a shim ahead of terraform on PATH logs each start.
mkdir -p "$WORK/shim"
cat >"$WORK/shim/terraform" <<EOF
#!/bin/sh
# The subcommand: the first argument that is no option (-chdir=DIR).
sub=none
for a in "\$@"; do case \$a in -*) ;; *) sub=\$a; break ;; esac; done
echo "\$sub" >>"$WORK/shim/calls"
exec "$TERRAFORM" "\$@"
EOF
chmod +x "$WORK/shim/terraform"
printf 'tool\tcommand\tterraform starts by subcommand\n' >"$WORK/starts.tsv"
shims=()
for c in apply plan wide-plan-changes; do
  [[ $c == wide-* && $WIDE -eq 0 ]] && continue
  picked "${COMMANDS:-}" "$c" && shims+=("$c")
done
for c in "${shims[@]}"; do
  tools_of "$c"
  par=$PAR
  [[ $c == wide-* ]] && par=$WIDE_PAR
  for t in "${TS[@]}"; do
    rm -f "$WORK/shim/calls"
    fresh "$(template_of "$c" "$t")"
    run "$t" "$c" "$dir" "$WORK/logs/$t-$c-shim.log" "$WORK/shim:$PATH"
    counts=$(sort "$WORK/shim/calls" | uniq -c | awk '{printf "%s%s=%s", sep, $2, $1; sep=" "}')
    printf '%s\t%s\t%s\n' "$t" "$c" "$counts" | tee -a "$WORK/starts.tsv"
    restore "$dir"
  done
done

# 5. Each program's start: its `version`, STARTS (default 150) times,
#    interleaved; STARTS=0 leaves it out.
STARTS="${STARTS:-150}"
starts=("strata=$STRATA_BIN" "terraform=$TERRAFORM")
[[ -x "$TERRAMATE_BIN" ]] && picked "${TOOLS:-}" terramate && starts+=("terramate=$TERRAMATE_BIN")
[[ -x "$TERRAGRUNT_BIN" ]] && picked "${TOOLS:-}" terragrunt && starts+=("terragrunt=$TERRAGRUNT_BIN")
: >"$WORK/start.tsv"
if [[ $STARTS -gt 0 ]]; then
  (cd "$HERE" && "${ENV[@]}" "GOCACHE=$(go env GOCACHE)" "GOPATH=$(go env GOPATH)" GOFLAGS='' go run start.go -n "$STARTS" "${starts[@]}") >"$WORK/start.tsv"
fi

# 6. Medians and ratios.
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
{
  echo "# strata against its peers: $ROUNDS rounds, $(nproc) cores; parallelism $PAR on the DAG, $WIDE_PAR on the wide repository ($WIDE units)"
  echo
  cat "$WORK/dag.txt"
  echo
  echo "median load average (1 min) at the start of the timed runs: $(tail -n +2 "$WORK/results.tsv" | cut -f7 | median)"
  echo
  echo "| command | tool | median wall s | wall min-max s | median CPU s (user+sys) | strata/tool wall | strata/tool CPU | strata/tool wall, median of the rounds' |"
  echo "|---|---|---|---|---|---|---|---|"
  for c in "${commands[@]}"; do
    tools_of "$c"
    sw=$(awk -F'\t' -v c="$c" '$1=="strata" && $2==c {print $4}' "$WORK/results.tsv" | median)
    sc=$(awk -F'\t' -v c="$c" '$1=="strata" && $2==c {print $5+$6}' "$WORK/results.tsv" | median)
    for t in "${TS[@]}"; do
      w=$(awk -F'\t' -v c="$c" -v t="$t" '$1==t && $2==c {print $4}' "$WORK/results.tsv" | median)
      u=$(awk -F'\t' -v c="$c" -v t="$t" '$1==t && $2==c {print $5+$6}' "$WORK/results.tsv" | median)
      mm=$(awk -F'\t' -v c="$c" -v t="$t" '$1==t && $2==c {print $4}' "$WORK/results.tsv" | sort -g | sed -n '1p;$p' | paste -sd-)
      rw=$(awk -v a="$sw" -v b="$w" 'BEGIN {printf "%.2f", a/b}')
      rc=$(awk -v a="$sc" -v b="$u" 'BEGIN {printf "%.2f", a/b}')
      # Each round's strata against the tool's run beside it, so a slow
      # stretch of the machine weighs on both sides of a ratio.
      pr=$(awk -F'\t' -v c="$c" -v t="$t" '$2==c && $1=="strata" {s[$3]=$4} $2==c && $1==t {o[$3]=$4} END {for (r in s) if (r in o) printf "%.4f\n", s[r]/o[r]}' "$WORK/results.tsv" | median)
      echo "| $c | $t | $w | $mm | $u | $rw | $rc | $(printf '%.2f' "$pr") |"
    done
  done
  echo
  echo "strata's own CPU (its report's cpu.own_ms; the rest of its CPU is its engines'), median of the rounds:"
  echo
  for c in "${commands[@]}"; do
    n=40
    [[ $c == wide-* ]] && n=$WIDE
    own=$(awk -F'\t' -v c="$c" '$1=="strata" && $2==c && $8!="-" {print $8}' "$WORK/results.tsv" | median)
    share=$(awk -F'\t' -v c="$c" '$1=="strata" && $2==c && $8!="-" {printf "%.4f\n", $8/1000/($5+$6)}' "$WORK/results.tsv" | median)
    awk -v c="$c" -v own="$own" -v n="$n" -v sh="$share" 'BEGIN {printf "- %s: %.1f ms, %.2f ms a unit, %.1f%% of all its CPU\n", c, own, own/n, 100*sh}'
  done
  echo
  if [[ -s $WORK/start.tsv ]]; then
    echo "each program's start (\`version\`, $STARTS runs interleaved):"
    echo
    echo "| program | median ms | 10th percentile ms |"
    echo "|---|---|---|"
    awk -F'\t' '{print "| " $1 " | " $2 " | " $3 " |"}' "$WORK/start.tsv"
    echo
  fi
  echo "terraform starts per run (the DAG: 40 units; the wide repository: $WIDE):"
  echo
  tail -n +2 "$WORK/starts.tsv" | awk -F'\t' '{print "- " $1 " " $2 ": " $3}'
} >"$WORK/summary.md"
cat "$WORK/summary.md"
