// Two separately started processes draw different jitter sequences (no constant default seed):
// the backoff waits the shipped engine gives 20 items after a 503, in two processes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const pkg = fileURLToPath(new URL('../../pkg/engine.js', import.meta.url));
const constants = fileURLToPath(new URL('../../dist/lib/engineConstants.js', import.meta.url));
const draw = `
const { Engine } = require(${JSON.stringify(pkg)});
const { ROW_KINDS, ROW_SEPARATOR } = require(${JSON.stringify(constants)});
const eng = new Engine({ providers: [{ name: 'a' }], base_ms: 400, cap_ms: 20000 });
const waits = Array.from({ length: 20 }, (_, i) => {
	const item = eng.item(0, 'h' + i, '');
	item.poll(0, ROW_KINDS.map(() => '').join(ROW_SEPARATOR));
	return item.outcome(1, { kind: 'status', status: 503 }).sleep_ms;
});
console.log(JSON.stringify(waits));`;

test('two processes produce different sequences', () => {
	const a = execFileSync(process.execPath, ['-e', draw]).toString();
	const b = execFileSync(process.execPath, ['-e', draw]).toString();
	assert.notEqual(a, b);
	assert.ok(
		JSON.parse(a).every((w) => w >= 0 && w <= 400),
		`first retry waits within U(0, 400): ${a}`,
	);
});
