#!/usr/bin/env bash
# Session 19, call 5: the rest of the checks on branch s19-stats-loads (4b01a59) that the
# budget allows: the f16 quick table, and memcheck / racecheck / synccheck on quick-set rows
# whose forward computes its statistics inside the kernel (12800,200,136) and splits them
# (4224,200,520).
cd "$(dirname "$0")" || exit 2
. tests/gpu/ab.sh && ab_init c5
R=$PWD/res-c5 && rm -rf "$R" && mkdir -p "$R"
pk() { [ -n "${OUT:-}" ] && tar czf "$OUT/c5.tgz" -C "$PWD" res-c5; }
AB_JOBS=16 ab_build early . "" test_table
ab_el build
ab_quick early 40 f16
pk
AB_SAN_LIMIT=45 ab_sanitize early bf16 12800,200,136
pk
AB_SAN_LIMIT=30 ab_sanitize early bf16 4224,200,520
ab_el "all done"
pk
