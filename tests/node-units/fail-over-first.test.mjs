// Fail Over First on both panels that share the Retry Policy description: Call Chain's
// option is off and the chat model's on, each the default of its column of the engine's defaults
// table (ENGINE_DEFAULTS, CHAT_DEFAULTS); each Retry Policy field shows only where it does
// something; the plans hand the engine its column's value when the user set nothing; and the
// engine, given each plan, moves on at once or backs off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { V2_RETRY_SETTINGS } from './retry-policy-settings.mjs';
const require = createRequire(import.meta.url);
const { NodeHelpers } = require('n8n-workflow');
const {
	ENGINE_DEFAULTS,
	CHAT_DEFAULTS,
	CHAT_OVERRIDES,
} = require('../../dist/lib/engineConstants.js');
const callChain = require('../../dist/nodes/ResilientProviderCall/v2/properties.js').properties;
const {
	ResilientProviderCall,
} = require('../../dist/nodes/ResilientProviderCall/ResilientProviderCall.node.js');
const chat = require('../../dist/nodes/ResilientChatModel/description.js').properties;
const { readItemPlan } = require('../../dist/lib/params.js');
const { readChatPlan } = require('../../dist/lib/chat/plan.js');
const { Engine } = require('../../dist/engine/engine.js');
const { runItem } = require('../../dist/lib/itemLoop.js');
const { MemoryStore } = require('../../dist/lib/store/memory.js');
const { FailoverStore } = require('../../dist/lib/store/failover.js');

/** Retry Policy option -> engine setting (every option that has one). */
const SETTING = V2_RETRY_SETTINGS;
const HTTP_ONLY = ['addIdempotencyKey', 'idempotencyKey', 'retryUnsafeMethods'];

const options = (props) => props.find((p) => p.name === 'retryPolicy').options;
const defaults = (props) =>
	Object.fromEntries(props.filter((p) => p.type !== 'notice').map((p) => [p.name, p.default]));
/** The Retry Policy options shown with every option added, under `root`'s parameters. */
function shownOptions(props, root) {
	const collection = props.find((p) => p.name === 'retryPolicy');
	if (!NodeHelpers.displayParameter(root, collection, { typeVersion: 2 }, null, root)) return [];
	const value = Object.fromEntries(collection.options.map((o) => [o.name, o.default]));
	return collection.options
		.filter((o) => NodeHelpers.displayParameter(value, o, { typeVersion: 2 }, null, root))
		.map((o) => o.name);
}

test("Fail Over First: off on Call Chain, on on the chat model, each its column of the engine's table", () => {
	assert.equal(
		ENGINE_DEFAULTS.fail_over_first,
		false,
		'saved Call Chain workflows behave as before',
	);
	assert.equal(CHAT_DEFAULTS.fail_over_first, true);
	assert.deepEqual(CHAT_DEFAULTS, { ...ENGINE_DEFAULTS, ...CHAT_OVERRIDES });
	const field = (props) => options(props).find((o) => o.name === 'failOverFirst');
	assert.equal(field(callChain).default, ENGINE_DEFAULTS.fail_over_first);
	assert.equal(field(chat).default, CHAT_DEFAULTS.fail_over_first);
	assert.equal(field(chat).type, 'boolean');
	assert.match(field(chat).description, /^Whether a retryable failure moves the item on at once/);
	// Every other option of both panels: its column's default.
	for (const [props, column] of [
		[callChain, ENGINE_DEFAULTS],
		[chat, CHAT_DEFAULTS],
	]) {
		for (const o of options(props)) {
			if (SETTING[o.name]) assert.equal(o.default, column[SETTING[o.name]], o.name);
		}
	}
});

/** The chat model streams; Call Chain does not: these show on its panel alone. */
const STREAM_ONLY = ['firstChunkDeadlineMs', 'streamIdleMs'];

test('each Retry Policy field shows where it does something: Call Chain, Check Provider, the chat model', () => {
	const v2 = new ResilientProviderCall().nodeVersions[2].description.properties;
	const on = (operation) => shownOptions(v2, { ...defaults(v2), operation });
	const all = options(callChain).map((o) => o.name);
	assert.deepEqual(on('callChain'), all, 'Call Chain uses every option');
	assert.ok(!on('checkProvider').includes('failOverFirst'), 'Check Provider admits one call');
	assert.deepEqual(
		on('checkProvider'),
		all.filter((n) => n !== 'failOverFirst'),
	);
	for (const operation of ['getState', 'getMetrics', 'reset', 'reportOutcome'])
		assert.deepEqual(on(operation), [], `${operation} shows no Retry Policy`);
	const onChat = shownOptions(chat, defaults(chat));
	assert.deepEqual(
		[...onChat].sort(),
		[...all.filter((n) => !HTTP_ONLY.includes(n)), ...STREAM_ONLY].sort(),
		"the chat model: all but the HTTP-only ones, and its streams' limits",
	);
	for (const n of STREAM_ONLY) assert.ok(!all.includes(n), `${n} is the chat model's alone`);
	assert.ok(onChat.includes('failOverFirst'));
});

