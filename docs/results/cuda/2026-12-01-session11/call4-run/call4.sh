#!/usr/bin/env bash
# session 11 call 4: tests/gpu/run.sh on main (see COMMIT), logs under $OUT/run, packed.
cd "$(dirname "$0")"
echo "commit $(cat COMMIT)"
T0=$(date +%s)
OUT=$OUT/run bash tests/gpu/run.sh > /dev/null 2>&1
echo "run.sh rc $? in $(( $(date +%s) - T0 )) s"
grep -E "^--- |GPU SUMMARY" $OUT/run/gpu_run.log | head -40
tail -n 1 $OUT/run/gpu_run.log
grep -E "^cuda" $OUT/run/bench.log | grep -E "auto" | awk '{print $2,$3,$4,$5,$6,$9,$11,$13}'
( cd $OUT && tar czf run.tgz run && rm -rf run )
