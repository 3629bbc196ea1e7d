// The analyzer findings' tests, written beside each finding (runner/src/analyze/findings/<id>.test.ts), run in
// one process: on its own each file loads TypeScript, the lint rules and the game data again, about 3.5
// CPU-seconds apiece, ten times over. Run one alone with `node --import tsx --test <its path>`.
import { readdirSync } from 'node:fs';
import path from 'node:path';

const FINDINGS = path.join(__dirname, '../src/analyze/findings');
const files = readdirSync(FINDINGS).filter((f) => f.endsWith('.test.ts'));
for (const file of files.sort()) require(path.join(FINDINGS, file));
