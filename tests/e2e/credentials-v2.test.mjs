// Version 2 in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20): n8n's own
// credentials per provider and the LLM presets, against loopback vendors that refuse a request
// without the auth their real counterpart expects (401) and count what they accept. Each
// credential type reaches its server: Header, Bearer, Query and Basic Auth on a generic server;
// OpenAI, Anthropic and Google Gemini (PaLM) on the vendors, through the presets. A chain
// OpenAI -> Anthropic -> Gemini with the first two failing answers in the same shape; a wrong key
// gets one 401 at its vendor and the item moves on. One workflow, one `n8n execute`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run$ = uid();
const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: `AIza-${uid()}` };
const AUTH = {
	header: { name: 'X-Api-Key', value: `hdr-${uid()}` },
	bearer: `tok-${uid()}`,
	query: { name: 'api_key', value: `qry-${uid()}` },
	basic: { user: 'svc', password: `pw-${uid()}` },
};
const CRED = {
	httpHeaderAuth: { id: 'v2CredHeader001', data: AUTH.header },
	httpBearerAuth: { id: 'v2CredBearer001', data: { token: AUTH.bearer } },
	httpQueryAuth: { id: 'v2CredQuery0001', data: AUTH.query },
	httpBasicAuth: { id: 'v2CredBasic0001', data: AUTH.basic },
	openAiApi: { id: 'v2CredOpenAi001', data: { apiKey: KEYS.openai } },
	anthropicApi: { id: 'v2CredAnthrop01', data: { apiKey: KEYS.anthropic } },
	googlePalmApi: { id: 'v2CredGemini001', data: { apiKey: KEYS.gemini } },
};
const WRONG_OPENAI = { id: 'v2CredOpenAiBad', data: { apiKey: 'sk-wrong-key' } };
/** n8n's per-credential Allowed HTTP Request Domains: this one may go to api.example.com only. */
const RESTRICTED_HEADER = {
	id: 'v2CredHeaderRst',
	data: { ...AUTH.header, allowedHttpRequestDomains: 'domains', allowedDomains: 'api.example.com' },
};
let providers, vendors, n8n, run;

const credentialsOf = (types, override = {}) =>
	Object.fromEntries(
		types.map((t) => {
			const c = override[t] ?? CRED[t];
			return [t, { id: c.id, name: c.id }];
		}),
	);
const fast = { baseMs: 20, capMs: 50, deferSpreadMs: 0 };
const B = [];
/** A branch: one version 2 node with `rows`, the credential types it uses, `items` items. */
function branch(
	name,
	rows,
	{ types = [], items = 1, override, retryPolicy = {}, continueOnFail = false, then } = {},
) {
	B.push({
		name,
		items,
		typeVersion: 2,
		item: { question: `what is ${name}?` },
		parameters: {
			credentialTypes: types,
			providers: { provider: rows },
			retryPolicy: { ...fast, ...retryPolicy },
		},
		nodeSettings: {
			credentials: credentialsOf(types, override),
			...(continueOnFail ? { onError: 'continueRegularOutput' } : {}),
		},
		then,
	});
}
const generic = (scheme, type) => ({
	name: `${scheme}-${run$}`,
	kind: 'custom',
	authentication: type,
	url: `BASE/need-auth/${scheme}?id=${scheme}-${run$}`,
});
const llm = (kind, vendorId, type, extra = {}) => ({
	name: `${vendorId}-${run$}`,
	kind,
	authentication: type,
	model:
		{ openAiChat: 'gpt-4o-mini', anthropicMessages: 'claude-3-5-haiku-latest' }[kind] ??
		'gemini-2.0-flash',
	userMessage: '={{ $json.question }}',
	[`${kind}Options`]: {
		baseUrl: `VENDOR/${vendorId}-${run$}${kind === 'openAiChat' ? '/v1' : ''}`,
		...extra,
	},
});

