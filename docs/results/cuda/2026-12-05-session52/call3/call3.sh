#!/usr/bin/env bash
# Session 52, call 3: f16's dW from the raw x limited to |mean| rstd 16 again (44d93b1, on
# branch s51-cuda-mixed). Builds, then side by side: the dW-from-x / AUTO / saved-y Python
# tests, the f16 quick table, and the errors of test_numerics' 33000 x 1024 x 200 rows
# (ours and eager's against float64) printed for the record.
T0=$(date +%s)
O=${OUT:-/tmp/s52c3}; mkdir -p "$O"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$O/summary.txt"
( cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >/dev/null &&
  cmake --build build-gpu -j 16 >/dev/null ) || { echo "build failed" | tee -a "$O/summary.txt"; exit 1; }
echo "build done at $(( $(date +%s) - T0 )) s" | tee -a "$O/summary.txt"
export LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so PYTHONPATH=$PWD/python OMP_NUM_THREADS=4
( timeout 200 python3 -m pytest -q -p no:cacheprovider -rf --tb=short \
    -k "cuda_16bit_dw_from_x or cuda_auto_small_n or (cuda and saved_y)" tests/python/test_numerics.py \
    tests/python/test_saved_y.py \
    >"$O/pytest.log" 2>&1; echo "pytest: exit $? $(tail -n 1 "$O/pytest.log")" >>"$O/summary.txt" ) &
( timeout 200 build-gpu/tests/test_table --device cuda --dtype f16 --quick >"/tmp/table.log" 2>&1
  echo "table f16 quick: exit $? $(tail -n 1 /tmp/table.log)" >>"$O/summary.txt" ) &
( cd tests/python && timeout 200 python3 - >"$O/errors.txt" 2>&1 <<'PY'
import torch, test_numerics as tn
print(torch.cuda.get_device_name(0))
for dt, offs in ((torch.float16, (25.0, 100.0)), (torch.bfloat16, (100.0,))):
    for off in offs:
        for st in ("unfused", "fused"):
            inputs, dy = tn.make_inputs((33000,), 1024, 200, dt, "cuda", offset=off)
            try:
                r = tn.check_all(inputs, dy, dt, strategy=st, recompute=True)
                print(dt, off, st, "ours/eager:", {k: f"{a:.2e}/{b:.2e}" for k, (a, b) in r.items()})
            except AssertionError as e:
                print(dt, off, st, "FAIL", e)
PY
) &
wait
echo "all done at $(( $(date +%s) - T0 )) s" | tee -a "$O/summary.txt"
cat "$O/summary.txt" "$O/errors.txt"; grep -E "^FAILED|^E " "$O/pytest.log" | head -20
