// Secrets in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20): a canary key in
// this package's credential (Resilient Provider Secrets), sent to providers that reflect it in
// their body, echo only its token, put it in an error body and in Retry-After / rate-limit
// headers, fail with it on 401 and 500, with the breaker rows kept in Redis and in Postgres.
// ONE workflow, ONE `n8n execute` at debug log level. The canary (and its token alone) must
// appear nowhere: output items, error messages, n8n's stdout/stderr, the files of n8n's user
// folder (its SQLite database with the saved execution), Redis keys and values, Postgres rows,
// and the breaker transition events the trigger reads (Redis stream, Postgres events table).
// And it must have reached the providers (they log a hash of the header, never the header).
// Version 2 adds a canary in each of n8n's own credential types (Header, Bearer, Query and Basic
// Auth, OpenAI, Anthropic, Google Gemini): each sent to a provider that reflects every header
// and the query string it got, with a 500 and a 401 on the way, under the same checks.
// The Resilient Chat Model too, in the same execution: Basic LLM Chains over it, its inputs n8n's
// OpenAI (Responses API and chat completions) and Anthropic Chat Models whose credentials carry
// the OpenAI and Anthropic canaries, at vendors that put the key they received in their error
// body and headers (500, 429, 400, 401, 503): its run-data entries (one per model call) and the
// errors it throws are under the same checks. The package is installed as n8n's community
// installer does, so the chat model gets n8n's own @langchain/core.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, rmSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startProviders, authHash } from '../support/providers.mjs';
import { postgresCredential, redisCredential } from '../support/store-credentials.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT, PG_PORT, psql } from '../support/services.mjs';
import { startLlmVendors, keyHash } from '../support/llm-vendors.mjs';
import {
	anthropicCredential,
	anthropicModel,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientChatModel,
} from '../support/chat-workflows.mjs';
import { installLikeN8n, PKG } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const TOKEN = `sk-canary-${uid()}${uid()}`;
const CANARY = `Bearer ${TOKEN}`;
const TOKEN2 = `sk-second-${uid()}${uid()}`;
const CANARY2 = `Bearer ${TOKEN2}`;
const CRLF = `Bearer sk-crlf-${uid()}\r\nX-Injected: yes`;
const canary = (kind) => `${kind}-canary-${uid()}${uid()}`;
const BASIC = { user: 'svc-user', password: canary('basic') };
/** n8n credential type -> [its data holding a canary, what the provider sees in its echo]. */
const N8N_CREDS = {
	httpHeaderAuth: { name: 'X-Api-Key', value: canary('header') },
	httpBearerAuth: { token: canary('bearer') },
	httpQueryAuth: { name: 'api_key', value: canary('query') },
	httpBasicAuth: BASIC,
	openAiApi: { apiKey: canary('openai') },
	anthropicApi: { apiKey: canary('anthropic') },
	googlePalmApi: { apiKey: canary('gemini'), host: 'https://generativelanguage.googleapis.com' },
};
const BASIC_HEADER = Buffer.from(`${BASIC.user}:${BASIC.password}`).toString('base64');
const NEEDLES = [
	TOKEN,
	TOKEN2,
	'sk-crlf-',
	...Object.values(N8N_CREDS).map((d) => d.value ?? d.token ?? d.password ?? d.apiKey),
	BASIC_HEADER,
];
const PREFIX = `sec-${id}:`;
const TABLE = `sec_${id}`;
const MARKER = `marker-${id}`;
let providers, base, n8n, run, log, vendors;

const redisCli = (...args) =>
	execFileSync('redis-cli', ['-p', String(REDIS_PORT), ...args]).toString();
const leaks = (text) => NEEDLES.filter((n) => text.includes(n));

