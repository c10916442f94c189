// Report Outcome hands the engine what n8n put in the item, unread. Nodes like the OpenAI node
// put only the message of n8n's NodeApiError there ({ error: message }): the engine reads its
// message table back to the status. The errors are built here by the real n8n-workflow of both
// installed n8n versions, so a change of n8n's wording fails this test rather than miscounting;
// each case is judged by what the engine reads it as (engine-reading.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT, VERSIONS } from '../support/n8n.mjs';
import { readAs, servedAs } from './engine-reading.mjs';

const require = createRequire(import.meta.url);
const { guardedOutcome } = require(path.join(ROOT, 'dist/lib/guard/guardedOutcome.js'));
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
			const r = guardedOutcome({ json: { error: e.message } }, 1);
			assert.equal(readAs(r).outcome, String(status), `${status}: ${e.message}`);
			assert.equal(servedAs(r), false, 'an error item is not served');
		}
		// Statuses n8n names only by class: an unknown status of that class, not its first one
		// (a 529 is no 500): a 5XX is retried and counted, a 4XX neither.
		for (const [status, as] of [
			[418, { outcome: '4XX', health: 'neutral', retried: false, retryAfter: false }],
			[529, { outcome: '5XX', health: 'failure', retried: true, retryAfter: false }],
		]) {
			const e = new NodeApiError(node, { message: 'upstream', httpCode: String(status) });
			assert.deepEqual(readAs(guardedOutcome({ json: { error: e.message } }, 1)), as);
		}
		// The error as n8n hands it on (item.error, the NodeApiError itself): its status as
		// received decides. Its JSON (toJSON, what run data keeps) drops httpCode and keeps only
		// the message: a 408 then reads as n8n's 4XX class text, a 529 as 5XX, a 429 by its own.
		for (const [status, held, asJson] of [
			[408, ['408', 'failure', true], ['4XX', 'neutral', false]],
			[429, ['429', 'neutral', true], ['429', 'neutral', true]],
			[529, ['529', 'failure', false], ['5XX', 'failure', true]],
		]) {
			const e = new NodeApiError(node, { message: 'upstream', httpCode: String(status) });
			const read = (item) => {
				const r = readAs(guardedOutcome(item, 1));
				return [r.outcome, r.health, r.retried];
			};
			assert.deepEqual(read({ json: {}, error: e }), held, `${status} as n8n hands it on`);
			assert.deepEqual(
				read({ json: { error: JSON.parse(JSON.stringify(e)) } }),
				asJson,
				`${status}`,
			);
		}
		const reset = new NodeApiError(node, { message: 'socket hang up', code: 'ECONNRESET' });
		assert.deepEqual(
			readAs(guardedOutcome({ json: { error: JSON.parse(JSON.stringify(reset)) } }, 1)),
			{ outcome: 'ECONNRESET', health: 'failure', retried: true, retryAfter: false },
		);
		for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN']) {
			const e = new NodeApiError(node, { message: `connect ${code}`, code });
			assert.equal(
				readAs(guardedOutcome({ json: { error: e.message } }, 1)).outcome,
				code,
				`${code}: ${e.message}`,
			);
		}
	});
}

test('the item tells its path: main output is an answer, whatever its JSON holds', () => {
	const ok = guardedOutcome({ json: { error: null, data: 1, statusCode: 503 } }, 0);
	assert.equal(servedAs(ok), true);
	assert.equal(readAs(ok).outcome, '200', 'a statusCode in the data is not a status');
	// The HTTP Request node's full response: the status it was answered with.
	const full = { body: {}, headers: { 'retry-after': '1' }, statusCode: 429, statusMessage: 'x' };
	assert.equal(readAs(guardedOutcome({ json: full }, 0)).outcome, '429');
	// An answer on the main output that is no success (Never Error) did not serve the item.
	for (const statusCode of [503, 429, 404])
		assert.equal(servedAs(guardedOutcome({ json: { ...full, statusCode } }, 0)), false);
	assert.equal(servedAs(guardedOutcome({ json: { ...full, statusCode: 200 } }, 0)), true);
	// Continue (regular output): n8n's own error item on the main output.
	assert.equal(servedAs(guardedOutcome({ json: { error: 'boom' } }, 0)), false);
});

test('an error-output item gives the status or code n8n recorded, wherever it put it', () => {
	const cases = [
		[{ error: { httpCode: '503', message: 'x' }, n: 1 }, '503'],
		[{ error: { message: 'x' }, details: { httpCode: '502' } }, '502'],
		[{ error: { statusCode: 429 } }, '429'],
		[{ error: { response: { status: 504 } } }, '504'],
		[{ error: { httpCode: '529', message: 'x' } }, '529'],
		[{ error: { code: 'ECONNRESET', message: 'socket hang up' } }, 'ECONNRESET'],
		[{ error: { code: 'EAI_AGAIN', message: 'getaddrinfo EAI_AGAIN x' } }, 'EAI_AGAIN'],
		[{ error: 'something n8n has no status for' }, 'EUNKNOWN'],
	];
	for (const [json, label] of cases)
		assert.equal(readAs(guardedOutcome({ json }, 1)).outcome, label, JSON.stringify(json));
});
