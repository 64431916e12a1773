#!/usr/bin/env bash
# Session 19, call 3 (main 3b992ad): session 18's next-ncu-source.sh as it ran, made from it
# by the edits below: ncu's timeouts cut to 150 / 40 s, and the .ncu-rep files (5.6 MB each)
# kept out of the tarball. It took 64 s. From the checkout's root:
#   docs/results/cuda/2026-12-02-session19/call3-ncu-source/next-ncu-source.sh > .snap/next-ncu-source.sh
# then the device call `cd .snap || exit 3; bash next-ncu-source.sh` with carry [".snap"].
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2016  # the $ signs are the script's own, not expanded here
sed -e 's/timeout 200 ncu/timeout 150 ncu/; s/timeout 60 ncu/timeout 40 ncu/g' \
    -e 's|^cd "${OUT:-.}" && tar czf ncusrc.tgz ncusrc && rm -rf ncusrc|ls -la "$R"; mkdir -p reps \&\& mv "$R"/*.ncu-rep reps/ 2>/dev/null; cd "${OUT:-.}" \&\& tar czf ncusrc.tgz ncusrc \&\& rm -rf ncusrc|' \
    "$here/../../2026-12-02-session18/next-ncu-source.sh"
