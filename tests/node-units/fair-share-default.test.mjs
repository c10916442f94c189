// The Fair Share Key's default is the version's (src/config/versions.rs, `fair_share_by_workflow`),
// applied by the engine: the node hands over its name, its typeVersion and the workflow's id
// (`forVersion`), and from Call Chain 2.2, Check Provider 2.2 and the chat model 1.2 a spent fleet
// limit is shared by `workflow:<id>` where the user set no key; before, by none (each worker a part
// of its own). Read where a user sees it: Get Provider State's heaviest keys after an item served
// through the node's item loop on a memory store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');
const { providerState } = require('../../dist/lib/operations.js');
const { forVersion } = require('../../dist/lib/plan/versionDefaults.js');

const quiet = { info() {}, warn() {}, error() {}, debug() {} };
let n = 0;

/** The keys holding the provider's fleet limit after one item of `node` at `version`. */
async function keysAt(node, version, set = {}, workflowId = 'wf-7') {
	const scope = `fair-default-${process.pid}-${n++}`;
	const memory = new MemoryStore(scope);
	// The fleet's limit on, as every version named here turns it on (1.0/2.0 do not: added).
	const config = { providers: [{ name: 'vendor' }], fleet_limit: true, ...set };
	forVersion(config, node, version, workflowId);
	const engine = new Engine(config);
	const plan = {
		config,
		requests: [{ name: 'vendor', url: 'http://x.invalid', method: 'GET' }],
		keys: [null],
		scope,
	};
	const result = await runItem({
		call: async () => ({ outcome: { kind: 'status', status: 200, headers: {} }, body: {}, ms: 1 }),
		logger: quiet,
		engine,
		store: new FailoverStore(memory, scope, 1000, true),
		plan,
		secrets: {},
		correlationId: `fair-default-${n}`,
	});
	assert.equal(result.end.kind, 'done');
	const [state] = await providerState(engine, memory, plan, 'memory');
	return state.json.heaviest_keys.map((k) => k.key);
}

test('from Call Chain 2.2, Check Provider 2.2 and the chat model 1.2 the key is the workflow', async () => {
	assert.deepEqual(await keysAt('callChain', 2.2), ['workflow:wf-7']);
	assert.deepEqual(await keysAt('guard', 2.2), ['workflow:wf-7']);
	assert.deepEqual(await keysAt('chatModel', 1.2), ['workflow:wf-7']);
});

test('before those versions no key is handed over: each worker keeps a part of its own', async () => {
	assert.deepEqual(await keysAt('callChain', 2.1), []);
	assert.deepEqual(await keysAt('guard', 2.1), []);
	assert.deepEqual(await keysAt('chatModel', 1.1), []);
});

test("the user's key is kept, and an unsaved workflow (no id) shares by none", async () => {
	assert.deepEqual(await keysAt('callChain', 2.2, { fair_share_key: 'customer-42' }), [
		'customer-42',
	]);
	assert.deepEqual(await keysAt('callChain', 2.2, {}, null), []);
});
