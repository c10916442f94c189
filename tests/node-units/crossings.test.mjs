// The boundary is narrow: the node's item loop (dist/lib/runItem.js) crosses into the engine at
// most twice per attempt (poll, outcome) over a chain with retries, a fallback and a half-open
// probe. Every engine export is wrapped in a counting proxy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/runItem.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** Wraps an object's methods so every call is counted under `label.method`. */
function counted(target, label, counts, wrapResult = {}) {
	return new Proxy(target, {
		get(t, prop) {
			const v = t[prop];
			if (typeof v !== 'function') return v;
			return (...args) => {
				const name = `${label}.${String(prop)}`;
				counts[name] = (counts[name] ?? 0) + 1;
				const r = v.apply(t, args);
				return wrapResult[prop] ? wrapResult[prop](r) : r;
			};
		},
	});
}

test('at most two engine calls per attempt: retries, a fallback and a half-open probe', async () => {
	const scope = `crossings-${process.pid}`;
	const counts = {};
	const raw = new Engine({
		providers: [{ name: 'dead' }, { name: 'flaky', threshold: 10 }],
		threshold: 2,
		open_ms: 40,
		base_ms: 1,
		cap_ms: 5,
		max_attempts: 3,
	});
	const engine = counted(raw, 'engine', counts, {
		item: (item) => counted(item, 'item', counts),
	});
	let flakyCalls = 0;
	const answers = {
		dead: () => 500,
		flaky: () => (++flakyCalls % 3 === 0 ? 200 : 503), // two 503s, then 200, again and again
	};
	const plan = {
		requests: ['dead', 'flaky'].map((name) => ({
			name,
			url: `http://127.0.0.1/${name}`,
			method: 'GET',
		})),
		keys: [null, null],
		scope,
	};
	let attempts = 0;
	const results = [];
	for (let i = 0; i < 3; i++) {
		const r = await runItem({
			call: async (req) => {
				attempts++;
				return {
					outcome: { kind: 'status', status: answers[req.name](), headers: {} },
					body: {},
					ms: 1,
				};
			},
			logger: quiet,
			engine,
			store: new FailoverStore(new MemoryStore(scope), scope, 1000, true),
			plan,
			secrets: {},
			correlationId: `x:${i}`,
		});
		results.push(r);
		await new Promise((resolve) => setTimeout(resolve, 60)); // the open window ends: a probe next
	}
	assert.deepEqual(
		results.map((r) => [r.end.kind, r.end.name]),
		[
			['done', 'flaky'],
			['done', 'flaky'],
			['done', 'flaky'],
		],
	);
	const all = results.flatMap((r) => r.attempts);
	assert.equal(all.length, attempts);
	assert.ok(
		all.some((a) => a.probe),
		'a half-open probe was among the attempts',
	);
	assert.ok(
		all.some((a) => a.attempt > 1),
		'retries on one provider',
	);
	const perAttempt =
		(counts['item.poll'] ?? 0) + (counts['item.outcome'] ?? 0) + (counts['item.rerecord'] ?? 0);
	assert.ok(
		perAttempt <= 2 * attempts,
		`${perAttempt} engine calls for ${attempts} attempts: ${JSON.stringify(counts)}`,
	);
	// Per item: one to start it, one to free it; nothing else crosses.
	assert.deepEqual(
		Object.keys(counts).sort(),
		['engine.item', 'item.free', 'item.outcome', 'item.poll'],
		JSON.stringify(counts),
	);
	assert.equal(counts['engine.item'], 3);
	console.log(
		`  ${attempts} attempts, ${perAttempt} poll/outcome calls: ${JSON.stringify(counts)}`,
	);
});
