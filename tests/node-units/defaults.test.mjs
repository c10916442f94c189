// One defaults table: the engine's (src/config/mod.rs, generated into engineConstants.ts). The
// node's parameter defaults and docs/call-chain.md's defaults table (moved from README) must say the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SHARED_RETRY_SETTINGS } from './retry-policy-settings.mjs';
const require = createRequire(import.meta.url);
const { ENGINE_DEFAULTS: D, CHAT_DEFAULTS: C } = require('../../dist/lib/engineConstants.js');
const VERSIONS = {
	1: require('../../dist/nodes/ResilientProviderCall/v1/description.js').properties,
	2: require('../../dist/nodes/ResilientProviderCall/v2/properties.js').properties,
};

/** Node parameter (collection option) -> engine setting. */
const ENGINE_SETTING = {
	retryPolicy: SHARED_RETRY_SETTINGS,
	breaker: {
		tripRule: 'trip_rule',
		threshold: 'threshold',
		windowMs: 'window_ms',
		failureRate: 'failure_rate',
		minCalls: 'min_calls',
		openMs: 'open_ms',
		openGrowth: 'open_growth',
		openMaxMs: 'open_max_ms',
		halfOpenProbes: 'half_open_probes',
		successesToClose: 'successes_to_close',
	},
};

test("the node's parameter defaults are the engine's (versions 1 and 2)", () => {
	for (const [version, properties] of Object.entries(VERSIONS)) {
		for (const [collection, settings] of Object.entries(ENGINE_SETTING)) {
			const options = properties.find((p) => p.name === collection).options;
			for (const [name, key] of Object.entries(settings)) {
				const option = options.find((o) => o.name === name);
				assert.ok(option, `v${version} ${collection}.${name} exists`);
				assert.equal(
					option.default,
					D[key],
					`v${version} ${collection}.${name} default vs engine ${key}`,
				);
			}
		}
	}
});

test("version 2's own settings take the engine's defaults too", () => {
	const collection = (name) => VERSIONS[2].find((p) => p.name === name).options;
	for (const [name, key, options] of [
		[
			'nextProviderWhenInputTooLong',
			'next_provider_when_input_too_long',
			collection('retryPolicy'),
		],
		['failOverFirst', 'fail_over_first', collection('retryPolicy')],
		['probeIntervalMs', 'probe_interval_ms', collection('breaker')],
	]) {
		const option = options.find((o) => o.name === name);
		assert.equal(option.default, D[key], `${name} default vs engine ${key}`);
	}
});

test("the Resilient Chat Model's stream limits take the engine's defaults, shown on its panel only", () => {
	const chat = require('../../dist/nodes/ResilientChatModel/description.js').properties;
	const options = chat.find((p) => p.name === 'retryPolicy').options;
	for (const [name, key] of [
		['firstChunkDeadlineMs', 'first_chunk_deadline_ms'],
		['streamIdleMs', 'stream_idle_ms'],
	]) {
		assert.equal(options.find((o) => o.name === name)?.default, D[key], name);
		const v2 = VERSIONS[2].find((p) => p.name === 'retryPolicy').options;
		assert.equal(
			v2.find((o) => o.name === name),
			undefined,
			`${name} is not on Call Chain's panel`,
		);
	}
});

/** How the docs write a duration. */
const duration = (ms) =>
	ms >= 600_000 && ms % 60_000 === 0
		? `${ms / 60_000} min`
		: ms % 1000 === 0
			? `${ms / 1000} s`
			: `${ms} ms`;

test("docs/call-chain.md's defaults table is the engine's", () => {
	const readme = readFileSync(new URL('../../docs/call-chain.md', import.meta.url), 'utf8');
	const cell = (setting) => {
		const row = readme.split('\n').find((l) => l.startsWith(`| ${setting} |`));
		assert.ok(row, `docs/call-chain.md has a row for ${setting}`);
		return row.split('|')[2].trim();
	};
	const expect = {
		'Backoff Strategy': `${D.strategy.replace('_', ' ')} `,
		'Base Delay / Max Delay': `${duration(D.base_ms)} / ${duration(D.cap_ms)}`,
		'Max Attempts per Provider': `${D.max_attempts}`,
		'Per-Attempt Deadline': duration(D.deadline_ms),
		'Item Budget': duration(D.budget_ms),
		'Retry-After Cap': duration(D.retry_after_cap_ms),
		'Defer Spread': `${duration(D.defer_spread_ms)} of jitter`,
		'Retryable Statuses': `\`${D.retry_statuses}\``,
		'Statuses Counted Against Provider': `\`${D.health_statuses}\``,
		'Retry POST/PATCH Without Key': D.retry_unsafe_methods ? 'on' : 'off',
		'Try Next Provider When Input Is Too Long': D.next_provider_when_input_too_long ? 'on' : 'off',
		'First-Chunk Deadline': duration(D.first_chunk_deadline_ms),
		'Stream Idle Limit': duration(D.stream_idle_ms),
		'Fail Over First': `${D.fail_over_first ? 'on' : 'off'} (the Resilient Chat Model: ${C.fail_over_first ? 'on' : 'off'})`,
		'Trip Rule': `${D.threshold} ${D.trip_rule} failures within ${duration(D.window_ms)}`,
		'Open Window': `${duration(D.open_ms)}, ×${D.open_growth} on each re-trip, capped at ${duration(D.open_max_ms)}`,
		'Half-Open Probes': `${D.half_open_probes} `,
		'Successes to Close': `${D.successes_to_close}`,
	};
	for (const [setting, text] of Object.entries(expect)) {
		assert.ok(
			cell(setting).startsWith(text),
			`docs/call-chain.md ${setting}: "${cell(setting)}" should start with "${text}"`,
		);
	}
});

