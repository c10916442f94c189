// One shape for an item's outcome: Call Chain's items, the chat model's run entry, Check
// Provider's and Report Outcome's items take `_resilience` from one module (lib/resilience.ts),
// and an error under continue-on-fail is one item from every operation (lib/errorItem.ts). The
// store's part (fell back to memory, with the engine's warning; races lost; a dropped write)
// reads the same on all four, and every error item carries `reason` and a `correlationId`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { runData, checkedData, reportedData } = require('../../dist/lib/resilience.js');
const { itemFailed, nodeFailed } = require('../../dist/lib/errorItem.js');
const { Cancelled } = require('../../dist/lib/attemptAbort.js');
const { FailoverStore, StoreUnavailable } = require('../../dist/lib/store/failover.js');
const { NodeOperationError } = require('n8n-workflow');

const notes = {
	storeFallback: 'no answer within 2000 ms',
	storeWarning:
		"state store unavailable (no answer within 2000 ms): this item used this process's memory",
	casRetries: 2,
	droppedWrites: ['an outcome was not recorded'],
};
const storePart = (d) => ({
	storeFallback: d.storeFallback,
	casRacesLost: d.casRacesLost,
	warnings: d.warnings,
	correlationId: d.correlationId,
});
const expected = {
	storeFallback: notes.storeFallback,
	casRacesLost: 2,
	warnings: [notes.storeWarning, 'an outcome was not recorded'],
	correlationId: 'e:3',
};
const ticket = { name: 'a', probe: false };

test("Call Chain, the chat model, Check Provider and Report Outcome say the store's part the same way", () => {
	const ran = runData(
		{
			end: { kind: 'done', provider: 0, name: 'a', fallback: false },
			attempts: [],
			skipped: [],
			transitions: [],
			sleptMs: 0,
			totalMs: 1,
			...notes,
		},
		'e:3',
	);
	const checked = checkedData(
		{ kind: 'go', provider: 0, name: 'a', ticket, ticket_ttl_ms: 1 },
		{ skipped: [], transition: null },
		['a'],
		'e:3',
		notes,
	);
	const reported = reportedData(
		{ served: true, attempt: { health: 'success', outcome: '200' }, transition: null },
		ticket,
		'e:3',
		notes,
	);
	for (const [who, d] of [
		['Call Chain', ran],
		['Check Provider', checked],
		['Report Outcome', reported],
	])
		assert.deepEqual(storePart(d), expected, who);
	// The node's own warnings (Retry On Fail) come first.
	const warned = runData(
		{ ...ran, end: { kind: 'fail', reason: 'non_retryable' }, ...notes },
		'e:3',
		['Retry On Fail is on'],
	);
	assert.deepEqual(warned.warnings, ['Retry On Fail is on', ...expected.warnings]);
	assert.equal(warned.reason, 'non_retryable');
	assert.equal(
		reportedData({ served: false, attempt: {}, transition: null }, ticket, 'e:0', {}).outcome,
		'failed',
	);
});

/** Enough of n8n's IExecuteFunctions for an error item. */
function ctx({ continueOnFail = true, cancelled = false } = {}) {
	return {
		getNode: () => ({ name: 'Resilient', type: 'x', typeVersion: 2, parameters: {} }),
		getInputData: () => [{ json: { n: 0 } }, { json: { n: 1 } }],
		getExecutionId: () => 'exec7',
		continueOnFail: () => continueOnFail,
		getExecutionCancelSignal: () => ({ aborted: cancelled }),
	};
}

test('an error under continue-on-fail is one item wherever it happens: reason, message and correlationId', () => {
	const one = itemFailed(ctx(), 1, new Error('bad "Secret" sk-123'), { key: 'sk-123' });
	assert.deepEqual(one, {
		json: {
			n: 1,
			reason: 'node_error',
			error: 'bad "Secret" ***',
			_resilience: { outcome: 'failed', reason: 'node_error', correlationId: 'exec7:1' },
		},
		pairedItem: { item: 1 },
	});
	const all = nodeFailed(
		ctx(),
		new NodeOperationError(ctx().getNode(), 'Node: "Operation" is wrong'),
	);
	assert.deepEqual(all[0], []);
	assert.deepEqual(all[1], []);
	assert.deepEqual(
		all[2].map((i) => [i.json.reason, i.json._resilience.correlationId, i.pairedItem.item]),
		[
			['node_error', 'exec7:0', 0],
			['node_error', 'exec7:1', 1],
		],
	);
	assert.ok(all[2].every((i) => i.json.error === 'Node: "Operation" is wrong'));
});

test('without continue-on-fail the error is thrown, naming the item; a cancel is "Execution cancelled"', () => {
	assert.throws(
		() => itemFailed(ctx({ continueOnFail: false }), 1, new Error('boom')),
		(e) => e instanceof NodeOperationError && e.message === 'boom',
	);
	assert.throws(() => itemFailed(ctx(), 0, new Cancelled()), /Execution cancelled/);
	assert.throws(() => nodeFailed(ctx({ cancelled: true }), new Error('x')), NodeOperationError);
});

/** A shared store that never answers in time. */
const silent = {
	read: () => Promise.reject(new Error('no answer within 50 ms')),
	write: () => Promise.reject(new Error('no answer within 50 ms')),
	now: async () => Date.now(),
	reset: async () => undefined,
	addCounters: () => Promise.reject(new Error('no answer within 50 ms')),
	readCounters: async () => ({}),
};

test("a failed store: the engine's verdict, fail open with its warning or fail closed with its reason", async () => {
	const open = new FailoverStore(silent, 's', 50, true);
	const snap = await open.read(['a']);
	assert.ok(Array.isArray(snap.rows));
	assert.equal(open.degraded, 'no answer within 50 ms');
	assert.equal(
		open.warning,
		"state store unavailable (no answer within 50 ms): this item used this process's memory",
	);
	const closed = new FailoverStore(silent, 's', 50, false);
	await assert.rejects(
		closed.read(['a']),
		(e) => e instanceof StoreUnavailable && e.reason === 'store_unavailable',
	);
	// The counters' write fails over the same way.
	await assert.rejects(closed.addCounters({ a: { calls: 1 } }), StoreUnavailable);
	assert.equal(closed.degraded, undefined);
});

test("an item that failed its schema keeps every provider's last schema errors, each under its provider", () => {
	const miss = (name, attempt, path) => ({
		name,
		attempt,
		check: 'schema',
		errors: [{ path, message: 'm' }],
	});
	const failed = runData(
		{
			end: { kind: 'fail', reason: 'check_failed' },
			attempts: [
				miss('X', 1, '/a'),
				miss('X', 2, '/b'),
				miss('Y', 1, '/c'),
				{ name: 'Z', attempt: 1 },
			],
			skipped: [],
			transitions: [],
			sleptMs: 0,
			totalMs: 1,
			casRetries: 0,
		},
		'e:4',
	);
	assert.deepEqual(failed.validation_errors, [
		{ provider: 'X', path: '/b', message: 'm' },
		{ provider: 'Y', path: '/c', message: 'm' },
	]);
});
