# Shared by scripts/*: install what the project needs, only when it is missing.

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_install() {
  local missing=()
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "== installing ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}"
  fi
}

ensure_rust() {
  apt_install build-essential pkg-config ca-certificates curl
  if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  if ! command -v cargo >/dev/null 2>&1; then
    echo "== installing the Rust toolchain (rustup)"
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  for component in rustfmt clippy; do
    if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1 && command -v rustup >/dev/null 2>&1; then
      rustup component add "$component"
    fi
  done
}