const B = {};
function branch(name, chain, extra = {}) {
	B[name] = { name, chain, extra };
}
// chain entries: [route with query, secretName, provider overrides]
branch('reflects the key', [['/echo-auth', 'main']], { items: 2 });
branch('reflects the token only', [['/echo-token', 'main']]);
branch(
	'500 with the key in body and headers, redis',
	[
		['/echo-auth-fail?status=500', 'main', { maxAttempts: 2 }],
		['/echo-auth', 'other'],
	],
	{ store: 'redis', items: 3 },
);
branch(
	'500 with the key in body and headers, postgres',
	[
		['/echo-auth-fail?status=500', 'main', { maxAttempts: 2 }],
		['/echo-auth', 'other'],
	],
	{ store: 'postgres', items: 3 },
);
branch('401 with the key in the body', [['/echo-auth-fail?status=401', 'main']]);
branch('429 with the key as Retry-After', [
	['/echo-auth-fail?status=429', 'other', { maxAttempts: 1 }],
]);
branch('secret with CRLF (header injection)', [['/echo-auth', 'crlf']], { continueOnFail: true });
branch('unknown secret name', [['/echo-auth', 'absent']], { continueOnFail: true });
// Version 2: each n8n credential type, through a 500 (retried) and a 401 to a provider that
// reflects every header and the query string.
for (const type of Object.keys(N8N_CREDS))
	branch(
		`v2 ${type}`,
		[
			['/echo-all?status=500', type, { maxAttempts: 2 }],
			['/echo-all?status=401', type],
			['/echo-all', type],
		],
		{ credentialType: type },
	);

// Chat scenarios: a Basic LLM Chain over a Resilient Chat Model whose inputs are [vendor
// instance, dialect, script]; `oa` is n8n's OpenAI Chat Model at its newest version (Responses
// API), `oaChat` the same on chat completions (version 1.2), `an` the Anthropic Chat Model.
// Anthropic's vendor reflects the key in headers only: the Anthropic SDK puts a body without a
// top-level `message` whole into its error's message, which n8n 2 writes into the Anthropic Chat
// Model's own run data (`error.cause.message`) with or without this package (measured).
const CHAT = {
	'chat: two models reflect the key, the third serves': [
		['cOa', 'oa', [{ reflect: 500 }]],
		['cAn', 'an', [{ reflect: 429, inBody: false }]],
		['cOk', 'oaChat', ['ok']],
	],
	'chat: a 400 reflecting the key stops the call': [
		['cBad', 'oa', [{ reflect: 400 }]],
		['cNever', 'an', ['ok']],
	],
	'chat: every model fails reflecting the key': [
		['cOa401', 'oa', [{ reflect: 401 }]],
		['cAn503', 'an', [{ reflect: 503, inBody: false }]],
	],
};
const CHAT_ITEMS = 2;

/** n8n's credential of chat input `v` (a loopback vendor instance) with the canary key. */
const chatCredential = (v, kind) =>
	kind === 'an'
		? anthropicCredential(vendors, v, N8N_CREDS.anthropicApi.apiKey)
		: openAiCredential(vendors, v, N8N_CREDS.openAiApi.apiKey);
const chatCredentials = () =>
	Object.values(CHAT).flatMap((inputs) => inputs.map(([v, kind]) => chatCredential(v, kind)));

