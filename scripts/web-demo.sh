#!/usr/bin/env bash
# The browser demo (examples/web_demo.rs + examples/web/index.html): builds it for
# wasm32-unknown-unknown, binds it with wasm-bindgen, shrinks it with wasm-opt into
# target/web-demo, and serves that at http://localhost:${PORT:-8000} with python3's http.server.
# Open the page in a browser with WebGPU (Chrome, Edge; Firefox and Safari where enabled).
# --build-only: build, print the wasm size, and stop.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
source scripts/setup-web.sh

out=target/web-demo
echo "== building the browser demo"
cargo build --quiet --release --example web_demo --target wasm32-unknown-unknown
rm -rf "$out"
mkdir -p "$out/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$out/pkg" \
  target/wasm32-unknown-unknown/release/examples/web_demo.wasm
wasm=$out/pkg/web_demo_bg.wasm
before=$(stat -c %s "$wasm")
# The features Rust's wasm32 target enables by default, so that wasm-opt accepts and keeps them.
"$WASM_OPT" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
  --enable-mutable-globals --enable-reference-types --enable-multivalue "$wasm" -o "$wasm"
cp examples/web/index.html "$out/"
after=$(stat -c %s "$wasm")
echo "web demo: $wasm is $((after / 1024)) KiB after wasm-opt ($((before / 1024)) KiB before), $(gzip -9c "$wasm" | wc -c | awk '{print int($1/1024)}') KiB gzipped"

if [ "${1:-}" = "--build-only" ]; then
  exit 0
fi
port=${PORT:-8000}
echo "serving $out at http://localhost:$port (Ctrl-C stops)"
exec python3 -m http.server "$port" --bind 127.0.0.1 --directory "$out"