branch('header auth', [generic('header', 'httpHeaderAuth')], { types: ['httpHeaderAuth'] });
branch('bearer auth', [generic('bearer', 'httpBearerAuth')], { types: ['httpBearerAuth'] });
branch('query auth', [generic('query', 'httpQueryAuth')], { types: ['httpQueryAuth'] });
branch('basic auth', [generic('basic', 'httpBasicAuth')], { types: ['httpBasicAuth'] });
branch(
	'auto method with a body',
	[
		{
			...generic('bearer', 'httpBearerAuth'),
			name: `post-${run$}`,
			url: `BASE/need-auth/bearer?id=post-${run$}`,
			bodyJson: '={{ JSON.stringify({ q: $json.question }) }}',
		},
	],
	{ types: ['httpBearerAuth'] },
);
branch('openai preset', [llm('openAiChat', 'oa', 'openAiApi', { systemPrompt: 'Be brief.' })], {
	types: ['openAiApi'],
	items: 2,
});
branch('anthropic preset', [llm('anthropicMessages', 'an', 'anthropicApi', { maxTokens: 64 })], {
	types: ['anthropicApi'],
});
branch('gemini preset', [llm('geminiGenerateContent', 'ge', 'googlePalmApi')], {
	types: ['googlePalmApi'],
});
branch(
	'chain openai anthropic gemini',
	[
		llm('openAiChat', 'chain-oa', 'openAiApi', { maxAttempts: 2 }),
		llm('anthropicMessages', 'chain-an', 'anthropicApi', { maxAttempts: 2 }),
		llm('geminiGenerateContent', 'chain-ge', 'googlePalmApi', { includeRawResponse: true }),
	],
	{ types: ['openAiApi', 'anthropicApi', 'googlePalmApi'], items: 2 },
);
branch(
	'wrong openai key',
	[
		llm('openAiChat', 'bad-oa', 'openAiApi', { maxAttempts: 3 }),
		llm('anthropicMessages', 'after-bad', 'anthropicApi'),
	],
	{
		types: ['openAiApi', 'anthropicApi'],
		override: { openAiApi: WRONG_OPENAI },
		items: 3,
		// Then Get Provider State (version 2): the 401s did not count against the provider.
		then: [
			{
				name: 'wrong key state',
				typeVersion: 2,
				parameters: {
					operation: 'getState',
					providers: { provider: [{ name: `bad-oa-${run$}` }] },
				},
			},
		],
	},
);
// n8n's authenticated helper replaces a request's abort signal with the execution's: the
// per-attempt deadline must still end a response that trickles (one byte a second).
branch(
	'deadline through the credential helper',
	[
		{
			...generic('bearer', 'httpBearerAuth'),
			name: `drip-${run$}`,
			url: `BASE/drip?id=drip-${run$}`,
			options: { deadlineMs: 1500, maxAttempts: 1 },
		},
		{
			...generic('header', 'httpHeaderAuth'),
			name: `after-drip-${run$}`,
			url: `BASE/need-auth/header?id=after-drip-${run$}`,
		},
	],
	{ types: ['httpBearerAuth', 'httpHeaderAuth'] },
);
branch(
	'credential restricted to other domains',
	[
		{
			...generic('header', 'httpHeaderAuth'),
			name: `restricted-${run$}`,
			url: `BASE/need-auth/header?id=restricted-${run$}`,
		},
	],
	{
		types: ['httpHeaderAuth'],
		override: { httpHeaderAuth: RESTRICTED_HEADER },
		continueOnFail: true,
	},
);
// Context too long: the vendor's own 400 wording; off fails the item, on moves to the next.
for (const [label, on] of [
	['too long, option off', false],
	['too long, option on', true],
])
	branch(
		label,
		[
			llm('openAiChat', `long-${on}`, 'openAiApi', { maxAttempts: 3 }),
			llm('anthropicMessages', `roomy-${on}`, 'anthropicApi'),
		],
		{
			types: ['openAiApi', 'anthropicApi'],
			items: 2,
			retryPolicy: { nextProviderWhenInputTooLong: on },
		},
	);
// Bad version 2 parameters: each a clear error naming the provider and the field, nothing sent.
// (A required field left empty is refused by n8n itself before the run; an expression that comes
// out empty reaches the node.)
branch(
	'preset without a model',
	[{ ...llm('openAiChat', 'nomodel', 'none'), model: "={{ '' }}" }],
	{
		continueOnFail: true,
	},
);
branch('credential type not chosen', [llm('openAiChat', 'unchosen', 'openAiApi')], {
	continueOnFail: true,
});
branch(
	'secret without a name',
	[{ ...llm('openAiChat', 'noname', 'secret'), secretName: "={{ '' }}" }],
	{ continueOnFail: true },
);
branch('empty answer moves on', [
	{ ...llm('openAiChat', 'empty-oa', 'secret'), secretName: 'openai' },
]);

