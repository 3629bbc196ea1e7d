#!/bin/bash
# (The shared offline recipe, kept in the project so CI does not depend on a path outside the repo.)
# Installs a real VS Code (code-server 4.100.3 = VS Code 1.100.3, the last release that runs on Node 20),
# Debian's Chromium and playwright-core, with no internet beyond the npm registry and Debian's packages.
# Usage: setup.sh DIR   (idempotent; DIR/cs holds code-server, DIR/pw holds playwright-core)
set -euo pipefail
B=${1:?usage: setup.sh DIR}; mkdir -p "$B/tmp" "$B/cs" "$B/pw"; B=$(cd "$B" && pwd); export TMPDIR=$B/tmp
if ! command -v chromium >/dev/null || ! command -v rg >/dev/null || ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential python3 libkrb5-dev libsecret-1-dev ripgrep chromium >/dev/null
fi
if [[ ! -f $B/cs/node_modules/code-server/out/node/entry.js ]]; then
  # @vscode/ripgrep downloads rg from GitHub unless its cache under $TMPDIR already holds the archive.
  mkdir -p "$B/rg" "$TMPDIR/vscode-ripgrep-cache-1.15.11" && cp /usr/bin/rg "$B/rg/rg"
  tar czf "$TMPDIR/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$B/rg" rg
  cd "$B/cs" && echo '{"name":"cs","private":true}' > package.json
  # npm_config_yes: node-pty's postinstall runs `npx node-gyp configure`.
  npm_config_yes=true npm install --no-audit --no-fund code-server@4.100.3 --unsafe-perm >/dev/null
fi
if [[ ! -d $B/pw/node_modules/playwright-core ]]; then
  cd "$B/pw" && echo '{"name":"pw","private":true}' > package.json && npm install --no-audit --no-fund playwright-core@1.65.1 >/dev/null
fi
echo "code-server: $B/cs/node_modules/code-server/out/node/entry.js"
echo "playwright-core: $B/pw/node_modules/playwright-core"