/** The chat scenarios as nodes of the one workflow: Start -> items -> each chain. */
function addChatScenarios(wf) {
	wf.nodes.push({
		id: 'chatItems',
		name: 'Chat items',
		type: 'n8n-nodes-base.set',
		typeVersion: 3.4,
		position: [200, -400],
		parameters: {
			mode: 'raw',
			jsonOutput: JSON.stringify({
				items: Array.from({ length: CHAT_ITEMS }, (_, i) => ({ q: `Q${i}`, marker: MARKER })),
			}),
		},
	});
	wf.nodes.push({
		id: 'chatSplit',
		name: 'Chat split',
		type: 'n8n-nodes-base.splitOut',
		typeVersion: 1,
		position: [400, -400],
		parameters: { fieldToSplitOut: 'items' },
	});
	wf.connections.Start.main[0].push({ node: 'Chat items', type: 'main', index: 0 });
	wf.connections['Chat items'] = { main: [[{ node: 'Chat split', type: 'main', index: 0 }]] };
	wf.connections['Chat split'] = { main: [[]] };
	Object.entries(CHAT).forEach(([name, inputs], k) => {
		const y = -800 - 400 * k;
		const sub = `${name} model`;
		wf.nodes.push(
			llmChain(name, [700, y]),
			resilientChatModel(
				sub,
				{
					numberInputs: inputs.length,
					providers: { provider: inputs.map(([v]) => ({ name: `${v}-${id}` })) },
					retryPolicy: { baseMs: 20, capMs: 50 },
				},
				[700, y + 200],
				`${PKG}.resilientChatModel`,
			),
		);
		wf.connections['Chat split'].main[0].push({ node: name, type: 'main', index: 0 });
		wf.connections[sub] = {
			ai_languageModel: [[{ node: name, type: 'ai_languageModel', index: 0 }]],
		};
		inputs.forEach(([v, kind, script], i) => {
			vendors.script(v, script);
			const cred = chatCredential(v, kind);
			const node = (kind === 'an' ? anthropicModel : openAiModel)(`${name} input ${i + 1}`, cred, [
				500 + 200 * i,
				y + 400,
			]);
			if (kind === 'oa') node.typeVersion = 1.3;
			wf.nodes.push(node);
			wf.connections[node.name] = {
				ai_languageModel: [[{ node: sub, type: 'ai_languageModel', index: i }]],
			};
		});
	});
}

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	vendors = await startLlmVendors({
		openai: N8N_CREDS.openAiApi.apiKey,
		anthropic: N8N_CREDS.anthropicApi.apiKey,
	});
	// Installed as n8n's community installer does (the chat model needs n8n's @langchain/core).
	n8n = n8nInstance(n8nInstall(major), { extensions: null, env: { N8N_LOG_LEVEL: 'debug' } });
	installLikeN8n(packWorktree(), n8n.home);
	n8n.importCredentials([
		...chatCredentials(),
		...Object.entries(N8N_CREDS).map(([type, data]) => ({
			id: `canary${type}`.slice(0, 15).padEnd(15, '0'),
			name: `canary ${type}`,
			type,
			data,
		})),
		{
			id: 'secretsCred0001',
			name: 'canary secrets',
			type: 'resilientProviderSecretsApi',
			data: { secrets: JSON.stringify({ main: CANARY, other: CANARY2, crlf: CRLF }) },
		},
		redisCredential('secRedisCred001', 'redis', REDIS_PORT),
		postgresCredential('secPgCred000001', 'postgres', PG_PORT),
	]);
	rmSync(path.join(n8n.home, 'creds.json')); // the plain-text import file is ours, not n8n's
	const branches = Object.values(B).map((b, k) => {
		b.id = `${id}-${k}`;
		if (b.extra.node) return { name: b.name, ...b.extra.node() }; // a node of its own shape
		const type = b.extra.credentialType;
		if (type)
			return {
				name: b.name,
				typeVersion: 2,
				item: { marker: MARKER },
				parameters: {
					credentialTypes: [type],
					providers: {
						provider: b.chain.map(([route, , options], j) => ({
							name: `p${j}-${b.id}`,
							kind: 'custom',
							authentication: type,
							url: `${base}${route}${route.includes('?') ? '&' : '?'}id=${b.id}`,
							options: options ?? {},
						})),
					},
					retryPolicy: { baseMs: 20, capMs: 50, deferSpreadMs: 0, budgetMs: 10000 },
				},
				nodeSettings: {
					credentials: {
						[type]: {
							id: `canary${type}`.slice(0, 15).padEnd(15, '0'),
							name: `canary ${type}`,
						},
					},
				},
			};
		const provider = b.chain.map(([route, secretName, over], j) => ({
			name: `p${j}-${b.id}`,
			url: `${base}${route}${route.includes('?') ? '&' : '?'}id=${b.id}`,
			secretName,
			...(over ?? {}),
		}));
		const store = b.extra.store;
		return {
			name: b.name,
			items: b.extra.items ?? 1,
			item: { marker: MARKER },
			parameters: {
				providers: { provider },
				retryPolicy: { baseMs: 20, capMs: 50, deferSpreadMs: 0, budgetMs: 10000 },
				breaker: { threshold: 1 },
				...(store
					? {
							stateStore: store,
							storeOptions: store === 'redis' ? { keyPrefix: PREFIX } : { tableName: TABLE },
						}
					: {}),
			},
			nodeSettings: {
				...(b.extra.continueOnFail ? { onError: 'continueRegularOutput' } : {}),
				credentials: {
					resilientProviderSecretsApi: { id: 'secretsCred0001', name: 'canary secrets' },
					...(store === 'redis' ? { redis: { id: 'secRedisCred001', name: 'redis' } } : {}),
					...(store === 'postgres'
						? { postgres: { id: 'secPgCred000001', name: 'postgres' } }
						: {}),
				},
			},
		};
	});
	const wf = branchesWorkflow(`secrets${uid()}`, n8n.nodeType, branches);
	addChatScenarios(wf);
	n8n.importWorkflow(wf);
	const t0 = Date.now();
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 120_000 }));
	run ??= debugRunData(log);
	console.log(
		`n8n ${major}: ${branches.length} secret scenarios in one execution (${Date.now() - t0} ms)`,
	);
	assert.ok(run, `n8n produced run data: ${log.slice(-2000).split(TOKEN).join('<CANARY>')}`);
});
after(async () => {
	await providers?.close();
	await vendors?.close();
	try {
		psql(
			`DROP TABLE IF EXISTS ${TABLE}, ${TABLE}_counters, ${TABLE}_event_claims, ${TABLE}_event_consumers, ${TABLE}_events`,
		);
	} catch {
		/* best effort */
	}
});

