// Key Quotas through each store (memory, Redis, Postgres): 30 items at once under one key with 10
// requests a day. The key's row is written with the provider's rows in one compare-and-set, so
// racing items cannot both take its last request: exactly 10 calls reach the provider, the other
// 20 are deferred (`key_quota`), and a second key on the same provider goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engine, stores, plan, runOne, fileProviders, uid } from '../support/store-harness.mjs';

const loop = fileProviders();

for (const kind of ['memory', 'redis', 'postgres']) {
	test(`${kind}: 30 items at once under a key with 10 requests a day: 10 calls, 20 deferred with key_quota, another key goes on`, async () => {
		const id = uid();
		const scope = `kq-${id}`;
		const store = stores[kind](scope);
		const chain = (key) =>
			plan(
				[{ name: `p-${id}`, url: `${loop.base}/healthy?id=${id}` }],
				{
					fair_share_key: `${key}-${id}`,
					key_quotas: [{ measure: 'requests', per: 'day', limit: 10 }],
				},
				scope,
			);
		const [a, b] = [chain('a'), chain('b')];
		const [engA, engB] = [new engine.Engine(a.config), new engine.Engine(b.config)];
		const results = await Promise.all(
			Array.from({ length: 30 }, (_, i) => runOne(store, a, engA, `a${i}`, { timeoutMs: 5000 })),
		);
		const calls = loop.hits('/healthy', id);
		const ends = results.map((r) => r.end.kind);
		const deferred = results.filter((r) => r.end.kind === 'defer');
		const races = results.reduce((n, r) => n + (r.casRetries ?? 0), 0);
		console.log(
			`${kind}: 30 items under 10 requests a day: ${calls} calls, ${deferred.length} deferred, ${races} compare-and-set races lost, ${results.filter((r) => r.storeFallback).length} fell back: ${[...new Set(results.map((r) => r.storeFallback).filter(Boolean))]}`,
		);
		assert.equal(calls, 10, 'exactly the quota reached the provider');
		assert.equal(ends.filter((k) => k === 'done').length, 10);
		assert.equal(deferred.length, 20);
		for (const r of deferred) assert.equal(r.end.reason, 'key_quota', JSON.stringify(r.end));
		assert.equal(results.filter((r) => r.storeFallback).length, 0, 'races never ran out');
		const other = await runOne(store, b, engB, 'b0');
		assert.equal(other.end.kind, 'done', 'another key has its own row');
		assert.equal(loop.hits('/healthy', id), 11);
		engA.free();
		engB.free();
	});
}
