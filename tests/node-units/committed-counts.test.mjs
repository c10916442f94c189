// Seed 002's operator reads `resilient_provider_transitions_total` from the store: a transition
// is counted by the write that makes it, once that write commits (the engine's
// `RowWrites.counts`). A write that loses its race counts nothing; the transition is counted
// by whichever writer's rows made it, never twice across the fleet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { CounterDeltas } = require('../../dist/lib/counters.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const config = { providers: [{ name: 'dead' }, { name: 'live' }], threshold: 1, max_attempts: 1 };

/** A store whose first write is beaten: `rival` says what the other writer did first. */
function beatenOnce(scope, rival) {
	const inner = new MemoryStore(scope);
	let first = true;
	const racing = {
		read: (k) => inner.read(k),
		write: async (key, rows, event) => {
			if (!first) return inner.write(key, rows, event);
			first = false;
			await rival(inner, key, rows, event);
			return false;
		},
		now: () => inner.now(),
		reset: (k) => inner.reset(k),
		addCounters: (d) => inner.addCounters(d),
		readCounters: (k) => inner.readCounters(k),
	};
	return { inner, store: new FailoverStore(racing, scope, 1000, true) };
}

async function oneItem(store, scope) {
	const plan = {
		requests: ['dead', 'live'].map((name) => ({
			name,
			url: `http://127.0.0.1/${name}`,
			method: 'GET',
		})),
		keys: [null, null],
		scope,
	};
	return runItem({
		call: async (req) => ({
			outcome: { kind: 'status', status: req.name === 'dead' ? 500 : 200, headers: {} },
			body: {},
			ms: 1,
		}),
		logger: quiet,
		engine: new Engine(config),
		store,
		plan,
		secrets: {},
		correlationId: 'x:0',
	});
}

async function countedTransitions(result, inner, scope) {
	const deltas = new CounterDeltas();
	deltas.add(scope, ['dead', 'live'], result.counters, result.committed);
	await deltas.write(() => new FailoverStore(inner, scope, 1000, true));
	const c = await inner.readCounters(['dead', 'live']);
	return [c.dead.transitions ?? 0, c.live.transitions ?? 0];
}

test('the breaker opens on a write that lost once and then committed: one transition counted', async () => {
	const scope = `committed-${process.pid}-a`;
	const { inner, store } = beatenOnce(scope, async () => {}); // the rival wrote something else
	const r = await oneItem(store, scope);
	assert.equal(r.casRetries, 1);
	assert.deepEqual(
		r.transitions.map((t) => [t.provider, t.to]),
		[['dead', 'open']],
	);
	assert.deepEqual(await countedTransitions(r, inner, scope), [1, 0]);
});

test('the rival opened the breaker first: this item counts no transition, its calls still count', async () => {
	const scope = `committed-${process.pid}-b`;
	// The other worker recorded the same failure first: its rows (and its transition) stand.
	const { inner, store } = beatenOnce(scope, (s, key, rows, event) => s.write(key, rows, event));
	const r = await oneItem(store, scope);
	assert.equal(r.casRetries, 1);
	assert.deepEqual(r.committed, [], 'the lost write made the transition, not this item');
	assert.deepEqual(r.transitions, []);
	assert.equal(r.end.kind, 'done');
	assert.deepEqual(await countedTransitions(r, inner, scope), [0, 0]);
	const c = await inner.readCounters(['dead', 'live']);
	assert.deepEqual([c.dead.calls, c.live.calls], [1, 1], 'both calls were made and counted');
});
