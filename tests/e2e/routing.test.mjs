// Routing beyond order (issue 29), in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on
// Node 20), the package installed as n8n's community installer does, every Call Chain on one
// Redis store. Counted at the loopback provider:
// - weights 3:1 over 2000 items, sent by two `n8n execute` processes at once: 75 % ± 3 % on the
//   first; a provider of weight 0 gets nothing;
// - tiers: a1 and a2 (tier 1, weighted 1:1) and b (tier 2): b gets nothing while a1 or a2 can
//   take the call, everything once both breakers are open;
// - least busy: one slow path and one fast, 8 items in flight: the fast path takes at least twice
//   the slow path's calls (weighted 1:1 gives about as many to each);
// - latency: one process's calls write the latency rows, and the next process's first items
//   already go to the faster path;
// - the Resilient Chat Model under a Basic LLM Chain, two models in one tier, weighted 3:1: the
//   calls split as the weights say; with the first model dead, it costs its threshold, no more;
// - an AI Agent with a tool over two models weighted 1:1: the conversations split between them,
//   and each one's second round goes to the model that answered its first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { itemsInto, node } from '../support/guard-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	aiAgent,
	calculatorTool,
	chatWorkflow,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { packWorktree } from '../chat/support.mjs';
import { MAX_CAS_RACES } from '../../dist/lib/engineConstants.js';

const major = Number(process.env.N8N_MAJOR ?? 2);
const id = uid();
const REDIS = { redis: { id: 'routeRedisCred01', name: 'route redis' } };
const KEYS = { openai: `sk-route-${id}`, anthropic: 'unused', gemini: 'unused' };
const CHAT_ITEMS = 80;
const AGENT_ITEMS = 10;
let providers, vendors, n8n, base;

/** A Basic LLM Chain over `CHAT_ITEMS` questions on a Resilient Chat Model (memory store, weighted
 * 3:1) over n8n's OpenAI Chat Model at vendor instances `first` and `second`. */
function chatRouted(wid, first, second) {
	const cred = [first, second].map((v) => openAiCredential(vendors, v, KEYS.openai));
	const sub = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: {
				provider: [
					{ name: `${first}-${id}`, weight: 3 },
					{ name: `${second}-${id}`, weight: 1 },
				],
			},
			retryPolicy: { routing: 'weighted', baseMs: 20, capMs: 50 },
			breaker: { threshold: 3, openMs: 600_000 },
		},
		[600, 200],
		'Chain',
		[openAiModel('Model 1', cred[0], [500, 400]), openAiModel('Model 2', cred[1], [700, 400])],
	);
	return {
		cred,
		wf: chatWorkflow(wid, {
			items: CHAT_ITEMS,
			nodes: [llmChain('Chain', [600, 0]), ...sub.nodes],
			roots: ['Chain'],
			models: sub.models,
		}),
	};
}

/** Calls that reached the provider for path id `tag`. */
const calls = (tag) => providers.arrivals.filter((a) => a.id === `${tag}-${id}`).length;

/** Start → Set of `items` items → Split Out → Call Chain (version 2, Redis) with `parameters`. */
function chainWorkflow(wid, items, parameters) {
	return itemsInto(
		wid,
		items,
		node(
			'Call Chain',
			n8n.nodeType,
			2,
			{ stateStore: 'redis', stateScope: 'provider', ...parameters },
			{ credentials: REDIS },
		),
	);
}

/** A provider row: `path` at the loopback provider, tagged `tag`; Tier and Weight as given. */
const row = (name, path, tag, options = {}) => ({
	name: `${name}-${id}`,
	url: `${base}${path}${path.includes('?') ? '&' : '?'}id=${tag}-${id}`,
	options,
});

