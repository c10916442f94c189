// The names, codes and store defaults TypeScript needs are the engine's, generated into
// n8n-node/lib/engineConstants.ts (`cargo run --bin engine-constants`). A hand-typed copy of one
// of them elsewhere in n8n-node/ can drift from the engine unnoticed: this test finds every one.
// The pattern is first checked against the kind of line it exists to catch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { nodeSources } from './node-sources.mjs';

const require = createRequire(import.meta.url);
const C = require('../../dist/lib/engineConstants.js');

/** Every string the engine generates for TypeScript: a quoted copy of one is a hand-typed copy. */
const VALUES = [
	C.DEADLINE_CODE,
	C.IDLE_TIMEOUT_CODE,
	C.STORE_DEFAULTS.keyPrefix,
	C.STORE_DEFAULTS.tableName,
	...C.COUNTER_NAMES,
	...C.REASON_CODES,
];
const quoted = (v) => new RegExp(`(['"\`])${v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\1`);

test('the pattern catches a hand-typed copy and spares a use of the constant', () => {
	assert.match("? { kind: 'error', code: 'TIMEOUT' }", quoted(C.DEADLINE_CODE));
	assert.match("prefix = 'rpc:',", quoted(C.STORE_DEFAULTS.keyPrefix));
	assert.match('give_ups: c["give_ups"] ?? 0,', quoted('give_ups'));
	assert.doesNotMatch('code: DEADLINE_CODE', quoted(C.DEADLINE_CODE));
	assert.doesNotMatch("code: 'TIMEOUT_SOON'", quoted(C.DEADLINE_CODE));
});

test("n8n-node/ types none of the engine's generated names, codes or store defaults by hand", () => {
	const found = [];
	for (const { at, line } of nodeSources().lines)
		for (const v of VALUES) if (quoted(v).test(line)) found.push(`${at}: '${v}': ${line.trim()}`);
	assert.deepEqual(found, [], 'import it from lib/engineConstants.ts:\n' + found.join('\n'));
});
