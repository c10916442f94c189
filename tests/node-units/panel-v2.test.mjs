// Version 2's panel, judged from its description data with n8n's own display logic
// (NodeHelpers.displayParameter, as the editor and the credential check use it): version 1 is
// frozen, a provider row shows few fields by default, settings show only where they apply,
// every credential type gets a picker once chosen, and the texts follow n8n's conventions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { NodeHelpers } = require('n8n-workflow');
const {
	ResilientProviderCall,
} = require('../../dist/nodes/ResilientProviderCall/ResilientProviderCall.node.js');

const node = new ResilientProviderCall();
const v1 = node.nodeVersions[1].description;
const v2 = node.nodeVersions[2].description;
const KINDS = ['custom', 'openAiChat', 'anthropicMessages', 'geminiGenerateContent'];
const CREDENTIAL_TYPES = [
	'httpHeaderAuth',
	'httpBearerAuth',
	'httpQueryAuth',
	'httpBasicAuth',
	'openAiApi',
	'anthropicApi',
	'googlePalmApi',
];

const defaults = (props) =>
	Object.fromEntries(props.filter((p) => p.type !== 'notice').map((p) => [p.name, p.default]));
const shown = (props, values, root, version = 2) =>
	props.filter(
		(p) =>
			p.type !== 'notice' &&
			NodeHelpers.displayParameter(values, p, { typeVersion: version }, null, root),
	);
const row = v2.properties.find((p) => p.name === 'providers').options[0].values;

/** The fields a new provider row of `kind` shows (nothing added under Options). */
function rowFields(kind, operation = 'callChain') {
	const root = { ...defaults(v2.properties), operation };
	const values = { ...defaults(row), kind };
	return shown(row, values, root).map((p) => p.name);
}

test('version 1 is frozen: its description is the released one', () => {
	const released = JSON.parse(
		readFileSync(new URL('./fixtures/v1-description.json', import.meta.url), 'utf8'),
	);
	const { defaultVersion, ...described } = JSON.parse(JSON.stringify(v1));
	assert.equal(defaultVersion, 2.2, 'new nodes are created with version 2.2');
	assert.deepEqual(described, released);
	assert.equal(node.currentVersion, 2.2);
});

test('a provider row shows at most 6 fields for an LLM preset and 8 for Custom HTTP', () => {
	const counts = Object.fromEntries(KINDS.map((k) => [k, rowFields(k)]));
	console.log(
		Object.entries(counts)
			.map(([k, f]) => `${k}: ${f.length} (${f.join(', ')})`)
			.join('\n'),
	);
	assert.ok(counts.custom.length <= 8, `custom: ${counts.custom}`);
	for (const k of KINDS.slice(1)) assert.ok(counts[k].length <= 6, `${k}: ${counts[k]}`);
	// The fields that matter are among them.
	assert.ok(
		['name', 'kind', 'authentication', 'url', 'bodyJson'].every((f) => counts.custom.includes(f)),
	);
	for (const k of KINDS.slice(1))
		assert.ok(
			['name', 'model', 'userMessage', 'authentication'].every((f) => counts[k].includes(f)),
		);
	// Per-provider overrides are in the row's Options collection, not in the row.
	assert.ok(
		!Object.values(counts)
			.flat()
			.some((f) => ['maxAttempts', 'threshold', 'openMs'].includes(f)),
	);
});

test('Get Provider State, Get Metrics and Reset Provider show no call settings', () => {
	for (const operation of ['getState', 'getMetrics', 'reset']) {
		for (const k of KINDS) assert.deepEqual(rowFields(k, operation), ['name']);
		const top = shown(v2.properties, { ...defaults(v2.properties), operation }).map((p) => p.name);
		for (const hidden of [
			'retryPolicy',
			'breaker',
			'itemConcurrency',
			'onExhaustion',
			'credentialTypes',
		])
			assert.ok(!top.includes(hidden), `${operation} hides ${hidden}`);
		assert.ok(top.includes('providers') && top.includes('stateStore'));
	}
});

test('provider rows are titled with their names; Method defaults to Auto', () => {
	const providers = v2.properties.find((p) => p.name === 'providers');
	assert.equal(
		providers.typeOptions.fixedCollection.itemTitle,
		'={{ $collection.item.value.name }}',
	);
	assert.equal(row.find((p) => p.name === 'method').default, 'auto');
});

test('Credential Types Used shows one credential picker per chosen type (multi-select values)', () => {
	const pickers = (chosen) =>
		v2.credentials
			.filter((c) =>
				NodeHelpers.displayParameter(
					{ ...defaults(v2.properties), credentialTypes: chosen },
					c,
					{ typeVersion: 2 },
					null,
				),
			)
			.map((c) => c.name);
	assert.deepEqual(pickers([]), ['resilientProviderSecretsApi']);
	assert.deepEqual(pickers(['openAiApi', 'httpBasicAuth']), [
		'resilientProviderSecretsApi',
		'httpBasicAuth',
		'openAiApi',
	]);
	assert.deepEqual(
		pickers(CREDENTIAL_TYPES).filter((c) => c !== 'resilientProviderSecretsApi'),
		CREDENTIAL_TYPES,
	);
	const auth = row.find((p) => p.name === 'authentication').options.map((o) => o.value);
	assert.deepEqual(auth, ['none', ...CREDENTIAL_TYPES, 'secret']);
});

test('a notice under On Exhaustion says what to connect to deferred', () => {
	const notices = (values) =>
		v2.properties
			.filter(
				(p) =>
					p.type === 'notice' && NodeHelpers.displayParameter(values, p, { typeVersion: 2 }, null),
			)
			.map((p) => p.displayName)
			.join('\n');
	assert.match(notices(defaults(v2.properties)), /deferred output to a Wait node .*retry_at/);
	assert.doesNotMatch(
		notices({ ...defaults(v2.properties), onExhaustion: 'default' }),
		/deferred output/,
	);
});

/** Every property at any depth of the version 2 description. */
function walk(props, out = []) {
	for (const p of props) {
		out.push(p);
		if (Array.isArray(p.options))
			for (const o of p.options) {
				if (o.type) walk([o], out);
				if (o.values) walk(o.values, out);
			}
		if (p.values) walk(p.values, out);
	}
	return out;
}

test("texts follow n8n's conventions: no HTML-like text, booleans say Whether, hints say e.g.", () => {
	const all = walk(v2.properties);
	for (const p of all) {
		for (const field of ['displayName', 'description', 'placeholder', 'hint'])
			assert.ok(
				!/[<>]|&lt;|&gt;/.test(p[field] ?? ''),
				`${p.name}.${field} has no <…>: ${p[field]}`,
			);
		if (p.type === 'boolean')
			assert.match(p.description ?? '', /^Whether /, `${p.name}: a boolean is worded "Whether …"`);
		if (p.placeholder && !p.placeholder.startsWith('Add') && !p.placeholder.startsWith('Change'))
			assert.match(p.placeholder, /^e\.g\. /, `${p.name}: placeholder in the "e.g." form`);
	}
});