before(async () => {
	providers = await startProviders();
	providers.expectAuth(AUTH);
	vendors = await startLlmVendors(KEYS);
	vendors.script(`chain-oa-${run$}`, [503]);
	vendors.script(`chain-an-${run$}`, [500]);
	vendors.script(`empty-oa-${run$}`, ['empty']);
	vendors.script(`long-false-${run$}`, ['too_long']);
	vendors.script(`long-true-${run$}`, ['too_long']);
	n8n = n8nInstance(n8nInstall(major));
	n8n.importCredentials([
		...Object.entries(CRED).map(([type, c]) => ({ id: c.id, name: c.id, type, data: c.data })),
		{ id: WRONG_OPENAI.id, name: WRONG_OPENAI.id, type: 'openAiApi', data: WRONG_OPENAI.data },
		{
			id: RESTRICTED_HEADER.id,
			name: RESTRICTED_HEADER.id,
			type: 'httpHeaderAuth',
			data: RESTRICTED_HEADER.data,
		},
		{
			id: 'v2CredSecrets01',
			name: 'v2CredSecrets01',
			type: 'resilientProviderSecretsApi',
			data: { secrets: JSON.stringify({ openai: KEYS.openai }) },
		},
	]);
	const base = `http://127.0.0.1:${providers.port}`;
	const vendor = `http://127.0.0.1:${vendors.port}`;
	const branches = JSON.parse(
		JSON.stringify(B).replaceAll('BASE/', `${base}/`).replaceAll('VENDOR/', `${vendor}/`),
	);
	// The secret branch names its credential (Secrets (JSON)).
	const empty = branches.find((b) => b.name === 'empty answer moves on');
	empty.nodeSettings.credentials = {
		resilientProviderSecretsApi: { id: 'v2CredSecrets01', name: 'v2CredSecrets01' },
	};
	const wf = branchesWorkflow(`creds${uid()}`, n8n.nodeType, branches);
	n8n.importWorkflow(wf);
	let log;
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 180_000 }));
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => {
	await providers?.close();
	await vendors?.close();
});

const served = (name) => outputs(run, name)[0];
const atVendor = (id) => vendors.arrivals.filter((a) => a.id === `${id}-${run$}`);
const atRoute = (scheme) => providers.arrivals.filter((a) => a.id === `${scheme}-${run$}`);

test('the per-attempt deadline ends a trickling response sent through the credential helper', () => {
	const [ok] = outputs(run, 'deadline through the credential helper');
	assert.equal(ok.length, 1);
	const [first] = ok[0].json._resilience.attempts;
	assert.equal(first.outcome, 'TIMEOUT');
	assert.ok(
		ok[0].json._resilience.totalMs < 5000,
		`cut at 1.5 s: ${ok[0].json._resilience.totalMs} ms`,
	);
	assert.equal(ok[0].json.scheme, 'header');
});

test('Header, Bearer, Query and Basic Auth credentials each reach their server, accepted', () => {
	for (const scheme of ['header', 'bearer', 'query', 'basic']) {
		const name = `${scheme} auth`;
		assert.equal(served(name).length, 1, `${name}: ${JSON.stringify(outputs(run, name))}`);
		assert.equal(served(name)[0].json.scheme, scheme);
		const hits = atRoute(scheme);
		assert.deepEqual(
			hits.map((a) => [a.method, a.accepted]),
			[['GET', true]],
			`${scheme}: one GET (Method Auto without a body), accepted`,
		);
	}
});

test('Method Auto sends POST when a body is set, with an Idempotency-Key', () => {
	assert.equal(served('auto method with a body').length, 1);
	const [hit] = atRoute('post');
	assert.equal(hit.method, 'POST');
	assert.equal(hit.accepted, true);
	assert.deepEqual(JSON.parse(hit.body), { q: 'what is auto method with a body?' });
	assert.match(hit.idempotencyKey, /^[0-9a-f]{32}$/);
});

test('OpenAI, Anthropic and Gemini credentials reach their vendors through the presets; one answer shape', () => {
	for (const [name, id, dialect, model] of [
		['openai preset', 'oa', 'openai', 'gpt-4o-mini'],
		['anthropic preset', 'an', 'anthropic', 'claude-3-5-haiku-latest'],
		['gemini preset', 'ge', 'gemini', 'gemini-2.0-flash'],
	]) {
		const out = served(name);
		assert.ok(out.length >= 1, `${name}: ${JSON.stringify(outputs(run, name)).slice(0, 1500)}`);
		const { _resilience, ...answer } = out[0].json;
		assert.deepEqual(answer, {
			text: `${id}-${run$} says hi`,
			provider: `${id}-${run$}`,
			model,
			usage: { input_tokens: 11, output_tokens: 7 },
			finish_reason: 'stop',
		});
		assert.equal(_resilience.outcome, 'success');
		const hits = atVendor(id);
		assert.equal(hits.length, out.length, `${name}: one request per item`);
		assert.ok(hits.every((a) => a.accepted && a.dialect === dialect));
	}
	const oa = atVendor('oa');
	assert.deepEqual(oa[0].body.messages, [
		{ role: 'system', content: 'Be brief.' },
		{ role: 'user', content: 'what is openai preset?' },
	]);
	assert.equal(atVendor('an')[0].body.max_tokens, 64);
});