const WORKFLOWS = {
	weighted: () =>
		// 500 items an execution, four executions (two at a time).
		chainWorkflow(`routeweighted${id}`, 500, {
			providers: {
				provider: [row('w-a', '/ok', 'w-a', { weight: 3 }), row('w-b', '/ok', 'w-b')],
			},
			retryPolicy: { routing: 'weighted' },
		}),
	drained: () =>
		chainWorkflow(`routedrained${id}`, 50, {
			providers: {
				provider: [row('d-a', '/ok', 'd-a', { weight: 0 }), row('d-b', '/ok', 'd-b')],
			},
		}),
	tiersHealthy: () =>
		chainWorkflow(`routetiers${id}`, 200, {
			providers: {
				provider: [
					row('t-b', '/ok', 't-b', { tier: 2 }),
					row('t-a1', '/ok', 't-a1'),
					row('t-a2', '/ok', 't-a2'),
				],
			},
			retryPolicy: { routing: 'weighted' },
		}),
	tiersDown: () =>
		chainWorkflow(`routetiersdown${id}`, 100, {
			providers: {
				provider: [
					row('td-b', '/ok', 'td-b', { tier: 2 }),
					row('td-a1', '/always500', 'td-a1'),
					row('td-a2', '/always500', 'td-a2'),
				],
			},
			retryPolicy: { routing: 'weighted', maxAttempts: 1 },
			breaker: { threshold: 2, openMs: 600_000 },
		}),
	latency: () =>
		chainWorkflow(`routelatency${id}`, 150, {
			providers: {
				provider: [row('l-slow', '/ok?delay=80', 'l-slow'), row('l-fast', '/ok?delay=5', 'l-fast')],
			},
			retryPolicy: { routing: 'latency' },
		}),
	...Object.fromEntries(
		['least_busy', 'weighted'].map((routing) => [
			`busy-${routing}`,
			() =>
				chainWorkflow(`routebusy${routing.replace('_', '')}${id}`, 400, {
					providers: {
						provider: [
							row(`${routing}-slow`, '/ok?delay=200', `${routing}-slow`),
							row(`${routing}-fast`, '/ok', `${routing}-fast`),
						],
					},
					retryPolicy: { routing },
					itemConcurrency: 8,
				}),
		]),
	),
};

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	vendors = await startLlmVendors(KEYS);
	vendors.script('shareA', ['ok']);
	vendors.script('shareB', ['ok']);
	vendors.script('deadA', [500]);
	vendors.script('liveB', ['ok']);
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	// Each conversation: a tool call, then (once its result is in the request) the final text.
	const rounds = [{ tool: 'Calculator', args: { input: '6*7' }, thenEcho: true }];
	vendors.script('agentA', rounds);
	vendors.script('agentB', rounds);
	const agentCred = ['agentA', 'agentB'].map((v) => openAiCredential(vendors, v, KEYS.openai));
	const agentModel = resilientOver(
		'Agent Model',
		{
			numberInputs: 2,
			providers: { provider: [{ name: `agentA-${id}` }, { name: `agentB-${id}` }] },
			retryPolicy: { routing: 'weighted' },
		},
		[600, 800],
		'Agent',
		[
			openAiModel('GPT A', agentCred[0], [500, 1000]),
			openAiModel('GPT B', agentCred[1], [700, 1000]),
		],
	);
	const agentWf = chatWorkflow(`routeagent${id}`, {
		items: Array.from({ length: AGENT_ITEMS }, (_, k) => ({ q: `What is 6 times 7? (${k})` })),
		roots: ['Agent'],
		nodes: [
			aiAgent('Agent', [700, 600], major),
			...agentModel.nodes,
			calculatorTool('Calculator', [900, 800]),
		],
		models: [...agentModel.models, ['Calculator', 'Agent', 0, 'ai_tool']],
	});
	const chats = [
		chatRouted(`routechat${id}`, 'shareA', 'shareB'),
		chatRouted(`routechatdead${id}`, 'deadA', 'liveB'),
		{ cred: agentCred, wf: agentWf },
	];
	n8n.importCredentials([
		...chats.flatMap((c) => c.cred),
		{
			...REDIS.redis,
			type: 'redis',
			data: { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' },
		},
	]);
	n8n.importWorkflow([...Object.values(WORKFLOWS).map((wf) => wf()), ...chats.map((c) => c.wf)]);
});

after(async () => {
	await vendors?.close();
	await providers?.close();
});

/** Runs workflow `key`; returns Call Chain's [success, deferred, failed] items. */
async function run(key) {
	const wid = WORKFLOWS[key]().id;
	const { run: r, log } = await n8n.execute(wid);
	assert.ok(r, log.slice(-6000));
	return outputs(r, 'Call Chain');
}

