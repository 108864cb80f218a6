#!/usr/bin/env bash
# One sharded CI run at scale, as local processes: a generated repository
# of LAYERS×WIDTH terraform_data units (default 20×100 = 2,000), applied
# through `strata ci start`, `ci run` (SHARDS jobs a wave, at once) and
# `ci finish` against an S3 server on loopback (versitygw, from PATH or
# bin/tools), then `ci check`. It prints:
#   - strata's wall time a unit not spent in terraform: each job's wall
#     time less the engine steps of its units, summed over jobs, over the
#     units. Each job runs one unit at a time (-j1), so the parts add up;
#     with SEQ=1 the shards of a wave run one after another, so no job waits
#     for a CPU another holds (2 cores here, 8 jobs a wave otherwise);
#   - with CPU=1 instead, strata's own CPU time a unit: the CPU every strata
#     process spent in its own threads, not its children's, summed, over
#     the units. It is sampled (perf record, one sample per 0.1 ms of CPU,
#     children included) and counted by command name: perf stat
#     --no-inherit would leave out every thread but the first, and Go runs
#     on several. perf record adds about a second of its own to each job's
#     wall time, so a CPU=1 run's wall figures are not strata's. With
#     CALLS=1 too, each sample keeps its call stack (frame pointers), and
#     the functions one job's strata CPU went to (wave 1, shard 0), its own
#     and the kernel's, are written to WORK/profile.txt, the most first.
#
#   [SEQ=1] [CPU=1 [CALLS=1]] [STRATA_BIN=…] bench/ci/run.sh [LAYERS] [WIDTH] [SHARDS]
#
# Not part of `make test`: it takes minutes.
set -euo pipefail

LAYERS="${1:-20}"
WIDTH="${2:-100}"
SHARDS="${3:-8}"
HERE="$(cd "$(dirname "$0")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
WORK="${WORK:-$(mktemp -d -t strata-ci-bench.XXXXXX)}"
mkdir -p "$WORK/logs" "$WORK/perf"
echo "work dir: $WORK"
export PATH="$REPO/bin/tools:$PATH"
command -v versitygw >/dev/null || { echo "versitygw is not on PATH (make tools)" >&2; exit 1; }
[[ "${CPU:-0}" != 1 ]] || command -v perf >/dev/null || { echo "perf is not on PATH (Debian: linux-perf)" >&2; exit 1; }

# STRATA_BIN runs a strata built elsewhere (another commit, to compare).
STRATA="${STRATA_BIN:-$WORK/strata}"
[[ -n "${STRATA_BIN:-}" ]] || make -s -C "$REPO" build BIN="$STRATA"
(cd "$REPO" && go run bench/ci/gen.go -dir "$WORK/repo" -layers "$LAYERS" -width "$WIDTH")
(cd "$WORK/repo" && git init -q && git add -A && git -c user.name=b -c user.email=b@b commit -qm gen)

PORT=$((20000 + RANDOM % 20000))
mkdir -p "$WORK/s3"
ROOT_ACCESS_KEY=bench ROOT_SECRET_KEY=bench-secret versitygw --port "127.0.0.1:$PORT" posix "$WORK/s3" >"$WORK/logs/versitygw.log" 2>&1 &
GW=$!
trap 'kill $GW 2>/dev/null || true' EXIT
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret AWS_REGION=us-east-1
STATE="s3://strata-bench?endpoint=http://127.0.0.1:$PORT&use_path_style=true&disable_https=true&region=us-east-1"
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done
(cd "$REPO" && go run bench/ci/gen.go -bucket "$STATE")

: >"$WORK/home.tfrc"
export HOME="$WORK" TF_CLI_CONFIG_FILE="$WORK/home.tfrc" CHECKPOINT_DISABLE=1 STRATA_CACHE_DIR="$WORK/cache"
cd "$WORK/repo"

# One strata process; with CPU=1 its CPU and its children's are sampled,
# by command name.
timed() {
  local out="$1"; shift
  local g=()
  [[ "${CALLS:-0}" == 1 ]] && g=(-g)
  if [[ "${CPU:-0}" == 1 ]]; then perf record -q -B -N -e task-clock -c 100000 "${g[@]}" -o "$WORK/perf/$out.data" "$@"; else "$@"; fi
}
now() { date +%s.%N; }