/** At debug level n8n prints the run data through its logger: colour codes, a time stamp before
 * the opening brace and the caller's file after the closing one. */
function debugRunData(text) {
	const plain = text.replace(/\x1b\[[0-9;]*m/g, '');
	const open = /^[\d:.]+\s+\w+\s+\{$/m.exec(plain);
	const end = plain.indexOf('\n} { "file": "base-command.js"', open?.index ?? 0);
	if (!open || end < 0) return null;
	return JSON.parse(plain.slice(plain.indexOf('{', open.index), end + 2));
}

const hitsOf = (name) => providers.arrivals.filter((a) => a.id === B[name].id);

test('the providers did receive the canary keys (by hash); a secret with CR/LF is never sent', () => {
	const echo = hitsOf('reflects the key');
	assert.equal(echo.length, 2);
	assert.ok(
		echo.every((a) => a.authHash === authHash(CANARY)),
		'the exact canary arrived',
	);
	assert.ok(
		hitsOf('500 with the key in body and headers, redis').some(
			(a) => a.route === '/echo-auth' && a.authHash === authHash(CANARY2),
		),
		'the second secret reached the fallback',
	);
	assert.ok(
		hitsOf('429 with the key as Retry-After').every((a) => a.authHash === authHash(CANARY2)),
	);
	assert.equal(
		hitsOf('secret with CRLF (header injection)').length,
		0,
		'a header with CR/LF is refused before it leaves',
	);
	assert.equal(hitsOf('unknown secret name').length, 0);
});

test('outputs: the reflected key is replaced by ***, each scenario leaves where it should', () => {
	const [ok] = outputs(run, 'reflects the key');
	assert.deepEqual(
		ok.map((x) => x.json.you_sent),
		['***', '***'],
	);
	assert.equal(outputs(run, 'reflects the token only')[0][0].json.nested[0].token, '***');
	for (const s of ['redis', 'postgres']) {
		const [served, deferred, failed] = outputs(run, `500 with the key in body and headers, ${s}`);
		assert.equal(served.length + deferred.length + failed.length, 3);
		assert.equal(served.length, 3, `${s}: the fallback served every item`);
		assert.ok(served.every((x) => x.json.you_sent === '***'));
		assert.ok(served[0].json._resilience.attempts.some((a) => a.outcome === '500'));
	}
	assert.equal(outputs(run, '401 with the key in the body')[2][0].json.reason, 'non_retryable');
	const [, deferred429] = outputs(run, '429 with the key as Retry-After');
	assert.equal(deferred429.length, 1);
	assert.equal(
		deferred429[0].json._resilience.attempts[0].retry_after,
		false,
		'a key is no Retry-After hint',
	);
	const [, , crlf] = outputs(run, 'secret with CRLF (header injection)');
	assert.equal(crlf.length, 1);
	assert.match(
		crlf[0].json.error,
		/Provider "p0-[^"]+": secret "crlf" holds a line break or control character, which a header cannot carry \(the value is not shown\)/,
	);
	const unknown = outputs(run, 'unknown secret name').flat();
	assert.match(
		unknown[0].json.error,
		/secret "absent" is not in the Resilient Provider Secrets credential/,
	);
});

test("version 2: each n8n credential type's key reached the provider and comes back as ***", () => {
	const seen = (name) => outputs(run, name)[0][0]?.json;
	const echo = Object.fromEntries(Object.keys(N8N_CREDS).map((t) => [t, seen(`v2 ${t}`)]));
	for (const [type, json] of Object.entries(echo)) {
		assert.ok(
			json,
			`v2 ${type} served: ${JSON.stringify(outputs(run, `v2 ${type}`)).slice(0, 1500)}`,
		);
		const outcomes = json._resilience.attempts.map((a) => a.outcome);
		assert.deepEqual(outcomes, ['500', '500', '401', '200'], `${type}: 500 retried, 401 not`);
	}
	assert.equal(echo.httpHeaderAuth.headers['x-api-key'], '***');
	assert.equal(echo.httpBearerAuth.headers.authorization, 'Bearer ***');
	assert.match(echo.httpQueryAuth.query, /[?&]api_key=\*\*\*(&|$)/);
	assert.equal(echo.httpBasicAuth.headers.authorization, 'Basic ***');
	assert.equal(echo.openAiApi.headers.authorization, 'Bearer ***');
	assert.equal(echo.anthropicApi.headers['x-api-key'], '***');
	assert.match(echo.googlePalmApi.query, /[?&]key=\*\*\*(&|$)/);
	// Each one arrived three times at the provider with the key (the 500 twice, the 401 once) and
	// once more where it was served.
	for (const type of Object.keys(N8N_CREDS)) assert.equal(hitsOf(`v2 ${type}`).length, 4, type);
});

test('chat: the vendors got the canary keys; the sub-node recorded every model call; each chain ended as its scenario says', () => {
	const [first, stop, none] = Object.keys(CHAT);
	const hits = (v) => vendors.arrivals.filter((a) => a.id === v);
	for (const [v, kind] of Object.values(CHAT).flat()) {
		if (v === 'cNever') continue;
		assert.ok(hits(v).length > 0, `${v} was called`);
		const key =
			kind === 'an' ? N8N_CREDS.anthropicApi.apiKey : `Bearer ${N8N_CREDS.openAiApi.apiKey}`;
		assert.ok(
			hits(v).every((a) => a.accepted && a.keyHash === keyHash(key)),
			`${v}: the exact canary arrived`,
		);
	}
	assert.ok(
		hits('cOa').every((a) => a.dialect === 'openaiResponses'),
		'version 1.3: Responses API',
	);
	assert.equal(hits('cNever').length, 0, 'a 400 does not move on');
	const data = run.data.resultData.runData;
	const entries = (name) =>
		(data[`${name} model`] ?? []).map((t) => t.data?.ai_languageModel?.[0]?.[0]?.json);
	const served = outputs(run, first)[0];
	assert.deepEqual(
		served.map((i) => i.json.text),
		Array(CHAT_ITEMS).fill('cOk says hi'),
		JSON.stringify(served).slice(0, 1500),
	);
	const outcomes = entries(first)[0].attempts.map((a) => a.outcome);
	assert.ok(outcomes.includes('500') && outcomes.includes('429'), outcomes.join());
	for (const name of [stop, none]) {
		const failed = outputs(run, name)[0];
		assert.equal(failed.length, CHAT_ITEMS, name);
		assert.ok(
			failed.every((i) => i.json.error),
			JSON.stringify(failed).slice(0, 1500),
		);
		assert.ok((data[`${name} model`] ?? []).length > 0, `${name}: the sub-node has run data`);
	}
});

test('the canary is in no output item and no error message (the whole run data)', () => {
	assert.deepEqual(leaks(JSON.stringify(run)), []);
});

test("the canary is not in n8n's stdout/stderr (debug log level)", () => {
	assert.ok(log.includes('resilient-provider-call attempt'), 'the node did log its attempts');
	assert.deepEqual(leaks(log), []);
});

test("the canary is not in any file of n8n's user folder, which holds the saved execution", () => {
	const files = [];
	const walk = (dir) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const p = path.join(dir, e.name);
			if (e.isDirectory()) walk(p);
			else if (e.isFile() && statSync(p).size < 512 * 1024 * 1024) files.push(p);
		}
	};
	walk(n8n.home);
	const db = files.filter((f) => /database\.sqlite/.test(f));
	assert.ok(
		db.length,
		`n8n's SQLite database is there: ${files.map((f) => path.relative(n8n.home, f))}`,
	);
	const dbText = db.map((f) => readFileSync(f).toString('latin1')).join('\n');
	assert.ok(
		dbText.includes(MARKER),
		"control: the execution data (with the items' marker) was saved in the database",
	);
	const found = files.flatMap((f) =>
		leaks(readFileSync(f).toString('latin1')).map(
			(n) => `${path.relative(n8n.home, f)}: ${n.slice(0, 12)}`,
		),
	);
	assert.deepEqual(found, []);
	console.log(
		`searched ${files.length} files of n8n's user folder (${db.map((f) => `${path.basename(f)} ${statSync(f).size} B`).join(', ')})`,
	);
});

