#!/usr/bin/env bash
# The browser tests, in headless Chromium with WebGPU (SwiftShader when there is no GPU): the
# library tests of tests/web.rs through wasm-bindgen-test, then the demo page end to end
# (scripts/web/e2e.py checks the values it computes and saves a screenshot under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-web.sh

echo "== library tests in headless Chromium (wasm32, WebGPU)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  CHROMEDRIVER="$(command -v chromedriver)" \
  WASM_BINDGEN_TEST_WEBDRIVER_JSON=scripts/web/webdriver.json \
  WASM_BINDGEN_TEST_TIMEOUT=600 \
  cargo test --release --target wasm32-unknown-unknown --test web

echo "== the browser demo, end to end"
bash scripts/web-demo.sh --build-only
python3 scripts/web/e2e.py