test('a chain OpenAI -> Anthropic -> Gemini with the first two failing answers in the same shape', () => {
	const out = served('chain openai anthropic gemini');
	assert.equal(out.length, 2);
	for (const item of out) {
		const { _resilience, raw, ...answer } = item.json;
		assert.deepEqual(answer, {
			text: `chain-ge-${run$} says hi`,
			provider: `chain-ge-${run$}`,
			model: 'gemini-2.0-flash',
			usage: { input_tokens: 11, output_tokens: 7 },
			finish_reason: 'stop',
		});
		assert.equal(raw.candidates[0].content.parts[0].text, answer.text, 'Include Raw Response');
		assert.equal(_resilience.fallback, true);
	}
	assert.ok(atVendor('chain-oa').length >= 1 && atVendor('chain-oa').every((a) => a.accepted));
	assert.ok(atVendor('chain-an').length >= 1 && atVendor('chain-an').every((a) => a.accepted));
	assert.equal(atVendor('chain-ge').length, 2);
});

test('a wrong key gets one 401 at its vendor per item, never retried there; the next provider serves', () => {
	const [ok, deferred, failed] = outputs(run, 'wrong openai key');
	assert.equal(ok.length, 3, JSON.stringify({ deferred, failed }).slice(0, 1500));
	assert.ok(ok.every((x) => x.json.provider === `after-bad-${run$}`));
	const bad = atVendor('bad-oa');
	assert.deepEqual(
		bad.map((a) => [a.status, a.accepted]),
		[
			[401, false],
			[401, false],
			[401, false],
		],
		'one refused request per item (Max Attempts 3 is not used on a 401)',
	);
	assert.ok(ok.every((x) => x.json._resilience.attempts.some((a) => a.outcome === '401')));
	const [state] = outputs(run, 'wrong key state')[0];
	assert.equal(state.json.provider, `bad-oa-${run$}`);
	assert.equal(state.json.state, 'closed');
	assert.equal(state.json.recent_failures, 0, 'a 401 never counts against the provider');
	assert.equal(state.json.counters.failures, 0);
});

test('a preset answer without text fails its default check; a named secret is sent as Bearer <key>', () => {
	const [ok, deferred, failed] = outputs(run, 'empty answer moves on');
	assert.equal(ok.length, 0);
	assert.equal(deferred.length + failed.length, 1);
	const hits = atVendor('empty-oa');
	assert.ok(
		hits.length >= 1 && hits.every((a) => a.accepted),
		`the raw key went out as Bearer: ${JSON.stringify({ hits, out: outputs(run, 'empty answer moves on') }).slice(0, 3000)}`,
	);
	const item = [...deferred, ...failed][0].json;
	assert.ok(
		item._resilience.attempts.every((a) => a.outcome === 'check_failed:empty_text'),
		JSON.stringify(item._resilience.attempts),
	);
});

test('Try Next Provider When Input Is Too Long: off fails the item (context_too_long), on moves on', () => {
	const [okOff, deferredOff, failedOff] = outputs(run, 'too long, option off');
	assert.deepEqual([okOff.length, deferredOff.length, failedOff.length], [0, 0, 2]);
	assert.ok(failedOff.every((x) => x.json.reason === 'context_too_long'));
	assert.equal(atVendor('roomy-false').length, 0, 'off: the next provider is not tried');
	const [okOn] = outputs(run, 'too long, option on');
	assert.equal(okOn.length, 2);
	assert.ok(okOn.every((x) => x.json.provider === `roomy-true-${run$}` && x.json.text));
	// One 400 per item at the vendor either way: never retried on it.
	assert.equal(atVendor('long-false').length, 2);
	assert.equal(atVendor('long-true').length, 2);
});

test('bad version 2 parameters: an error naming the provider and the field, nothing sent', () => {
	const error = (name) =>
		outputs(run, name)[2][0]?.json.error ?? JSON.stringify(outputs(run, name));
	assert.match(
		error('preset without a model'),
		/^Provider "nomodel-\w+" \(providers\[0\]\): "Model" is required \(e\.g\. gpt-4o-mini\)/,
	);
	assert.match(
		error('credential type not chosen'),
		/^Provider "unchosen-\w+" \(providers\[0\]\): "Authentication" is OpenAI, which is not in "Credential Types Used": add it there and pick the credential/,
	);
	assert.match(
		error('secret without a name'),
		/^Provider "noname-\w+" \(providers\[0\]\): "Secret Name" is empty/,
	);
	for (const id of ['nomodel', 'unchosen', 'noname']) assert.equal(atVendor(id).length, 0, id);
});

test("a credential's Allowed HTTP Request Domains is honoured: nothing is sent elsewhere", () => {
	const [, , failed] = outputs(run, 'credential restricted to other domains');
	assert.equal(
		failed.length,
		1,
		JSON.stringify(outputs(run, 'credential restricted to other domains')).slice(0, 2000),
	);
	assert.match(
		failed[0].json.error,
		/^Provider "restricted-\w+": its Header Auth credential allows requests only to api\.example\.com, not to 127\.0\.0\.1:\d+$/,
	);
	assert.equal(atRoute('restricted').length, 0, 'nothing sent');
});
