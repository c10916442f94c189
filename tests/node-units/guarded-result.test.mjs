// Report Outcome reads the guarded node's result from what n8n put in the item. Nodes like the
// OpenAI node put only the message of n8n's NodeApiError there ({ error: message }): its message
// table is read back to the status. The errors are built here by the real n8n-workflow of both
// installed n8n versions, so a change of n8n's wording fails this test rather than miscounting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, VERSIONS } from '../support/n8n.mjs';

const require = createRequire(import.meta.url);
const { guardedResult } = require(path.join(ROOT, 'dist/lib/guard/guardedResult.js'));
const CACHE = path.join(process.env.HOME, '.cache/n8n-nodes-resilient-provider-call');
const node = {
	id: 'n',
	name: 'Guarded',
	type: 'x',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

for (const version of Object.values(VERSIONS)) {
	const pkg = path.join(CACHE, `n8n-${version}/node_modules/n8n-workflow/package.json`);
	test(`n8n ${version}: a NodeApiError's message alone gives back its status or network code`, () => {
		assert.ok(existsSync(pkg), `n8n ${version} is not installed (scripts/lib/n8n-install.sh)`);
		const { NodeApiError } = createRequire(pkg)('n8n-workflow');
		for (const status of [400, 401, 402, 403, 404, 405, 429, 500, 502, 503, 504]) {
			const e = new NodeApiError(node, { message: 'upstream', httpCode: String(status) });
			const r = guardedResult({ json: { error: e.message } }, 1);
			assert.deepEqual(r.outcome, { kind: 'status', status }, `${status}: ${e.message}`);
			assert.equal(r.failed, true);
		}
		// Statuses n8n names only by class: the class's first status stands for them.
		for (const [status, as] of [
			[418, 400],
			[599, 500],
		]) {
			const e = new NodeApiError(node, { message: 'upstream', httpCode: String(status) });
			assert.deepEqual(guardedResult({ json: { error: e.message } }, 1).outcome, {
				kind: 'status',
				status: as,
			});
		}
		for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']) {
			const e = new NodeApiError(node, { message: `connect ${code}`, code });
			assert.deepEqual(
				guardedResult({ json: { error: e.message } }, 1).outcome,
				{ kind: 'error', code },
				`${code}: ${e.message}`,
			);
		}
	});
}

test('the item tells its path: main output is a success, whatever its JSON holds', () => {
	const ok = guardedResult({ json: { error: null, data: 1 } }, 0);
	assert.deepEqual(ok, { failed: false, outcome: { kind: 'status', status: 200 }, from: 'main' });
	// Continue (regular output): n8n's own error item on the main output.
	assert.equal(guardedResult({ json: { error: 'boom' } }, 0).failed, true);
});

test('an error-output item gives the status or code n8n recorded, wherever it put it', () => {
	const cases = [
		[
			{ error: { httpCode: '503', message: 'x' }, n: 1 },
			{ kind: 'status', status: 503 },
		],
		[
			{ error: { message: 'x' }, details: { httpCode: '502' } },
			{ kind: 'status', status: 502 },
		],
		[{ error: { statusCode: 429 } }, { kind: 'status', status: 429 }],
		[{ error: { response: { status: 504 } } }, { kind: 'status', status: 504 }],
		[
			{ error: { code: 'ECONNRESET', message: 'socket hang up' } },
			{ kind: 'error', code: 'ECONNRESET' },
		],
		[{ error: 'something n8n has no status for' }, { kind: 'error', code: 'NODE_ERROR' }],
	];
	for (const [json, outcome] of cases)
		assert.deepEqual(guardedResult({ json }, 1).outcome, outcome, JSON.stringify(json));
});
