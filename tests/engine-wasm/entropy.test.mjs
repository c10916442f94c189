// Two separately started processes draw different jitter sequences (no constant default seed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('../../pkg/engine.js', import.meta.url));
const draw = `const e=require(${JSON.stringify(pkg)});console.log(JSON.stringify(Array.from({length:20},(_, i)=>e.backoffDelay('full_jitter',400,20000,5,0))))`;

test('two processes produce different sequences', () => {
	const a = execFileSync(process.execPath, ['-e', draw]).toString();
	const b = execFileSync(process.execPath, ['-e', draw]).toString();
	assert.notEqual(a, b);
});
