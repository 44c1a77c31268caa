#!/usr/bin/env bash
# What the integration tests in a real VS Code need (idempotent; quick when done; runs as root on CI
# with no network but npm and Debian's archive). See test/vscode/README.md.
#  - Debian chromium: the browser that opens VS Code's workbench (no browser download works here)
#  - ripgrep: its rg is handed to @vscode/ripgrep, whose postinstall would fetch rg from GitHub
#  - libkrb5-dev: gssapi headers for the kerberos addon that code-server's VS Code builds
#  - code-server@4.100.3 (VS Code 1.100.3 server, the last release for Node 20) in .vscode-test/code-server/,
#    a folder of its own: it is a test tool, never one of the extension's dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

CS_VERSION=4.100.3
RG_PKG_VERSION=1.15.11             # @vscode/ripgrep pinned by code-server 4.100.3's lib/vscode/npm-shrinkwrap.json
RG_TARBALL=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz   # the asset that version asks for
dest=.vscode-test/code-server
vscode="$dest/node_modules/code-server/lib/vscode"
server_main="$vscode/out/server-main.js"

# 1. System packages (only what is missing; only as root with apt).
need=()
for p in chromium ripgrep libkrb5-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "setup-vscode: missing ${need[*]}; install them (apt-get install ${need[*]}) or run as root" >&2
    exit 1
  fi
  echo "setup-vscode: apt-get install ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# 2. code-server, skipped when its server entry and the native addons it needs are in place.
if [ -f "$server_main" ] && [ -f "$dest/.installed-$CS_VERSION" ]; then
  exit 0
fi
echo "setup-vscode: installing code-server@$CS_VERSION into $dest (about a minute, ~300 MB)"
rm -rf "$dest"
mkdir -p "$dest/tmp"
dest_abs=$(cd "$dest" && pwd)
# @vscode/ripgrep looks for its download in $TMPDIR/vscode-ripgrep-cache-<its version>/ first.
rg_cache="$dest_abs/tmp/vscode-ripgrep-cache-$RG_PKG_VERSION"
mkdir -p "$rg_cache"
tar -czf "$rg_cache/$RG_TARBALL" -C "$(dirname "$(command -v rg)")" rg
echo '{ "name": "vscode-test-server", "private": true }' > "$dest/package.json"
(
  cd "$dest"
  export TMPDIR="$dest_abs/tmp"
  export npm_config_unsafe_perm=true  # as root, code-server's postinstall refuses to run without it
  export npm_config_yes=true          # node-pty runs `npx node-gyp`; a yes=false npmrc would cancel it
  export npm_config_nodedir=/usr      # node-gyp uses Debian's Node headers instead of downloading them
  export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
  npm install --no-save --unsafe-perm --no-package-lock "code-server@$CS_VERSION" </dev/null
)
# The postinstall (which installs VS Code's own modules) must have run, not only the unpacking.
for f in "$server_main" "$vscode/node_modules/node-pty/build/Release/pty.node" "$vscode/node_modules/@vscode/ripgrep/bin/rg"; do
  [ -e "$f" ] || { echo "setup-vscode: $f missing after install" >&2; exit 1; }
done
rm -rf "$dest/tmp"
touch "$dest/.installed-$CS_VERSION"
echo "setup-vscode: done"