test(`n8n ${major}: weights 3:1 over 2000 items from two processes at once give 75 % ± 3 %`, async (t) => {
	const both = [
		...(await Promise.all([run('weighted'), run('weighted')])),
		...(await Promise.all([run('weighted'), run('weighted')])),
	];
	for (const [done, deferred, failed] of both) {
		assert.equal(done.length, 500, `deferred ${deferred.length}, failed ${failed.length}`);
		const r = done[0].json._resilience.route;
		assert.equal(r.routing, 'weighted', JSON.stringify(done[0].json._resilience));
	}
	const [a, b] = [calls('w-a'), calls('w-b')];
	const share = a / (a + b);
	t.diagnostic(`weighted 3:1: a ${a}, b ${b}, a's share ${(100 * share).toFixed(1)} %`);
	assert.equal(a + b, 2000, 'one call per item');
	assert.ok(Math.abs(share - 0.75) <= 0.03, `a's share ${share}`);
});

test(`n8n ${major}: a provider of weight 0 takes no call`, async () => {
	const [done] = await run('drained');
	assert.equal(done.length, 50);
	assert.equal(calls('d-a'), 0);
	assert.equal(calls('d-b'), 50);
	assert.ok(done.every((i) => i.json._resilience.provider === `d-b-${id}`));
});

test(`n8n ${major}: tier 2 takes nothing while tier 1 can, everything once tier 1 is open`, async (t) => {
	const [healthy] = await run('tiersHealthy');
	assert.equal(healthy.length, 200);
	const [a1, a2, b] = [calls('t-a1'), calls('t-a2'), calls('t-b')];
	t.diagnostic(`tier 1 healthy: a1 ${a1}, a2 ${a2}, b ${b}`);
	assert.equal(b, 0, 'b untouched');
	assert.ok(a1 > 60 && a2 > 60, 'a1 and a2 share the load');
	const [served, deferred, failed] = await run('tiersDown');
	const down = [calls('td-a1'), calls('td-a2'), calls('td-b')];
	t.diagnostic(`tier 1 down: a1 ${down[0]}, a2 ${down[1]}, b ${down[2]}`);
	assert.equal(served.length + deferred.length + failed.length, 100, 'no item lost');
	assert.equal(served.length, 100, 'b served every item');
	assert.equal(down[2], 100);
	assert.ok(down[0] <= 2 && down[1] <= 2, 'each dead provider cost its threshold, no more');
});

test(`n8n ${major}: latency samples written by one process steer the next one's first items`, async (t) => {
	const [first] = await run('latency');
	const fast = (items) =>
		items.filter((i) => i.json._resilience.provider === `l-fast-${id}`).length;
	assert.equal(first.length, 150);
	const [second] = await run('latency');
	const opening = second.slice(0, 20);
	t.diagnostic(
		`latency: first process ${fast(first)}/150 to the fast path, second ${fast(second)}/150, its first 20: ${fast(opening)}`,
	);
	assert.ok(fast(first) >= 0.85 * 150, 'the first process learns within its run');
	assert.ok(fast(opening) >= 16, "the second process starts from the first one's samples");
	assert.equal(first[0].json._resilience.route.routing, 'latency');
});

test(`n8n ${major}: two processes x 8 items in flight on one least-busy chain never run out of compare-and-set races`, async (t) => {
	// Least busy leases every call: each call writes its provider's in-flight row twice, the
	// hottest row of any chain; 16 writers at once. A lost race waits the engine's jittered
	// backoff before reading again; no item may lose the bound's worth in a row (it would carry
	// on in its process's memory: `storeFallback`).
	const both = await Promise.all([run('busy-least_busy'), run('busy-least_busy')]);
	const items = both.flatMap(([done, deferred, failed]) => [...done, ...deferred, ...failed]);
	const lost = items.map((i) => i.json._resilience?.casRacesLost ?? 0);
	const fellBack = items.filter((i) => i.json._resilience?.storeFallback).length;
	t.diagnostic(
		`16 in flight: ${items.length} items, races lost ${lost.reduce((a, b) => a + b, 0)} in all, at most ${Math.max(...lost)} by one item over its calls, ${fellBack} items left the shared store (${MAX_CAS_RACES + 1} in a row)`,
	);
	assert.equal(items.length, 800);
	assert.equal(fellBack, 0, 'no item ran out of races');
	assert.equal(
		both.reduce((n, [done]) => n + done.length, 0),
		800,
		'every item served',
	);
});

