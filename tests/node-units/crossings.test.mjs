// The boundary is narrow: the node's item loop (dist/lib/itemLoop.js) crosses into the engine
// twice per attempt (poll, outcome) over a chain with retries, a fallback and a half-open probe;
// a wait (the rate gate) adds one poll, a lost compare-and-set race one `raceLost` and one poll
// or rerecord (docs/architecture.md says so). Every engine export is wrapped in a counting proxy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { ROW_SEPARATOR, MAX_CAS_RACES } = require('../../dist/lib/engineConstants.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/** Waits until the provider's rows say its open window is over (the memory store's clock is
 * this process's), however long a loaded machine took to get here. */
async function untilOpenWindowEnds(engine, store, provider) {
	const snap = await store.read([provider]);
	const state = engine.inspect(snap.rows.join(ROW_SEPARATOR), snap.now);
	const wait = (state.open_until_ms ?? 0) - Date.now();
	if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 1));
}

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
		await untilOpenWindowEnds(raw, new MemoryStore(scope), 'dead'); // a probe next
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
	// Per item: one to start it, one to free it; per engine, one for the names its rows are read
	// under (its key's, where the chain has Key Quotas); nothing else crosses.
	assert.deepEqual(
		Object.keys(counts).sort(),
		['engine.item', 'engine.keyRow', 'item.free', 'item.outcome', 'item.poll'],
		JSON.stringify(counts),
	);
	assert.equal(counts['engine.item'], 3);
	assert.equal(counts['engine.keyRow'], 1, 'once per engine, not per item');
	console.log(
		`  ${attempts} attempts, ${perAttempt} poll/outcome calls: ${JSON.stringify(counts)}`,
	);
});

/** One provider answering 200, its engine counted; `store(scope)` builds each item's store. */
async function countedRun({ config, items, store }) {
	const scope = `crossings-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
	const counts = {};
	let waits = 0;
	const engine = counted(new Engine(config), 'engine', counts, {
		item: (item) =>
			counted(item, 'item', counts, {
				poll: (polled) => {
					if (polled.step?.kind === 'sleep') waits++;
					return polled;
				},
			}),
	});
	const name = config.providers[0].name;
	const plan = {
		requests: [{ name, url: `http://127.0.0.1/${name}`, method: 'GET' }],
		keys: [null],
		scope,
	};
	let attempts = 0;
	const results = [];
	for (let i = 0; i < items; i++) {
		results.push(
			await runItem({
				call: async () => {
					attempts++;
					return { outcome: { kind: 'status', status: 200, headers: {} }, body: {}, ms: 1 };
				},
				logger: quiet,
				engine,
				store: store(scope),
				plan,
				secrets: {},
				correlationId: `x:${i}`,
			}),
		);
	}
	return { counts, waits, attempts, results };
}

/** A store that loses the first `n` compare-and-set writes (another writer got there first). */
function losingFirst(n, failOpen = true) {
	let lost = 0;
	return (scope) => {
		const inner = new MemoryStore(scope);
		const racing = {
			read: (k) => inner.read(k),
			write: async (...args) => (lost++ < n ? false : inner.write(...args)),
			now: () => inner.now(),
			reset: (k) => inner.reset(k),
			addCounters: (d) => inner.addCounters(d),
			readCounters: (k) => inner.readCounters(k),
		};
		return new FailoverStore(racing, scope, 1000, failOpen);
	};
}

test('a rate-gate wait costs one more poll: two calls per attempt plus one per wait', async () => {
	// One request per 400 ms: the second and third items wait for the gate inside their budget
	// (a period a loaded machine's item cannot outlast: 40 ms let a slow item find the gate open).
	const { counts, waits, attempts } = await countedRun({
		config: { providers: [{ name: 'gated', rate_limit: { requests: 1, period_ms: 400 } }] },
		items: 3,
		store: (scope) => new FailoverStore(new MemoryStore(scope), scope, 1000, true),
	});
	assert.equal(attempts, 3);
	assert.ok(waits >= 2, `the gate made the later items wait: ${waits} waits`);
	assert.equal(counts['item.poll'], attempts + waits, JSON.stringify(counts));
	assert.equal(counts['item.outcome'], attempts);
	assert.equal(counts['engine.raceLost'], undefined);
	console.log(`  rate gate: ${attempts} attempts, ${waits} waits: ${JSON.stringify(counts)}`);
});

test('a lost race costs one raceLost and one rerecord or poll, nothing else', async () => {
	// Max In Flight: each poll writes its lease, each outcome releases it. Lose the first two.
	const { counts, attempts, results } = await countedRun({
		config: { providers: [{ name: 'contended', max_in_flight: 5 }] },
		items: 2,
		store: losingFirst(2),
	});
	const lost = results.reduce((n, r) => n + r.casRetries, 0);
	assert.equal(lost, 2, JSON.stringify(results.map((r) => r.casRetries)));
	assert.equal(counts['engine.raceLost'], lost);
	const again = (counts['item.poll'] ?? 0) + (counts['item.rerecord'] ?? 0);
	assert.equal(counts['item.outcome'], attempts);
	assert.equal(
		again,
		attempts + lost,
		`one poll or rerecord per lost race: ${JSON.stringify(counts)}`,
	);
	assert.ok(results.every((r) => r.end.kind === 'done' && !r.storeFallback));
	console.log(`  lost races: ${attempts} attempts, ${lost} lost: ${JSON.stringify(counts)}`);
});

test('races that run out: the engine gives the shared store up (fail open: memory; fail closed: deferred)', async () => {
	const open = await countedRun({
		config: { providers: [{ name: 'hostile', max_in_flight: 5 }] },
		items: 1,
		store: losingFirst(Infinity, true),
	});
	const [r] = open.results;
	assert.equal(r.end.kind, 'done');
	assert.equal(r.casRetries, MAX_CAS_RACES + 1);
	assert.equal(r.storeFallback, `${MAX_CAS_RACES + 1} compare-and-set races lost in a row`);
	assert.equal(open.counts['engine.raceLost'], MAX_CAS_RACES + 1);
	const closed = await countedRun({
		config: { providers: [{ name: 'hostile', max_in_flight: 5 }] },
		items: 1,
		store: losingFirst(Infinity, false),
	});
	assert.equal(closed.results[0].end.kind, 'defer');
	assert.equal(closed.results[0].end.reason, 'store_unavailable');
	assert.equal(closed.attempts, 0, 'no call without the in-flight lease written');
});