T0=$(now)
timed start "$STRATA" ci start apply --auto-approve --state "$STATE" --shards "$SHARDS" -j 1 --json >"$WORK/start.json"
RUN=$(jq -r .run "$WORK/start.json")
WAVES=$(jq '.waves | length' "$WORK/start.json")
echo "run $RUN: $WAVES waves"
: >"$WORK/jobs.tsv"
for w in $(jq -r '.waves[].wave' "$WORK/start.json"); do
  pids=()
  for s in $(jq -r ".waves[$w].shards[]" "$WORK/start.json"); do
    (
      a=$(now)
      timed "run-$w-$s" "$STRATA" ci run --state "$STATE" --run "$RUN" --wave "$w" --shard "$s" >"$WORK/logs/run-$w-$s.log" 2>&1
      b=$(now)
      printf '%s\t%s\t%s\n' "$w" "$s" "$(echo "$b - $a" | bc)" >>"$WORK/jobs.tsv"
    ) &
    pids+=($!)
    if [[ "${SEQ:-0}" == 1 ]]; then wait "${pids[@]}"; pids=(); fi
  done
  [[ ${#pids[@]} -gt 0 ]] && wait "${pids[@]}"
done
timed finish "$STRATA" ci finish --state "$STATE" --run "$RUN" --report "$WORK/report.json" >"$WORK/logs/finish.log" || true
T1=$(now)
"$STRATA" ci check --state "$STATE" --run "$RUN"

# strata's own samples (0.1 ms of CPU each), every process; -1 without CPU=1.
# The kernel names a process by its binary's name, cut to 15 bytes.
CPU_MS=-1
COMM=$(basename "$STRATA" | cut -c1-15)
if [[ "${CPU:-0}" == 1 ]]; then
  CPU_MS=$(for f in "$WORK"/perf/*.data; do perf report -i "$f" --stdio --no-children -g none --sort comm -F sample,comm 2>/dev/null; done |
    awk -v c="$COMM" '$2 == c {n += $1} END {printf "%.1f", n / 10}')
  if [[ "${CALLS:-0}" == 1 ]]; then
    # One job of the second wave (the first reads no results of others'),
    # strata's threads only: each function's share of the job's samples
    # with what it calls (children) and alone (self), the kernel's included.
    perf report -i "$WORK/perf/run-1-0.data" --stdio --comm "$COMM" --children --sort sym \
      -g none --percent-limit 1 2>/dev/null | grep -v '^#' | grep -v '^$' >"$WORK/profile.txt" || true
  fi
fi
UNITS=$(jq '.units | length' "$WORK/report.json")
APPLIED=$(jq '[.units[] | select(.status == "applied")] | length' "$WORK/report.json")
python3 - "$WORK" "$UNITS" "$CPU_MS" <<'PY'
import json, sys, datetime
work, units, cpu = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) / 1000
def t(s):
    s = s.rstrip('Z')
    if '.' in s:
        a, b = s.split('.'); s = a + '.' + (b + '000000')[:6]
    else:
        s += '.000000'
    return datetime.datetime.strptime(s, '%Y-%m-%dT%H:%M:%S.%f')
rep = json.load(open(work + '/report.json'))
engine = sum((t(st['finished_at']) - t(st['started_at'])).total_seconds() for u in rep['units'] for st in u['steps'])
jobs = sum(float(l.split('\t')[2]) for l in open(work + '/jobs.tsv') if l.strip())
print(f"units {units}, jobs {len(open(work + '/jobs.tsv').readlines())}")
print(f"engine steps: {engine:.1f} s in all, {engine / units * 1000:.1f} ms a unit")
if cpu < 0:
    print(f"job wall time: {jobs:.1f} s in all; not in engine steps: {(jobs - engine) / units * 1000:.1f} ms a unit")
    # Where: between the engine steps of a job (a unit's own cost), and
    # before a job's first step and after its last (a job's). The job of
    # each unit is in its result, which versitygw keeps as a file.
    import glob, collections
    job = {}
    for f in glob.glob(work + '/s3/strata-bench/runs/*/results/**/*.json', recursive=True):
        r = json.load(open(f))
        job[r['unit']['dir'], r['unit']['stack']] = (r['wave'], r['shard'])
    wall = {(int(w), int(s)): float(d) for w, s, d in (l.split('\t') for l in open(work + '/jobs.tsv') if l.strip())}
    by = collections.defaultdict(list)
    for u in rep['units']:
        if u['steps']:
            by[job[u['dir'], u['stack']]].append(u)
    inside = outside = 0.0
    for k, us in by.items():
        first = min(t(st['started_at']) for u in us for st in u['steps'])
        last = max(t(st['finished_at']) for u in us for st in u['steps'])
        eng = sum((t(st['finished_at']) - t(st['started_at'])).total_seconds() for u in us for st in u['steps'])
        span = (last - first).total_seconds()
        inside += span - eng
        outside += wall[k] - span
    print(f"  between a job's engine steps: {inside / units * 1000:.1f} ms a unit; "
          f"before its first and after its last: {outside / len(by) * 1000:.0f} ms a job, {outside / units * 1000:.1f} ms a unit")
else:
    print(f"strata's own CPU (start, every job, finish): {cpu:.1f} s, {cpu / units * 1000:.1f} ms a unit")
PY
echo "applied: $APPLIED of $UNITS; whole run: $(echo "$T1 - $T0" | bc) s"