/** Just enough of n8n's contexts for the plan readers. */
function context(parameters) {
	const get = (name) =>
		name.split('.').reduce((o, k) => (o == null ? undefined : o[k]), parameters);
	return {
		getNode: () => ({ name: 'node', type: 'test', typeVersion: 2, parameters }),
		getWorkflow: () => ({ id: 'wf-fail-over' }),
		getInputData: () => [{ json: { q: 1 } }],
		getNodeParameter: (name, _i, fallback) => get(name) ?? fallback,
	};
}
const ROWS = [
	{ name: 'primary', kind: 'custom', method: 'GET', url: 'http://primary.invalid' },
	{ name: 'fallback', kind: 'custom', method: 'GET', url: 'http://fallback.invalid' },
];
const callChainPlan = (retryPolicy, breaker = {}) =>
	readItemPlan(
		context({ operation: 'callChain', providers: { provider: ROWS }, retryPolicy, breaker }),
		0,
		2,
	);
const chatPlan = (retryPolicy, breaker = {}) =>
	readChatPlan(context({ retryPolicy, breaker }), ['primary', 'fallback']);
/** What the engine runs with: the plan's value, else the engine's own default. */
const effective = (plan, key) => plan.config[key] ?? ENGINE_DEFAULTS[key];

test("a chat plan without the field fails over first; Call Chain's does not; a set value wins", () => {
	assert.equal(chatPlan({}).config.fail_over_first, true);
	assert.equal(chatPlan({}).config.next_provider_on_client_error, false);
	assert.equal(effective(callChainPlan({}), 'fail_over_first'), false);
	assert.equal(effective(callChainPlan({}), 'next_provider_on_client_error'), true);
	assert.equal(callChainPlan({ failOverFirst: true }).config.fail_over_first, true);
	assert.equal(chatPlan({ failOverFirst: false }).config.fail_over_first, false);
	assert.throws(
		() => callChainPlan({ failOverFirst: 'yes' }),
		/Retry Policy: "failOverFirst" must be true or false/,
	);
});

/** Ten items one after another through the node's item loop and the WASM engine: the primary
 * answers 500, the fallback 200, breaker threshold 3. */
async function tenItems(plan, tag) {
	const scope = `fail-over-${tag}-${process.pid}`;
	const store = new FailoverStore(new MemoryStore(scope), scope, 1000, true);
	const engine = new Engine(plan.config);
	const quiet = { info() {}, warn() {}, error() {}, debug() {} };
	const primary = [];
	const items = [];
	for (let k = 0; k < 10; k++) {
		items.push(
			await runItem({
				call: async (req) => {
					if (req.name === 'primary') primary.push(k);
					return {
						outcome: { kind: 'status', status: req.name === 'primary' ? 500 : 200, headers: {} },
						body: {},
						ms: 1,
					};
				},
				logger: quiet,
				engine,
				store,
				plan,
				secrets: {},
				correlationId: `${tag}-${k}`,
			}),
		);
	}
	return { primary, items };
}

test('through the engine: the chat plan moves on at once, Call Chain backs off on the primary', async () => {
	const faster = { baseMs: 50, capMs: 100 };
	const onChat = await tenItems(chatPlan(faster, { threshold: 3 }), 'chat');
	assert.deepEqual(onChat.primary, [0, 1, 2], 'one request from each of the first 3 items');
	assert.deepEqual(
		onChat.items.map((r) => [r.end.name, r.sleptMs]),
		Array(10).fill(['fallback', 0]),
		'every item served by the fallback, none slept',
	);
	assert.deepEqual(
		onChat.items[0].skipped.map((s) => s.reason),
		['failed_over'],
	);

	const onCallChain = await tenItems(callChainPlan(faster, { threshold: 3 }), 'call-chain');
	assert.deepEqual(onCallChain.primary, [0, 0, 0], "the first item's 3 attempts trip the breaker");
	assert.deepEqual(
		onCallChain.items[0].attempts.slice(0, 2).map((a) => a.wait_cause),
		['backoff', 'backoff'],
	);
	assert.ok(onCallChain.items.every((r) => r.end.name === 'fallback'));
});

test("each version's defaults are the engine's: the node hands over its name and version, and what the user set", () => {
	const plan = (version, breaker = {}) =>
		readItemPlan(
			context({ operation: 'callChain', providers: { provider: ROWS }, breaker }),
			0,
			version,
		).config;
	// The engine applies the version's table (src/config/versions.rs; tests/versions.rs holds
	// 2.2 probing every 10 s and sending a too-long input on, 2.1 waiting in line): the node
	// hands over no default of its own.
	for (const version of [2, 2.1, 2.2]) {
		const config = plan(version);
		assert.deepEqual([config.node, config.type_version], ['callChain', version]);
		for (const unset of ['probe_interval_ms', 'next_provider_when_input_too_long', 'wait_in_line'])
			assert.equal(config[unset], undefined, `${version}: ${unset} is the engine's to set`);
	}
	assert.equal(plan(2.2, { probeIntervalMs: 0 }).probe_interval_ms, 0, 'a set 0 is handed over');
	const chatAt = (typeVersion) => {
		const ctx = context({});
		ctx.getNode = () => ({ name: 'node', type: 'test', typeVersion, parameters: {} });
		return readChatPlan(ctx, ['primary', 'fallback']).config;
	};
	assert.deepEqual([chatAt(1.2).node, chatAt(1.2).type_version], ['chatModel', 1.2]);
	assert.equal(chatAt(1.2).probe_interval_ms, undefined);
	// On a Broken Stream is a parameter of its own, read with the version's fallback.
	assert.equal(chatAt(1.1).continue_broken_streams, true);
	assert.equal(chatAt(1).continue_broken_streams, false, "version 1: the broken model's error");
});
