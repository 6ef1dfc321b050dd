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

# The MCP servers and clients the tests run against, pinned: npm packages into .test-deps/node_modules, the
# official Python MCP SDK into .test-deps/venv. Reinstalled only when the pins change.
TEST_NPM_PACKAGES="@modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31"
TEST_PIP_PACKAGES="mcp==2.3.0"

ensure_test_deps() {
  local deps="$PWD/.test-deps"
  command -v node >/dev/null 2>&1 || apt_install nodejs npm
  command -v npm >/dev/null 2>&1 || apt_install npm
  command -v python3 >/dev/null 2>&1 || apt_install python3
  # The remote-server tests make a CA and certificates (crates/connectors/tests/servers/make_certs.sh).
  command -v openssl >/dev/null 2>&1 || apt_install openssl ca-certificates
  mkdir -p "$deps"
  if [ "$(cat "$deps/npm.pins" 2>/dev/null)" != "$TEST_NPM_PACKAGES" ]; then
    echo "== installing $TEST_NPM_PACKAGES"
    # shellcheck disable=SC2086
    npm install --prefix "$deps" --no-audit --no-fund --no-save --silent $TEST_NPM_PACKAGES
    echo "$TEST_NPM_PACKAGES" > "$deps/npm.pins"
  fi
  if [ "$(cat "$deps/pip.pins" 2>/dev/null)" != "$TEST_PIP_PACKAGES" ]; then
    echo "== installing $TEST_PIP_PACKAGES"
    python3 -m venv "$deps/venv" 2>/dev/null || { apt_install python3-venv; python3 -m venv "$deps/venv"; }
    # shellcheck disable=SC2086
    "$deps/venv/bin/pip" install --quiet --disable-pip-version-check $TEST_PIP_PACKAGES
    echo "$TEST_PIP_PACKAGES" > "$deps/pip.pins"
  fi
  export CODEMODE_TEST_DEPS="$deps"
}

# Building the app: the Tauri 2 packages for Debian/Ubuntu (WebKitGTK 4.1 and friends).
ensure_app_build_deps() {
  apt_install libwebkit2gtk-4.1-dev build-essential curl wget file libxdo-dev libssl-dev \
    libayatana-appindicator3-dev librsvg2-dev pkg-config
  command -v node >/dev/null 2>&1 || apt_install nodejs npm
}

# The UI is plain HTML/CSS/JS: building it is a copy into ui/dist, which the app embeds at compile time.
build_ui() {
  node ui/build.mjs
}

# The app's end-to-end tests: a virtual display, a private D-Bus with a notification daemon, WebKitWebDriver,
# tauri-driver and webdriverio.
ensure_e2e_deps() {
  apt_install xvfb xauth dbus libnotify-bin webkit2gtk-driver imagemagick python3-dbus python3-gi \
    libayatana-appindicator3-1 libglib2.0-bin chromium chromium-driver libnss3-tools
  if ! command -v tauri-driver >/dev/null 2>&1; then
    echo "== installing tauri-driver"
    cargo install tauri-driver --locked --version 2.1.0
  fi
  if [ "$(cat e2e/node_modules/.pins 2>/dev/null)" != "$(sha256sum e2e/package-lock.json | cut -d' ' -f1)" ]; then
    echo "== installing the e2e packages"
    (cd e2e && npm ci --no-audit --no-fund --silent)
    sha256sum e2e/package-lock.json | cut -d' ' -f1 > e2e/node_modules/.pins
  fi
}
