// The dashboard webview as shipped, for headless Chromium: the markup and style of extension/src/dashboard.ts
// and the bundle of dashboard/main.ts as the build makes it (browser, iife), with a stand-in for VS Code's
// webview API that keeps what the webview posts to the host in `window.sent`.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const ROOT = path.join(__dirname, '..', '..', '..');

/** Writes the page and its script into `dir`; returns the page's path. */
export async function writeDashboardPage(dir: string): Promise<string> {
  await esbuild.build({
    entryPoints: [path.join(ROOT, 'extension/src/dashboard/main.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    outfile: path.join(dir, 'dashboard.js'),
    logLevel: 'warning',
  });
  const source = readFileSync(path.join(ROOT, 'extension/src/dashboard.ts'), 'utf8');
  const body = /<body>([\s\S]*?)<script nonce/.exec(source)![1]!;
  const style = /<style nonce="\$\{nonce\}">([\s\S]*?)<\/style>/.exec(source)![1]!;
  const page = path.join(dir, 'index.html');
  writeFileSync(
    page,
    `<!DOCTYPE html><html><head><style>${style}</style></head><body>${body}
<script>window.sent = []; window.acquireVsCodeApi = () => ({ postMessage: (m) => window.sent.push(m) });</script>
<script src="dashboard.js"></script></body></html>`,
  );
  return page;
}