const callChainDoc = () =>
	readFileSync(new URL('../../docs/call-chain.md', import.meta.url), 'utf8');

test("docs/call-chain.md's reason codes are the engine's, every one and no other", () => {
	const { REASON_CODES } = require('../../dist/lib/engineConstants.js');
	const doc = callChainDoc();
	const section = doc.slice(
		doc.indexOf('## Reason codes'),
		doc.indexOf('\n## ', doc.indexOf('## Reason codes') + 3),
	);
	// A reason code is a backticked snake_case word outside an entry's parenthesis (its gloss).
	const glossless = section.replace(/\((?:[^()]|\([^()]*\))*\)/g, '');
	const listed = [...glossless.matchAll(/`([a-z]+(?:_[a-z0-9]+)*)`/g)].map((m) => m[1]);
	assert.deepEqual([...new Set(listed)].sort(), [...REASON_CODES].sort());
});

test("docs/call-chain.md's retryable codes are the engine's, and its Routing row names every routing", () => {
	const { TRANSIENT_ERROR_CODES } = require('../../dist/lib/engineConstants.js');
	const doc = callChainDoc();
	const row = doc.split('\n').find((l) => l.startsWith('| Retryable Statuses |'));
	const listed = [...row.matchAll(/\b(E[A-Z_]+|FETCH_FAILED|TIMEOUT)\b/g)].map((m) => m[1]);
	assert.deepEqual([...new Set(listed)].sort(), [...TRANSIENT_ERROR_CODES].sort());
	const routing = VERSIONS[2]
		.find((p) => p.name === 'retryPolicy')
		.options.find((o) => o.name === 'routing')
		.options.map((o) => o.name);
	const routingRow = doc.split('\n').find((l) => l.startsWith('| Routing |'));
	for (const name of routing)
		assert.ok(
			routingRow.toLowerCase().includes(name.toLowerCase()),
			`the Routing row names ${name}`,
		);
});

test('docs/call-chain.md names every field of a Get Provider State item', async () => {
	const { Engine } = require('../../dist/engine/engine.js');
	const { providerState } = require('../../dist/lib/operations.js');
	const { MemoryStore } = require('../../dist/lib/store/memory.js');
	const { COUNTER_NAMES } = require('../../dist/lib/engineConstants.js');
	const engine = new Engine({ providers: [{ name: 'a' }] });
	const plan = { requests: [{ name: 'a' }], scope: `docs-${process.pid}` };
	const [item] = await providerState(engine, new MemoryStore(plan.scope), plan, 'memory');
	const doc = callChainDoc();
	const paragraph = doc.slice(doc.indexOf('*Get Provider State* ('), doc.indexOf('*Get Metrics*'));
	const fields = [...Object.keys(item.json), ...Object.keys(item.json.counters)];
	assert.deepEqual(Object.keys(item.json.counters).slice(0, COUNTER_NAMES.length), [
		...COUNTER_NAMES,
	]);
	for (const f of fields) assert.ok(paragraph.includes(`\`${f}\``), `Get Provider State's ${f}`);
});

test("the panel's limits are the engine's: Max Hedges, the store's operation timeout", () => {
	const { MAX_HEDGES, STORE_DEFAULTS } = require('../../dist/lib/engineConstants.js');
	const policy = VERSIONS[2].find((p) => p.name === 'retryPolicy').options;
	assert.equal(policy.find((o) => o.name === 'maxHedges').typeOptions.maxValue, MAX_HEDGES);
	for (const [version, properties] of Object.entries(VERSIONS)) {
		const store = properties.find((p) => p.name === 'storeOptions').options;
		const option = (name) => store.find((o) => o.name === name)?.default;
		assert.equal(option('operationTimeoutMs'), STORE_DEFAULTS.operationTimeoutMs, `v${version}`);
		assert.equal(option('keyPrefix'), STORE_DEFAULTS.keyPrefix, `v${version}`);
		assert.equal(option('tableName'), STORE_DEFAULTS.tableName, `v${version}`);
	}
});

test('the parameter→setting table reads options the panels have into settings the engine has', () => {
	const { POLICY_PARAMETERS } = require('../../dist/lib/plan/policyTable.js');
	const chat = require('../../dist/nodes/ResilientChatModel/description.js').properties;
	const options = (properties, collection) =>
		properties.find((p) => p.name === collection)?.options.map((o) => o.name) ?? [];
	for (const [setting, collection, param] of POLICY_PARAMETERS) {
		assert.ok(setting in D, `${setting} is an engine setting`);
		const on = [VERSIONS[2], chat].filter((props) => options(props, collection).includes(param));
		assert.ok(on.length > 0, `${collection}.${param} is on Call Chain's or the chat model's panel`);
	}
	// Every Breaker option of version 2 is read through the table.
	const read = new Set(POLICY_PARAMETERS.map(([, c, p]) => `${c}.${p}`));
	for (const name of options(VERSIONS[2], 'breaker')) assert.ok(read.has(`breaker.${name}`), name);
});

test("Max Item Concurrency's panel default at each version is the engine's version table's", () => {
	const { VERSION_DEFAULTS } = require('../../dist/lib/engineConstants.js');
	const table = Object.fromEntries(VERSION_DEFAULTS.callChain);
	const entries = VERSIONS[2].filter((p) => p.name === 'maxItemConcurrency');
	const at = (version) =>
		entries.find((p) => {
			const [shown] = p.displayOptions.show['@version'];
			return shown === version || shown?._cnd?.gte <= version;
		});
	for (const version of [2.1, 2.2])
		assert.equal(at(version).default, table[version].max_item_concurrency, `${version}`);
});
