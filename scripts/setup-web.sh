#!/usr/bin/env bash
# Installs what the browser build and its tests need, on top of scripts/setup.sh (source that
# first; it adds the wasm32 Rust target): Debian's Chromium and its WebDriver (headless, WebGPU
# on SwiftShader), wasm-bindgen's CLI at exactly the version of the wasm-bindgen crate in
# Cargo.lock, and binaryen's wasm-opt from npm, pinned by scripts/web/package-lock.json
# (Debian's binaryen produces broken wasm from wasm-bindgen's output). Quick when everything is already there.
# Sourced from the repository root.

web_packages=(chromium chromium-driver fonts-liberation python3)
command -v npm >/dev/null 2>&1 || web_packages+=(nodejs npm)
web_missing=()
for p in "${web_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || web_missing+=("$p")
done
if [ ${#web_missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup-web: installing ${web_missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${web_missing[@]}"
fi

wasm_bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $wasm_bindgen_version" ] ||
   [ "$(wasm-bindgen-test-runner --version 2>/dev/null)" != "wasm-bindgen-test-runner $wasm_bindgen_version" ]; then
  echo "setup-web: installing wasm-bindgen-cli $wasm_bindgen_version (a few minutes, once)"
  cargo install --quiet --force wasm-bindgen-cli --version "$wasm_bindgen_version"
fi

# npm ci only when the lock file changed since the last install.
if ! cmp -s scripts/web/package-lock.json scripts/web/node_modules/.installed-package-lock.json; then
  echo "setup-web: npm ci in scripts/web (binaryen's wasm-opt)"
  (cd scripts/web && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.installed-package-lock.json)
fi
export WASM_OPT="$PWD/scripts/web/node_modules/.bin/wasm-opt"
