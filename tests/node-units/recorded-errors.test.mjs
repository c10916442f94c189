// What the engine reads each error n8n's own clients produced, recorded against loopback vendors
// by scripts/record-error-fixtures.mjs into fixtures/client-errors.json; no n8n, no servers here:
// - n8n 1 and 2's ChatOpenAI and ChatAnthropic threw them; the chat model's reader
//   (lib/chat/outcome.ts) hands them over as a model call is: a POST that says it is safe to
//   repeat. The errors are rebuilt field by field down their cause chains, headers as kept.
// - n8n 1 and 2's HTTP Request node put them in its items (On Error: Continue (using error
//   output), full response off and on); Report Outcome's reader (lib/guard/guardedOutcome.ts)
//   hands over the item and the output it left on, as README's outcome table counts them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readAs, servedAs } from './engine-reading.mjs';

const require = createRequire(import.meta.url);
const { outcomeOfModelError } = require('../../dist/lib/chat/outcome.js');
const { guardedOutcome } = require('../../dist/lib/guard/guardedOutcome.js');
const { fixtures: all } = require('./fixtures/client-errors.json');
const HTTP = '/http-request/';
const fixtures = Object.fromEntries(Object.entries(all).filter(([k]) => !k.includes(HTTP)));
const httpItems = Object.entries(all).filter(([k]) => k.includes(HTTP));

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

// [outcome, health, retried, failed] by case, full response off or on, whichever major ran it.
// n8n's HTTP Request node keeps no response header on its error output (a Retry-After is lost
// there), and a reset reaches the item as n8n's bare "aborted".
const HTTP_EXPECTED = {
	408: ['408', 'failure', true, true],
	'429 with Retry-After': ['429', 'neutral', true, true],
	// Counted against health; not retried: *Retryable Statuses* lists 500, 502, 503 and 504.
	529: ['529', 'failure', false, true],
	500: ['500', 'failure', true, true],
	'503 with Retry-After': ['503', 'failure', true, true],
	'connection reset': ['ECONNRESET', 'failure', true, true],
	'connection refused': ['ECONNREFUSED', 'failure', true, true],
	200: ['200', 'success', false, false],
	'200 full response': ['200', 'success', false, false],
};

test("every item n8n's HTTP Request node put out is read and counted as README's outcome table says", () => {
	assert.equal(httpItems.length, 2 * 2 * 8, `${httpItems.length} recorded items`);
	const wrong = [];
	for (const [key, { fromOutput, item }] of httpItems) {
		const name = key.split(HTTP)[1];
		const expected = HTTP_EXPECTED[name] ?? HTTP_EXPECTED[name.replace(/ full response$/, '')];
		assert.ok(expected, `no expectation for ${key}`);
		const outcome = guardedOutcome(item, fromOutput);
		const read = readAs(outcome);
		// The last: Report Outcome sends it to `failed` (the engine did not read a success).
		const got = [read.outcome, read.health, read.retried, !servedAs(outcome)];
		if (JSON.stringify(got) !== JSON.stringify(expected))
			wrong.push(`${key}: ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
	}
	assert.deepEqual(wrong, []);
});
