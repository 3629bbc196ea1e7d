#!/bin/bash
# `npm run test:e2e`: the extension in a real VS Code (code-server 4.100.3, installed offline by the shared
# recipe into .e2e/), driven by Playwright through Chromium as a user would. Builds and installs the .vsix,
# opens a copy of the fixture workspace, runs e2e.mjs; screenshots land in .e2e/artifacts/.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
E2E=${REWARDSMITH_E2E_DIR:-$ROOT/.e2e}
RECIPE=${REWARDSMITH_E2E_RECIPE:-$ROOT/extension/test/e2e/setup-vscode.sh}
START=$(date +%s)
cd "$ROOT"

mkdir -p "$E2E" && bash "$RECIPE" "$E2E" >"$E2E/setup.log" 2>&1 || { cat "$E2E/setup.log"; exit 1; }

# A fresh install of the .vsix exactly as a user gets it.
npm run --silent package
VERSION=$(node -p "require('./package.json').version")
rm -rf "$E2E/ext" "$E2E/ud" "$E2E/ws" "$E2E/artifacts"
mkdir -p "$E2E/ext/rewardsmith.rewardsmith-$VERSION" "$E2E/ud/User" "$E2E/artifacts"
unzip -q "rewardsmith-$VERSION.vsix" 'extension/*' -d "$E2E/ext/unpack"
mv "$E2E/ext/unpack/extension/"* "$E2E/ext/rewardsmith.rewardsmith-$VERSION/" && rm -rf "$E2E/ext/unpack"
cp -r extension/test/e2e/fixtures/workspace "$E2E/ws"
cat >"$E2E/ud/User/settings.json" <<'JSON'
{ "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off", "workbench.tips.enabled": false,
  "security.workspace.trust.enabled": false, "extensions.ignoreRecommendations": true, "update.mode": "none",
  "window.restoreWindows": "none", "chat.disableAIFeatures": true, "git.enabled": false,
  "git.openRepositoryInParentFolders": "never" }
JSON

# No LLM: the test also checks the message a user without one gets.
unset OPENAI_API_KEY OPENAI_BASE_URL REWARDSMITH_MODEL
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
# Its own process group (setsid) so that teardown also ends the extension host, the language server and the runner.
setsid node "$E2E/cs/node_modules/code-server/out/node/entry.js" --bind-addr "127.0.0.1:$PORT" --auth none \
  --disable-telemetry --disable-update-check --disable-workspace-trust --user-data-dir "$E2E/ud" \
  --extensions-dir "$E2E/ext" "$E2E/ws" >"$E2E/artifacts/code-server.log" 2>&1 &
CS_PID=$!
teardown() { kill -- -"$CS_PID" 2>/dev/null || true; sleep 1; kill -9 -- -"$CS_PID" 2>/dev/null || true; }
trap teardown EXIT
for _ in $(seq 1 60); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 1; done

RC=0
E2E_PLAYWRIGHT="$E2E/pw/node_modules/playwright-core" E2E_URL="http://127.0.0.1:$PORT/?folder=$E2E/ws" E2E_WORKSPACE="$E2E/ws" \
  E2E_ARTIFACTS="$E2E/artifacts" node extension/test/e2e/e2e.mjs || RC=$?
# The extension's own logs, for a failure's post-mortem.
find "$E2E/ud/logs" -name '*Rewardsmith*' -exec cp {} "$E2E/artifacts/" \; 2>/dev/null || true
echo "e2e: $([[ $RC == 0 ]] && echo passed || echo FAILED) in $(( $(date +%s) - START )) s; screenshots in $E2E/artifacts"
exit $RC
