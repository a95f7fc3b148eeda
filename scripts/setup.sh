#!/usr/bin/env bash
# Installs what building and running wgpu-flash-attn needs on Debian/Ubuntu: a Rust toolchain,
# the Vulkan loader, Mesa's software Vulkan driver (lavapipe, used when no GPU driver is present)
# and Mesa's EGL/GL (llvmpipe, for wgpu's GL backend). Safe to run again: it installs only what is missing.
set -euo pipefail

# gcc and libc6-dev: Rust links through the system C toolchain. python3: the benchmark report
# (benches/report.py), which scripts/test.sh checks.
packages=(libvulkan1 mesa-vulkan-drivers libegl1 libegl-mesa0 libgl1-mesa-dri ca-certificates curl gcc libc6-dev python3)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

# rustup, not only cargo: the browser tests add the wasm32 target through it. A cargo from the
# distribution (without rustup) is shadowed by rustup's toolchain in ~/.cargo/bin.
if ! command -v rustup >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/rustup" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: installing the Rust toolchain with rustup"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
fi

# The toolchain rust-toolchain.toml pins, with the wasm32 target, clippy and rustfmt: installed
# here, since rustup 1.28 and later no longer install it on first use.
toolchain=$(sed -n 's/^channel = "\(.*\)"$/\1/p' "$(dirname "${BASH_SOURCE[0]}")/../rust-toolchain.toml")
if ! rustup toolchain list | grep -q "^$toolchain-"; then
  echo "setup: installing Rust $toolchain"
  rustup toolchain install "$toolchain" --no-self-update --profile minimal -c clippy,rustfmt -t wasm32-unknown-unknown
fi
# A toolchain installed before (without the target) gets it too: scripts/test.sh checks the
# wasm32 build before the browser part runs.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "setup: adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The Vulkan loader warns when this is unset; any writable directory will do.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
