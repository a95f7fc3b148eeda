#!/usr/bin/env bash
# The main job: benchmark flash attention against the materialized baseline on the default
# adapter, verified against the f64 oracle. Arguments go to the benchmark (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cargo bench --bench attention -- "$@"
