// The language server in an editor that is not VS Code: Debian's Neovim (0.7, headless) runs
// `rewardsmith lsp --stdio` with the configuration the README gives, and gets diagnostics, a hover, completion
// and a quick fix that it applies to the file. (.ci/run installs neovim; elsewhere the test is skipped.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cliNodeArgs } from '../../runner/test/helpers/cli-process';
import { seedProbeBank } from '../../runner/test/helpers/probe-bank';
import { tempDir } from '../../runner/test/helpers/tmp';

const ROOT = path.join(__dirname, '..', '..');
const NVIM = ['/usr/bin/nvim', '/usr/local/bin/nvim'].find((p) => existsSync(p));

const REWARD = `// task: approach-tree
export function reward_function(current_nearest_blocks, previous_nearest_blocks, inventory_change, health, past_agent_positions, GLOBAL_DATA) {
  const log = current_nearest_blocks['oak_lgo'];
  if (log !== undefined && log[0] < 1) return 1;
  return 0;
}
`;

test('Neovim (headless) gets diagnostics, hover and completion from rewardsmith lsp --stdio and applies a quick fix', { timeout: 180_000 }, async (t) => {
  if (!NVIM) {
    if (process.env.CI) assert.fail("nvim is missing: .ci/run installs Debian's neovim");
    t.skip('nvim not installed (apt-get install neovim)');
    return;
  }
  const dir = tempDir('rewardsmith-nvim-');
  // Neovim gets a cache folder of its own (XDG_CACHE_HOME, the server's too), holding this machine's probe bank.
  seedProbeBank(dir, 'approach-tree');
  const file = path.join(dir, 'tree.reward.ts');
  writeFileSync(file, REWARD);
  const out = path.join(dir, 'result.json');
  const line = 2;
  const text = REWARD.split('\n')[line]!;
  const cmd = [process.execPath, ...(await cliNodeArgs()), 'lsp', '--stdio'];
  const r = spawnSync(NVIM, ['--headless', '--noplugin', '-u', 'NONE', '-i', 'NONE', '-c', `luafile ${path.join(__dirname, 'neovim', 'drive.lua')}`], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 170_000,
    env: {
      ...process.env,
      RS_LSP_CMD: JSON.stringify(cmd),
      RS_FILE: file,
      RS_OUT: out,
      RS_LINE: String(line),
      RS_HOVER_CHAR: String(text.indexOf('current_nearest_blocks') + 3),
      RS_COMPLETE_CHAR: String(text.indexOf('oak_lgo') + 3),
      XDG_CONFIG_HOME: dir,
      XDG_DATA_HOME: dir,
      XDG_STATE_HOME: dir,
      XDG_CACHE_HOME: dir,
    },
  });
  assert.ok(existsSync(out), `Neovim wrote no result (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  const result = JSON.parse(readFileSync(out, 'utf8')) as {
    version: string;
    log: string[];
    diagnostics: { code: string; message: string; range: { start: { line: number } } }[];
    hover: { contents: { value?: string } | string } | null;
    completion: string[];
    actions: string[];
    applied?: string;
  };
  assert.deepEqual(result.log, []);
  const unknown = result.diagnostics.find((d) => d.code === 'unknown-name');
  assert.ok(unknown, JSON.stringify(result.diagnostics));
  assert.equal(unknown.range.start.line, line);
  assert.match(unknown.message, /oak_lgo/);
  const hover = typeof result.hover?.contents === 'string' ? result.hover.contents : (result.hover?.contents.value ?? '');
  assert.match(hover, /current_nearest_blocks/);
  assert.ok(result.completion.includes('oak_log'), `completion: ${result.completion.slice(0, 20).join(', ')}`);
  assert.match(result.applied ?? '', /oak_log/);
  assert.equal(readFileSync(file, 'utf8').split('\n')[line], text.replace('oak_lgo', 'oak_log'));
});

/** README's Neovim 0.7–0.9 snippet, as written (the first Lua block after its heading). */
function readmeSnippet(): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const from = readme.indexOf('Neovim 0.7–0.9');
  const block = /```lua\n([\s\S]*?)```/.exec(readme.slice(from));
  assert.ok(from >= 0 && block, 'README has no Neovim 0.7–0.9 snippet');
  return block[1]!;
}

test("README's Neovim 0.7–0.9 snippet as written: the checkout's CLI, one server for a workspace however often buffers switch", { timeout: 240_000 }, (t) => {
  if (!NVIM) {
    if (process.env.CI) assert.fail("nvim is missing: .ci/run installs Debian's neovim");
    t.skip('nvim not installed (apt-get install neovim)');
    return;
  }
  // A workspace (it holds .git) with reward files in two of its folders.
  const dir = tempDir('rewardsmith-nvim-snippet-');
  seedProbeBank(dir, 'approach-tree');
  mkdirSync(path.join(dir, '.git'));
  const files = ['a/tree.reward.ts', 'b/other.reward.ts'].map((f) => {
    const file = path.join(dir, f);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, REWARD);
    return file;
  });
  const init = path.join(dir, 'init.lua');
  writeFileSync(init, readmeSnippet());
  const out = path.join(dir, 'result.json');
  const r = spawnSync(NVIM, ['--headless', '--noplugin', '-u', init, '-i', 'NONE', '-c', `luafile ${path.join(__dirname, 'neovim', 'snippet-drive.lua')}`], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 230_000,
    env: {
      ...process.env,
      // Where the snippet finds the checkout (its default is ~/rewardsmith); node is the one running this test.
      REWARDSMITH_CHECKOUT: ROOT,
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      RS_FILES: JSON.stringify(files),
      RS_OUT: out,
      XDG_CONFIG_HOME: dir,
      XDG_DATA_HOME: dir,
      XDG_STATE_HOME: dir,
      XDG_CACHE_HOME: dir,
    },
  });
  assert.ok(existsSync(out), `Neovim wrote no result (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  const result = JSON.parse(readFileSync(out, 'utf8')) as { log: string[]; clients: number; attached: number[][]; diagnosed: boolean[] };
  assert.deepEqual(result.log, []);
  assert.equal(result.clients, 1, 'one server for the workspace, not one per BufEnter');
  assert.deepEqual(result.diagnosed, [true, true], 'the server of the checkout answers for both files');
  assert.equal(result.attached[0]!.length, 1);
  assert.deepEqual(result.attached[1], result.attached[0], 'both files share the client');
});
