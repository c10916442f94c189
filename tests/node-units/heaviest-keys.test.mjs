// Get Provider State's `heaviest_keys` (issue 59): the Fair Share Keys holding the most of a
// provider's fleet limit, read by the engine from the `limit` row and handed over as it says.
// Two engines of one chain under two keys (customer a at weight 3, customer b), as the node's
// engine cache keeps one per key, each serve an item through the node's item loop on one memory
// store: each key's worker keeps its share of the limit between calls, and Get Provider State
// lists both keys with their slots and weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { providerState } = require('../../dist/lib/operations.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };

test("Get Provider State lists the keys holding the fleet's limit, with their slots and weights", async () => {
	const scope = `heaviest-${process.pid}`;
	const memory = new MemoryStore(scope);
	const requests = [{ name: 'vendor', url: 'http://x.invalid', method: 'GET' }];
	const keyed = (key, weight) => {
		const config = {
			providers: [{ name: 'vendor' }],
			fleet_limit: true,
			fair_share_key: key,
			fair_share_weight: weight,
		};
		return { engine: new Engine(config), plan: { config, requests, keys: [null], scope } };
	};
	const a = keyed('customer-a', 3);
	const b = keyed('customer-b', 1);
	for (const [k, { engine, plan }] of [a, b].entries()) {
		const result = await runItem({
			call: async () => ({
				outcome: { kind: 'status', status: 200, headers: {} },
				body: {},
				ms: 1,
			}),
			logger: quiet,
			engine,
			store: new FailoverStore(memory, scope, 1000, true),
			plan,
			secrets: {},
			correlationId: `heaviest-${k}`,
		});
		assert.equal(result.end.kind, 'done');
	}
	const [state] = await providerState(a.engine, memory, a.plan, 'memory');
	const keys = state.json.heaviest_keys;
	assert.deepEqual(
		keys.map((k) => [k.key, k.weight, k.waiting]).sort(),
		[
			['customer-a', 3, false],
			['customer-b', 1, false],
		],
		JSON.stringify(keys),
	);
	for (const k of keys) assert.ok(k.slots >= 1, JSON.stringify(k));
	// Neither waited for a slot: neither is owed anything, nor owes.
	for (const k of keys) assert.equal(k.owed_ms, 0, JSON.stringify(k));
	a.engine.free();
	b.engine.free();
});
