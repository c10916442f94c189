// A DNS resolver outage, in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20):
// `n8n execute` runs in a mount namespace whose resolv.conf names a DNS server that is not there,
// so the primary vendor's hostname fails as Node reports a resolver outage (getaddrinfo
// EAI_AGAIN), while the fallback, reached by IP address, answers. Call Chain and the Resilient
// Chat Model (n8n's OpenAI Chat Model under a Basic LLM Chain, the package installed as n8n's
// community installer does) each retry the primary, as the engine reads EAI_AGAIN (transient),
// then fall over; nothing is lost. Both run in one execution.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProviders } from '../support/providers.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import {
	chatWorkflow,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: `sk-dns-${uid()}`, anthropic: 'unused', gemini: 'unused' };
// Hostnames only DNS could answer (none is in /etc/hosts): in the namespace, none resolves.
const DOWN_HOST = 'api.vendor-resolver-outage.example';
const LLM_DOWN_HOST = 'llm.vendor-resolver-outage.example';
const RETRY = { baseMs: 50, capMs: 200, maxAttempts: 2, deadlineMs: 5000, budgetMs: 20_000 };
let providers, vendors, run, log;
const id = uid();
const names = {
	chain: [`dns-primary-${id}`, `dns-fallback-${id}`],
	chat: [`dns-llm-${id}`, `dns-llm-backup-${id}`],
};

before(async () => {
	providers = await startProviders();
	vendors = await startLlmVendors(KEYS);
	vendors.script('backup', ['ok']);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const backup = openAiCredential(vendors, 'backup', KEYS.openai);
	const down = {
		...openAiCredential(vendors, 'down', KEYS.openai),
		data: { apiKey: KEYS.openai, url: `http://${LLM_DOWN_HOST}/v1` },
	};
	n8n.importCredentials([backup, down]);

	const calls = branchesWorkflow(`dnsout${uid()}`, n8n.nodeType, [
		{
			name: 'Call Chain',
			items: 2,
			parameters: {
				providers: {
					provider: [
						{ name: names.chain[0], url: `http://${DOWN_HOST}/ok?id=${id}` },
						{ name: names.chain[1], url: `http://127.0.0.1:${providers.port}/ok?id=${id}` },
					],
				},
				retryPolicy: RETRY,
				breaker: { threshold: 50 },
			},
		},
	]);
	// Fail Over First off: the primary's EAI_AGAIN is retried in place first, so the attempts
	// show the engine read it as transient (a permanent error is not repeated).
	const model = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: names.chat.map((name) => ({ name })) },
			breaker: { threshold: 50 },
			// The chat's own deadlines (first chunk 8 s) need a longer attempt than Call Chain's.
			retryPolicy: { ...RETRY, deadlineMs: 30_000, budgetMs: 60_000, failOverFirst: false },
		},
		[700, 600],
		'Chat chain',
		[openAiModel('Down model', down, [600, 800]), openAiModel('Backup model', backup, [800, 800])],
	);
	const chat = chatWorkflow('unused', {
		items: 2,
		roots: ['Chat chain'],
		nodes: [llmChain('Chat chain', [700, 400]), ...model.nodes],
		models: model.models,
	});
	// One workflow: the chain's branch and the chat's, both fed by its Start.
	for (const node of chat.nodes)
		if (!calls.nodes.some((n) => n.name === node.name)) calls.nodes.push(node);
	for (const [from, to] of Object.entries(chat.connections)) {
		if (from === 'Start') calls.connections.Start.main[0].push(...to.main[0]);
		else calls.connections[from] = to;
	}
	n8n.importWorkflow(calls);
	({ run, log } = await n8n.execute(calls.id, { resolverDown: true, timeoutMs: 120_000 }));
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
/** What an item or a model call tried, in order: [provider, the engine's reading]. */
const tried = (r) => r.attempts.map((a) => [a.name, a.outcome]);
/** The primary's EAI_AGAIN retried once in place, then the fallback's answer. */
const retriedThenFellOver = ([primary, fallback]) => [
	[primary, 'EAI_AGAIN'],
	[primary, 'EAI_AGAIN'],
	[fallback, '200'],
];

after(async () => {
	await providers?.close();
	await vendors?.close();
});

test('Call Chain: the unresolvable primary is retried (EAI_AGAIN, transient), then the fallback serves every item', () => {
	const [ok, deferred, failed] = outputs(run, 'Call Chain');
	assert.equal(ok.length, 2, `deferred ${deferred.length}, failed ${failed.length}`);
	for (const item of ok) {
		const r = item.json._resilience;
		assert.equal(r.provider, names.chain[1]);
		assert.deepEqual(tried(r), retriedThenFellOver(names.chain));
	}
	console.log(
		`n8n ${major}, Call Chain under a resolver outage: ${JSON.stringify(tried(ok[0].json._resilience))}`,
	);
	assert.equal(
		providers.arrivals.filter((a) => a.route === '/ok' && a.id === id).length,
		2,
		'the fallback served each item once',
	);
});

test('Resilient Chat Model: the unresolvable model is retried (EAI_AGAIN), then the backup answers every call', () => {
	const items = run.data.resultData.runData['Chat chain'][0].data.main[0];
	assert.deepEqual(
		items.map((i) => i.json.text),
		['backup says hi', 'backup says hi'],
		JSON.stringify(run.data.resultData.runData['Resilient Chat Model']).slice(0, 2000),
	);
	const entries = run.data.resultData.runData['Resilient Chat Model'].map(
		(t) => t.data?.ai_languageModel?.[0]?.[0]?.json,
	);
	assert.equal(entries.length, 2);
	for (const e of entries) assert.deepEqual(tried(e), retriedThenFellOver(names.chat));
	console.log(
		`n8n ${major}, chat model under a resolver outage: ${JSON.stringify(tried(entries[0]))}`,
	);
	assert.equal(vendors.accepted('backup'), 2);
});
