// One breaker and one set of counters for every entry point, in real n8n (N8N_MAJOR=2: 2.41.1 on
// Node 24; 1: 1.123.81 on Node 20), the package installed as n8n's community installer does. One
// execution on one fresh Redis store, the same two provider names everywhere: the Resilient Chat
// Model under a Basic LLM Chain (4 calls), Call Chain (3 items) and Check/Report around an HTTP
// Request node (3 items, one at a time), in that order. Provider `dead` fails at both of its
// vendors (the LLM vendor and the HTTP one), `live` answers at both. The breaker (threshold 3) is
// shared: whichever entry point meets `dead` first opens it for the others. Get Metrics at the
// end: every counter equals what the vendors counted, summed over the three paths.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { metricValue } from '../support/metrics-text.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import {
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { guardWorkflow, httpGuarded, node } from '../support/guard-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: `sk-one-${uid()}`, anthropic: 'unused', gemini: 'unused' };
const ITEMS = { chat: 4, chain: 3, guard: 3 };
const THRESHOLD = 3;
const id = uid();
const [dead, live] = [`one-dead-${id}`, `one-live-${id}`];
const REDIS = { redis: { id: 'oneRedisCred0001', name: 'one redis' } };
const HEADER = { id: 'oneHeaderCred001', name: 'one header' };
let providers, vendors, run, log;

/** `n` items {q, n} from a Set and a Split Out named after `label`, placed at row `y`. */
const itemsOf = (label, n, y) =>
	[
		node(`${label} items`, 'n8n-nodes-base.set', 3.4, {
			mode: 'raw',
			jsonOutput: JSON.stringify({
				items: Array.from({ length: n }, (_, i) => ({ n: i + 1, q: `Question ${i + 1}` })),
			}),
		}),
		node(`${label} split`, 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'items' }),
	].map((x, k) => ({ ...x, position: [200 * (k + 1), y] }));
const to = (n) => [{ node: n, type: 'main', index: 0 }];

before(async () => {
	providers = await startProviders();
	const base = `http://127.0.0.1:${providers.port}`;
	vendors = await startLlmVendors(KEYS);
	vendors.script('dead', [500]);
	vendors.script('live', ['ok']);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const cred = {
		dead: openAiCredential(vendors, 'dead', KEYS.openai),
		live: openAiCredential(vendors, 'live', KEYS.openai),
	};
	n8n.importCredentials([
		...Object.values(cred),
		{ ...HEADER, type: 'httpHeaderAuth', data: { name: 'Authorization', value: 'Bearer x' } },
		{
			...REDIS.redis,
			type: 'redis',
			data: { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' },
		},
	]);
	const store = { stateStore: 'redis', stateScope: 'provider' };
	const breaker = { threshold: THRESHOLD, openMs: 600_000 };
	const urls = { [dead]: `${base}/always500?id=${id}`, [live]: `${base}/ok?id=${id}` };
	const providerList = [dead, live].map((name) => ({ name, url: urls[name] }));

	// The guard's workflow (Items, Split, Loop, Check, HTTP Request, Report, Done) runs last: n8n's
	// v1 order runs the Start's branches top to bottom, so the chat (y -800) and the chain (y -400)
	// go first.
	const wf = guardWorkflow(n8n.nodeType, `onecounters${id}`, {
		items: ITEMS.guard,
		guarded: httpGuarded(HEADER),
		check: { providers: { provider: providerList }, breaker, ...store },
		report: store,
		extra: { credentials: REDIS },
	});
	const chat = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: [{ name: dead }, { name: live }] },
			breaker,
			retryPolicy: { baseMs: 50, capMs: 200 },
			...store,
		},
		[600, -600],
		'Chat chain',
		[
			openAiModel('Dead model', cred.dead, [500, -500]),
			openAiModel('Live model', cred.live, [700, -500]),
		],
	);
	chat.nodes[0].credentials = REDIS;
	const chain = node(
		'Call Chain',
		n8n.nodeType,
		2,
		{
			providers: { provider: providerList },
			retryPolicy: { maxAttempts: 1, baseMs: 50, capMs: 200 },
			breaker,
			...store,
		},
		{ credentials: REDIS, position: [600, -400] },
	);
	const metrics = node(
		'Metrics',
		n8n.nodeType,
		2,
		{
			operation: 'getMetrics',
			providers: { provider: [{ name: dead }, { name: live }] },
			...store,
		},
		{ credentials: REDIS, position: [1400, 0], executeOnce: true },
	);
	wf.nodes.push(
		...itemsOf('Chat', ITEMS.chat, -800),
		{ ...llmChain('Chat chain', [600, -800]), continueOnFail: false },
		...chat.nodes,
		...itemsOf('Chain', ITEMS.chain, -400),
		chain,
		metrics,
	);
	wf.connections.Start.main[0].unshift(...to('Chat items'), ...to('Chain items'));
	wf.connections['Chat items'] = { main: [to('Chat split')] };
	wf.connections['Chat split'] = { main: [to('Chat chain')] };
	wf.connections['Chain items'] = { main: [to('Chain split')] };
	wf.connections['Chain split'] = { main: [to('Call Chain')] };
	for (const [from, into, index] of chat.models)
		(wf.connections[from] ??= {}).ai_languageModel = [
			[{ node: into, type: 'ai_languageModel', index }],
		];
	wf.connections.Done = { main: [to('Metrics')] };
	n8n.importWorkflow(wf);
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 180_000 }));
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => {
	await providers?.close();
	await vendors?.close();
});

test('chat model, Call Chain and Check/Report share one breaker: the dead provider gets the threshold in all, the live one every call', () => {
	const chatItems = run.data.resultData.runData['Chat chain'][0].data.main[0];
	assert.equal(chatItems.length, ITEMS.chat);
	assert.equal(outputs(run, 'Call Chain')[0].length, ITEMS.chain, 'Call Chain served every item');
	const sent = {
		dead:
			vendors.accepted('dead') +
			providers.arrivals.filter((a) => a.route === '/always500' && a.id === id).length,
		live:
			vendors.accepted('live') +
			providers.arrivals.filter((a) => a.route === '/ok' && a.id === id).length,
	};
	console.log(
		`n8n ${major}: dead ${sent.dead} requests (LLM ${vendors.accepted('dead')}), live ${sent.live} over ${ITEMS.chat} chat calls, ${ITEMS.chain} chain items, ${ITEMS.guard} guarded items`,
	);
	assert.equal(
		sent.dead,
		THRESHOLD,
		'the breaker opened after the threshold, for every entry point',
	);
	assert.equal(sent.live, ITEMS.chat + ITEMS.chain + ITEMS.guard);
});

test('Get Metrics after all three: each counter equals what the vendors counted, summed over the paths', () => {
	const text = outputs(run, 'Metrics')[0][0].json.metrics;
	const metric = (name, provider) => metricValue(text, name, provider) ?? 0;
	const all = ITEMS.chat + ITEMS.chain + ITEMS.guard;
	const seen = Object.fromEntries(
		['calls_total', 'failures_total', 'rejections_total', 'transitions_total'].map((m) => [
			m,
			[metric(m, dead), metric(m, live)],
		]),
	);
	console.log(`n8n ${major}: metrics [dead, live] ${JSON.stringify(seen)}`);
	assert.deepEqual(seen, {
		calls_total: [THRESHOLD, all],
		failures_total: [THRESHOLD, 0],
		// Every call, item or check after the opening met the open breaker once.
		rejections_total: [all - THRESHOLD, 0],
		transitions_total: [1, 0],
	});
});