test('the canary is not in the Redis keys or values, nor in the Postgres rows', () => {
	const keys = redisCli('--scan', '--pattern', `${PREFIX}*`).split('\n').filter(Boolean);
	assert.ok(keys.length >= 1, 'control: the Redis store wrote rows');
	let text = keys.join('\n');
	// Rows (strings), counters (hashes) and the scope's transition events (a stream: the trigger's
	// payloads, written with the rows).
	const read = { hash: ['HGETALL'], stream: ['XRANGE', '-', '+'], string: ['GET'] };
	for (const k of keys) {
		const type = redisCli('TYPE', k).trim();
		assert.ok(read[type], `${k}: a ${type}`);
		text += '\n' + redisCli(read[type][0], k, ...read[type].slice(1));
	}
	assert.match(text, /open/, 'control: a tripped breaker row is stored');
	assert.match(text, /"to":"open"/, 'control: the transition event is stored');
	assert.deepEqual(leaks(text), []);
	assert.deepEqual(leaks(redisCli('--scan')), [], 'no key anywhere in Redis holds it');
	const rows = psql(
		`SELECT t::text FROM ${TABLE} t UNION ALL SELECT c::text FROM ${TABLE}_counters c
       UNION ALL SELECT e::text FROM ${TABLE}_events e`,
	);
	assert.match(rows, /open/, 'control: the Postgres store wrote rows');
	assert.match(rows, /""to"":""open""/, 'control: the transition event is stored');
	assert.deepEqual(leaks(rows), []);
	redisCli('DEL', ...keys);
});

