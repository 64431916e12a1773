#!/usr/bin/env bash
# compute-sanitizer racecheck over a command, judged on lnlinear's own kernels:
#   tests/gpu/racecheck_ours.sh build-gpu/tests/test_table --device cuda --quick
# Fails when the command fails or when racecheck reports a shared-memory hazard in any
# kernel other than cuBLAS's own (nvjet_*). Those are counted and printed, not judged:
# their code is closed, and nothing a caller passes can order accesses inside one of
# their thread blocks. Seen at aab47a6 (H200, CUDA 13.0): 46 reports, all in
# nvjet_sm90_{tst,hsh}_64x32_64x16_1x4_h_bz_NTT, the bf16/f16 dW GEMM of the
# (2048, 16, 1088) table shape; none in lnlinear's kernels.
# The report streams through as it comes (tee), so a run stopped by a time limit still
# leaves what it checked; before, the log was printed only at the end, and three runs cut
# short by `timeout` came back empty (session 10, call 6).
# Where this compute-sanitizer can leave kernels out (--kernel-name-exclude), cuBLAS's are
# not instrumented at all: their hazards are not judged anyway, and the whole step ran
# 445-451 s of its 480 s limit in session 22's run.sh (bf16, f16). What this saves is not
# measured yet (branch s22-next, written without a GPU).
skip=()
if compute-sanitizer --help 2>/dev/null | grep -q -- "--kernel-name-exclude"; then
    skip=(--kernel-name-exclude kns=nvjet_)
    echo "racecheck: cuBLAS's nvjet_* kernels left out (--kernel-name-exclude kns=nvjet_)"
fi
raw=$(mktemp)
compute-sanitizer --tool racecheck "${skip[@]}" "$@" 2>&1 | tee "$raw"
rc=${PIPESTATUS[0]}
total=$(grep -c "Race reported" "$raw")
ours=$(grep "Race reported" "$raw" | grep -vc "nvjet_")
rm -f "$raw"
echo "racecheck: $total hazard reports, $((total - ours)) inside cuBLAS kernels (nvjet_*), $ours elsewhere; command exit $rc"
[ "$rc" = 0 ] && [ "$ours" = 0 ]
