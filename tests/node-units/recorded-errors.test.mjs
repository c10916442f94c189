// What the engine reads each error n8n's own chat-model clients threw (n8n 1 and 2's ChatOpenAI
// and ChatAnthropic against loopback vendors, recorded by scripts/record-error-fixtures.mjs into
// fixtures/client-errors.json), handed over by the chat model's reader (lib/chat/outcome.ts) as
// a model call is: a POST that says it is safe to repeat. The errors are rebuilt field by field
// down their cause chains, headers as the client kept them; no n8n, no servers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readAs } from './engine-reading.mjs';

const require = createRequire(import.meta.url);
const { outcomeOfModelError } = require('../../dist/lib/chat/outcome.js');
const { fixtures } = require('./fixtures/client-errors.json');

/** A recorded error as an Error again: its class's name, its fields, its cause. */
function revive(kept) {
	if (!kept || kept.value !== undefined) return kept?.value;
	const e = new Error(kept.message);
	Object.defineProperty(e, 'constructor', { value: { name: kept.class } });
	for (const [k, v] of Object.entries(kept))
		if (!['class', 'message', 'headers', 'cause'].includes(k)) e[k] = v;
	if (kept.headers)
		e.headers =
			kept.headers.kind === 'Headers'
				? new Headers(kept.headers.entries)
				: Object.fromEntries(kept.headers.entries);
	if (kept.cause) e.cause = revive(kept.cause);
	return e;
}

// [outcome, health, retried, retryAfter] by case, whichever major and client threw it.
const EXPECTED = {
	500: ['500', 'failure', true, false],
	'503 with its wait hint': ['503', 'failure', true, true],
	'429 with its wait hint': ['429', 'neutral', true, true],
	'400 context too long': ['400', 'neutral', false, false],
	401: ['401', 'neutral', false, false],
	'connection refused': ['ECONNREFUSED', 'failure', true, false],
	'resolver outage': ['EAI_AGAIN', 'failure', true, false],
};

test('every recorded client error is read as its case says, on both majors and both clients', () => {
	const cases = Object.keys(fixtures);
	assert.ok(cases.length >= 2 * 2 * Object.keys(EXPECTED).length, `${cases.length} fixtures`);
	const wrong = [];
	for (const [key, kept] of Object.entries(fixtures)) {
		const name = key.split('/').slice(2).join('/');
		assert.ok(EXPECTED[name], `no expectation for ${key}`);
		const r = readAs(outcomeOfModelError(revive(kept)), { method: 'POST', idempotent: true });
		const got = [r.outcome, r.health, r.retried, r.retryAfter];
		if (JSON.stringify(got) !== JSON.stringify(EXPECTED[name]))
			wrong.push(`${key}: ${JSON.stringify(got)}, expected ${JSON.stringify(EXPECTED[name])}`);
	}
	assert.deepEqual(wrong, []);
});
