#!/usr/bin/env bash
# Session 12, call 6: a cluster of one block no longer pushes (memcheck flagged st.async there, call 5): every
# nvidia GPU test, memcheck + racecheck over call 4's selection, the default softmax sweep beside torch.
# Run as: OPRT_GIT_COMMIT=<full hash computed here> bash scripts/gpu-call-s12-6.sh   (carry: [".whl"])
set -u
source scripts/gpu-call-lib.sh
gpu_call_suite s12c6 "$COLS_SANITIZE_K"
gpu_bench bench-default-softmax-s12 60 default softmax