// The slow path answers 200 ms later than the fast one: with both cores busy beside the run, n8n's
// own time per call (tens of ms) must not hide the difference (with 60 ms it gave 1.6x once).
test(`n8n ${major}: least busy sends at least twice as many calls to the fast path as to the slow one`, async (t) => {
	const ratio = {};
	for (const routing of ['least_busy', 'weighted']) {
		const [done] = await run(`busy-${routing}`);
		assert.equal(done.length, 400);
		const [slow, fast] = [calls(`${routing}-slow`), calls(`${routing}-fast`)];
		ratio[routing] = fast / Math.max(1, slow);
		t.diagnostic(`${routing}: slow ${slow}, fast ${fast}, fast/slow ${ratio[routing].toFixed(2)}`);
	}
	assert.ok(ratio.least_busy >= 2, JSON.stringify(ratio));
	assert.ok(ratio.weighted < 1.5, JSON.stringify(ratio));
});

test(`n8n ${major}: the Resilient Chat Model weighted 3:1 splits its calls 3:1; a dead model costs its threshold`, async (t) => {
	const share = await n8n.execute(`routechat${id}`);
	assert.ok(share.run, share.log.slice(-6000));
	const [a, b] = [vendors.accepted('shareA'), vendors.accepted('shareB')];
	t.diagnostic(`chat weighted 3:1 over ${CHAT_ITEMS} calls: model 1 ${a}, model 2 ${b}`);
	assert.equal(a + b, CHAT_ITEMS, 'one request per call');
	assert.ok(a / CHAT_ITEMS >= 0.6 && a / CHAT_ITEMS <= 0.9, `model 1's share ${a / CHAT_ITEMS}`);
	const dead = await n8n.execute(`routechatdead${id}`);
	assert.ok(dead.run, dead.log.slice(-6000));
	const [d, l] = [vendors.accepted('deadA'), vendors.accepted('liveB')];
	t.diagnostic(`model 1 dead: model 1 ${d} requests, model 2 ${l}`);
	assert.equal(d, 3, 'the dead model costs its threshold (3), then its breaker is open');
	assert.equal(l, CHAT_ITEMS, 'every call served by model 2');
});

test(`n8n ${major}: an AI Agent's second round goes to the model that answered its first (weighted 1:1)`, async (t) => {
	const { run: r, log } = await n8n.execute(`routeagent${id}`);
	assert.ok(r, log.slice(-6000));
	// Each model call's conversation, by its human message, and the model that served it.
	const calls = (r.data.resultData.runData['Agent Model'] ?? []).map((x) => ({
		conversation: x.inputOverride?.ai_languageModel?.[0]?.[0]?.json?.messages?.find(
			(m) => m.type === 'human',
		)?.content,
		provider: x.data?.ai_languageModel?.[0]?.[0]?.json?.provider,
	}));
	const byConversation = {};
	for (const c of calls) (byConversation[c.conversation] ??= []).push(c.provider?.slice(5, 6));
	const [a, b] = [vendors.accepted('agentA'), vendors.accepted('agentB')];
	const answers = r.data.resultData.runData.Agent[0].data.main[0].map((i) => i.json.output);
	t.diagnostic(
		`agent: ${calls.length} model calls, A ${a}, B ${b}; by conversation ${JSON.stringify(Object.values(byConversation))}`,
	);
	assert.equal(Object.keys(byConversation).length, AGENT_ITEMS, JSON.stringify(byConversation));
	for (const [q, served] of Object.entries(byConversation)) {
		assert.equal(served.length, 2, `${q}: a tool round, then the answer`);
		assert.equal(served[1], served[0], `${q} stayed on its model`);
	}
	assert.ok(a > 0 && b > 0, 'the conversations split between the models');
	assert.ok(
		answers.every((o) => /read the tool result: .*42/.test(String(o))),
		JSON.stringify(answers[0]),
	);
});
