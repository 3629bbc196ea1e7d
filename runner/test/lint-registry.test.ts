// The lint registry lists every rule file once, and every rule has its tests beside it.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { RULES, ruleMeta } from '../src/lint/rules';

const dir = path.join(__dirname, '..', 'src', 'lint', 'rules');
const ruleFiles = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => f.replace(/\.ts$/, ''));

test('every rule file is registered under its own id, once, with its tests beside it', () => {
  const ids = RULES.map((r) => r.meta.id);
  assert.equal(new Set(ids).size, ids.length, 'ids are unique');
  assert.deepEqual([...ruleFiles].sort(), [...ids].sort(), 'rules/<id>.ts for each registered rule, and no unregistered rule file');
  for (const id of ids) assert.ok(existsSync(path.join(dir, `${id}.test.ts`)), `rules/${id}.test.ts`);
  assert.equal(RULES[RULES.length - 1]!.meta.id, 'typescript', "TypeScript's own errors run last (they are dropped where a rule already explains the spot)");
  assert.equal(ruleMeta('unknown-name')?.severity, 'error');
  assert.equal(ruleMeta('ts2322'), undefined);
});

// The rules' tests run here, all in this one process: as a process each, every file paid TypeScript's and the
// schema's start-up again (about 4 CPU-seconds a file, 25 files). `node --import tsx --test
// runner/src/lint/rules/<id>.test.ts` still runs one rule's alone.
for (const id of RULES.map((r) => r.meta.id)) require(path.join(dir, `${id}.test.ts`));