// ---- Trigger payloads and Get Metrics labels ----
// The 500 providers reflect the key in their error body and open their breakers (threshold 1):
// the transition events carry their last failure. Each stored event becomes the trigger's item
// through the trigger's own code (dist/lib/trigger/payload.js); a Get Metrics node, run in the
// same execution after the Redis branch, renders those providers' labels and counters.
import { createRequire } from 'node:module';
import { ROOT } from '../support/n8n.mjs';

const { triggerPayload } = createRequire(import.meta.url)(
	path.join(ROOT, 'dist/lib/trigger/payload.js'),
);
const REDIS_500 = '500 with the key in body and headers, redis';
const POSTGRES_500 = '500 with the key in body and headers, postgres';
const chainNames = (name) => B[name].chain.map((_, j) => `p${j}-${B[name].id}`);
branch('metrics of the redis 500 chain', [], {
	node: () => ({
		typeVersion: 2,
		parameters: {
			operation: 'getMetrics',
			providers: { provider: chainNames(REDIS_500).map((name) => ({ name })) },
			stateStore: 'redis',
			storeOptions: { keyPrefix: PREFIX },
		},
		nodeSettings: { credentials: { redis: { id: 'secRedisCred001', name: 'redis' } } },
	}),
});

// Read once the execution is done (the runner may start this hook beside the first one, so it
// waits for the run), before a test cleans Redis.
const stored = {};
before(async () => {
	for (let end = Date.now() + 300_000; !run && !log; await new Promise((r) => setTimeout(r, 200)))
		if (Date.now() > end) return;
	const rows = (text) => text.split('\n').filter((l) => l.startsWith('{'));
	stored[REDIS_500] = rows(redisCli('XRANGE', `${PREFIX}{global}:events`, '-', '+'));
	stored[POSTGRES_500] = rows(psql(`SELECT event FROM ${TABLE}_events ORDER BY id`));
});

test("the trigger's items hold the reflecting provider's last failure, never the key", () => {
	for (const [name, events] of Object.entries(stored)) {
		const items = events.map((e) => triggerPayload(e, 'global', ['open', 'closed', 'half_open']));
		const opened = items.find((i) => i.provider === chainNames(name)[0] && i.to === 'open');
		assert.ok(opened, `control: ${name} opened: ${JSON.stringify(items)}`);
		assert.equal(opened.last_failure, '500', 'control: the failure that opened it');
		assert.deepEqual(leaks(JSON.stringify(items)), [], name);
	}
});

test('the Get Metrics text names the providers that reflected the key, and holds no key', () => {
	const [[item]] = outputs(run, 'metrics of the redis 500 chain');
	const text = item.json.metrics;
	const [first] = chainNames(REDIS_500);
	assert.match(
		text,
		new RegExp(`resilient_provider_state\\{scope="global",provider="${first}"\\} 2`),
	);
	assert.match(
		text,
		new RegExp(`resilient_provider_failures_total\\{scope="global",provider="${first}"\\} [1-9]`),
	);
	assert.deepEqual(leaks(text), []);
});
