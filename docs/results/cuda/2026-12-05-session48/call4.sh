cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DLNL_ENABLE_CUDA=ON >$OUT/cfg.log 2>&1 && cmake --build build-gpu -j16 >$OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "built $SECONDS s"
T=build-gpu/tests/test_table
for t in memcheck synccheck; do (timeout 440 compute-sanitizer --tool $t --error-exitcode 99 $T --device cuda --quick > $OUT/$t.log 2>&1; echo "$t rc $? $SECONDS s: $(tail -2 $OUT/$t.log|tr '\n' ' ')") & done
for k in cuda "not cuda"; do (timeout 440 env LNLINEAR_TEST_DEVICE=cuda LNLINEAR_LIBRARY=$PWD/build-gpu/liblnlinear.so LNLINEAR_EXPECT_CPP=1 PYTHONPATH=$PWD/python python3 -m pytest -q -p no:cacheprovider --durations=10 -k "$k" \
 --deselect "tests/python/test_compile.py::test_compile_fullgraph_matches_eager[cpu]" --deselect "tests/python/test_gpt2.py::test_gpt2_adamw_loss_curve[cpu-float32]" --deselect "tests/python/test_gpt2.py::test_gpt2_logits_and_gradients[recompute-cpu-float32]" tests/python > "$OUT/pytest_${k// /_}.log" 2>&1; echo "pytest -k '$k' rc $? $SECONDS s: $(tail -1 "$OUT/pytest_${k// /_}.log")") & done
wait
