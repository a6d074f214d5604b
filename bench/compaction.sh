#!/usr/bin/env bash
# The cost of WriteToIceberg's compaction (BENCHMARKS.md, "Iceberg compaction"), measured with
# GNU time on the sluice process (user + system CPU seconds, wall, peak RSS):
#
#   A. `sluice iceberg compact` of a table of many small files (a seeded generator written
#      with a 100 ms trigger and no compaction), RUNS times on copies of the same table:
#      CPU seconds per MB rewritten.
#   B. a paced stream (generator at QPS for SECONDS, 1 s trigger) into a table with and
#      without `compaction: {target_file_size_mb: 8, every: 5s}`, RUNS times each, alternating:
#      the process's CPU seconds, and messages per CPU second.
#
# Usage: bench/compaction.sh [RUNS] [QPS] [SECONDS]   (defaults 3 20000 20), from the repository root.
set -euo pipefail
RUNS=${1:-3}
QPS=${2:-20000}
SECONDS_=${3:-20}
DIR=$(mktemp -d /tmp/sluice-compaction-bench.XXXX)
BIN=$DIR/sluice
go build -o "$BIN" ./cmd/sluice
SCHEMA='{"id": {{index()}}, "event": "{{uuid()}}", "user": "{{username()}}", "score": {{integer(0, 10000)}}, "note": "{{alpha(40, 80)}}"}'

# pipeline DIR QPS MESSAGES TRIGGER [SINK LINE]
pipeline() {
	cat >"$1/p.yaml" <<EOF
pipeline:
  type: chain
  source:
    type: StreamingDataGenerator
    config:
      seed: 11
      qps: $2
      messages_limit: $3
      schema: |
        $SCHEMA
  sink:
    type: WriteToIceberg
    config:
      table: db.events
      triggering_frequency_seconds: $4
      catalog_properties: {type: sql, uri: $1/catalog.db, warehouse: $1/wh}
      ${5:-}
options:
  name: bench
EOF
}

timed() { /usr/bin/time -f '%U %S %e %M' -o "$DIR/time" "$@" >"$DIR/out" 2>"$DIR/err"; read -r u s e m <"$DIR/time"; echo "$(echo "$u + $s" | bc) $e $((m / 1024))"; }

echo "== A: sluice iceberg compact of a table of small files"
mkdir -p "$DIR/small"
pipeline "$DIR/small" 0 400000 100ms
"$BIN" run "$DIR/small/p.yaml" >/dev/null 2>&1
for i in $(seq "$RUNS"); do
	rm -rf "$DIR/a$i" && cp -r "$DIR/small" "$DIR/a$i"
	set -- $(timed "$BIN" iceberg compact db.events --json --target-file-size-mb 128 \
		--catalog-property type=sql --catalog-property "uri=$DIR/a$i/catalog.db" --catalog-property "warehouse=$DIR/a$i/wh")
	echo "run $i: cpu_s=$1 wall_s=$2 rss_mb=$3 $(tr -d ' \n' <"$DIR/out")"
done

echo "== B: a stream of $QPS messages/s for $SECONDS_ s, 1 s trigger, with and without compaction"
for i in $(seq "$RUNS"); do
	for mode in off on; do
		d="$DIR/b-$mode-$i" && mkdir -p "$d"
		extra=""
		[ "$mode" = on ] && extra="compaction: {target_file_size_mb: 8, every: 5s}"
		pipeline "$d" "$QPS" $((QPS * SECONDS_)) 1s "$extra"
		set -- $(timed "$BIN" run "$d/p.yaml")
		files=$(grep -o 'rows in [0-9]* data files*, [0-9.]* [KMG]iB' "$DIR/out" || true)
		rounds=$(grep -c '"msg":"compacted"' "$DIR/err" || true)
		echo "compaction $mode run $i: cpu_s=$1 wall_s=$2 rss_mb=$3 messages_per_cpu_s=$(echo "$QPS * $SECONDS_ / $1" | bc) compactions=$rounds ($files)"
	done
done
rm -rf "$DIR"
