// Call Chain at Item Concurrency 1 on a shared store: an item decides on rows already read (by
// the item before, or read ahead while its call was out: n8n-node/lib/store/readAhead.ts), never
// on rows older than its own execution's last write or than the engine's poll allows
// (`read_ahead`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { createRequire } from 'node:module';
import {
	ROOT,
	engine,
	stores,
	plan,
	runItem,
	FailoverStore,
	fetchCall,
	quietLogger,
	fileProviders,
	uid,
} from '../support/store-harness.mjs';

const { ReadAheadStore } = createRequire(import.meta.url)(
	path.join(ROOT, 'dist/lib/store/readAhead.js'),
);

const loop = fileProviders();
const { hits } = loop;

/** The store as Call Chain wraps it, and a count of the reads that reached the server. */
function readAheadStore(kind, scope) {
	const shared = stores[kind](scope);
	const counted = { reads: 0 };
	const read = shared.read.bind(shared);
	shared.read = (keys) => (counted.reads++, read(keys));
	return { store: new ReadAheadStore(shared), counted };
}

/** `n` items one after another, as Call Chain runs them at Item Concurrency 1. */
async function execution(store, p, n) {
	const eng = new engine.Engine(p.config);
	const results = [];
	for (let i = 0; i < n; i++)
		results.push(
			await runItem({
				call: fetchCall,
				logger: quietLogger,
				engine: eng,
				store: new FailoverStore(store, p.scope, 2000, true, quietLogger),
				plan: p,
				secrets: {},
				correlationId: `item${i}`,
				more: () => i + 1 < n,
			}),
		);
	eng.free();
	return results;
}

for (const kind of ['redis', 'postgres']) {
	test(`${kind}: 30 healthy items decide on rows already read while the engine allows, not a read each`, async () => {
		const id = uid();
		const { store, counted } = readAheadStore(kind, `ra-${id}`);
		const p = plan([{ name: `ok-${id}`, url: `${loop.base}/ok?id=${id}` }], {}, `ra-${id}`);
		const started = Date.now();
		const results = await execution(store, p, 30);
		const ms = Date.now() - started;
		assert.ok(results.every((r) => r.end.kind === 'done'));
		const { used, expired, discarded } = store.tally;
		console.log(
			`# ${kind}: 30 items in ${ms} ms: ${counted.reads} reads reached the server; rows already read used ${used} times, grants run out ${expired}, reads ahead thrown away ${discarded}`,
		);
		// Every item but the first was granted the rows its predecessor decided on, or a read
		// ahead begun once those were older than read_again_ms, and no write of this execution
		// came between: each decided on them unless the grant ran out first (a call or a stall
		// of this process longer than the grant: none on a quiet machine).
		assert.equal(used + expired, 29, JSON.stringify(store.tally));
		assert.ok(discarded <= expired, JSON.stringify(store.tally));
		assert.ok(used >= 1);
		// A read reaches the server only once the rows already read are read_again_ms old.
		assert.ok(counted.reads <= 1 + Math.ceil(ms / 50), `${counted.reads} reads in ${ms} ms`);
	});

	test(`${kind}: a dead provider read ahead of still costs exactly the threshold; the next items skip it`, async () => {
		const id = uid();
		const { store } = readAheadStore(kind, `rd-${id}`);
		const p = plan(
			[{ name: `dead-${id}`, url: `${loop.base}/always500?id=${id}`, config: { max_attempts: 1 } }],
			{ threshold: 3, open_ms: 60_000, defer_spread_ms: 0 },
			`rd-${id}`,
		);
		const results = await execution(store, p, 10);
		// The third failure's write opens the breaker after the fourth item's rows were read
		// ahead: that read ahead is thrown away, so the fourth item sees the breaker open.
		assert.equal(hits('/always500', id), 3);
		assert.deepEqual(
			results.slice(3).map((r) => r.end.reason),
			Array(7).fill('circuit_open'),
		);
		assert.equal(store.tally.used, 0, 'every item wrote: no read ahead was current');
	});

	test(`${kind}: a call holding an in-flight lease gives it back at its outcome: no rows read ahead to throw away`, async () => {
		const id = uid();
		const { store, counted } = readAheadStore(kind, `rl-${id}`);
		const p = plan(
			[{ name: `capped-${id}`, url: `${loop.base}/ok?id=${id}`, config: { max_in_flight: 4 } }],
			{},
			`rl-${id}`,
		);
		const results = await execution(store, p, 5);
		assert.ok(results.every((r) => r.end.kind === 'done'));
		assert.deepEqual(store.tally, { used: 0, expired: 0, discarded: 0 });
		assert.equal(counted.reads, 5, 'one read an item');
	});

	test(`${kind}: after a call slower than the engine's grant the rows are read again`, async () => {
		const id = uid();
		const { store, counted } = readAheadStore(kind, `rs-${id}`);
		const p = plan(
			[{ name: `slow-${id}`, url: `${loop.base}/ok?id=${id}&delay=150` }],
			{},
			`rs-${id}`,
		);
		await execution(store, p, 4);
		// Granted 100 ms at each call's start, the rows are 150 ms old when the next item reads:
		// each grant runs out unused, and nothing was read ahead (the rows were young at the call).
		assert.deepEqual(store.tally, { used: 0, expired: 3, discarded: 0 });
		assert.equal(counted.reads, 4, "a read an item, after its predecessor's call");
	});
}
