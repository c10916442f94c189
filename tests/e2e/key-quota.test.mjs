// Key Quotas (issue 59) in real n8n, on Redis, counted at a loopback OpenAI-compatible vendor that
// reports each call's usage (tests/support/tpm-vendor.mjs): Call Chain 2.2, one provider, the
// Fair Share Key a customer per item, 300 tokens a UTC day per key (about 4.5 calls). Customer a's items are
// served until its answers' usage reaches the quota, then go to `deferred` with `key_quota` and a
// retry_at at the next UTC day; customer b, on the same provider, is served throughout. A second
// n8n process reads the same key's row: a's items there are deferred without a call. The
// Resilient Chat Model 1.2 under a Basic LLM Chain, 2 requests a day for its key: 2 messages
// answered, the next fail at once with key_quota and no call to either model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { startTpmVendor } from '../support/tpm-vendor.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';
import {
	chatWorkflow,
	llmChain,
	openAiCredential,
	openAiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
const REDIS = { id: `rpcKq${tag}`.slice(0, 16), name: 'key quota redis' };
const QUOTA = 300;
let vendor, a, b;

before(async () => {
	vendor = await startTpmVendor({ tpm: 1e9, delayMs: 50 });
	a = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), a.home);
	a.importCredentials([redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
	b = n8nInstance(n8nInstall(major), { copyOf: a });
});
after(async () => vendor?.close());

/** Call Chain 2.2 over one OpenAI preset row, one item at a time, item n of customer b when n
 * is a multiple of 4, else of customer a; 300 tokens a day per customer. */
function workflow(id, items) {
	const wf = branchesWorkflow(id, a.nodeType, [
		{
			name: 'chain',
			items,
			typeVersion: 2.2,
			parameters: {
				providers: {
					provider: [
						{
							name: `llm-${tag}`,
							kind: 'openAiChat',
							model: 'gpt-test',
							userMessage: '={{ "Question " + $json.n }}',
							authentication: 'none',
							openAiChatOptions: { baseUrl: `${vendor.url('quota')}/v1`, maxTokens: 200 },
						},
					],
				},
				stateStore: 'redis',
				stateScope: 'provider',
				itemConcurrencyMode: 'fixed',
				itemConcurrency: 1,
				retryPolicy: { fairShareKey: `={{ ($json.n % 4 === 0 ? 'b-' : 'a-') + '${tag}' }}` },
				keyQuotas: { quota: [{ measure: 'tokens', per: 'day', atMost: QUOTA }] },
			},
		},
	]);
	wf.nodes.find((n) => n.name === 'chain').credentials = { redis: REDIS };
	return wf;
}

/** Item n's customer, from its place in the batch (its correlationId ends in its index). */
const customer = (i) =>
	Number(i.json._resilience.correlationId.split(':').pop()) % 4 === 3 ? 'b' : 'a';
/** The tokens an item's attempts used, as its answers reported them. */
const used = (i) =>
	i.json._resilience.attempts.reduce(
		(n, t) => n + (t.tokens?.input ?? 0) + (t.tokens?.output ?? 0),
		0,
	);

test(`n8n ${major}: a customer past its tokens per day goes to deferred with key_quota until the next UTC day, another customer on the same provider is served, and a second process defers the first without a call`, async () => {
	const wf = workflow(`kq${tag}`, 12);
	a.importWorkflow(wf);
	const r = await a.execute(wf.id, { timeoutMs: 180_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const [served, deferred, failed] = outputs(r.run, 'chain');
	assert.equal(served.length + deferred.length + failed.length, 12, 'every item accounted for');
	assert.equal(failed.length, 0);
	const servedA = served.filter((i) => customer(i) === 'a');
	const usedA = servedA.reduce((n, i) => n + used(i), 0);
	const vendorTokens = vendor.stats('quota').input + vendor.stats('quota').output;
	const biggest = Math.max(...served.map(used));
	const nextDay = new Date();
	nextDay.setUTCHours(24, 0, 0, 0);
	console.log(
		`n8n ${major}: quota ${QUOTA} tokens a day: customer a ${servedA.length} served (${usedA} tokens), ${deferred.length} deferred; customer b ${served.length - servedA.length} served; the vendor charged ${vendorTokens} tokens for ${vendor.stats('quota').requests} requests`,
	);
	assert.equal(served.length - servedA.length, 3, "customer b's three items, all served");
	assert.ok(
		servedA.length >= 1 && deferred.length >= 1,
		`${servedA.length} served, ${deferred.length} deferred`,
	);
	for (const i of deferred) {
		assert.equal(customer(i), 'a', 'only the customer over its quota waits');
		assert.equal(i.json._resilience.reason, 'key_quota', JSON.stringify(i.json._resilience));
		assert.ok(
			Date.parse(i.json._resilience.retry_at) >= nextDay.getTime(),
			i.json._resilience.retry_at,
		);
	}
	// Counted at the vendor: every served item's usage is what it charged; a's calls stopped
	// once its answers reached the quota, passing it by at most the last call's usage.
	assert.equal(
		vendorTokens,
		served.reduce((n, i) => n + used(i), 0),
	);
	assert.equal(vendor.stats('quota').requests, served.length, 'no call for a deferred item');
	assert.ok(usedA >= QUOTA && usedA < QUOTA + biggest + 1, `a used ${usedA}`);

	// Another n8n process, the same key's row on Redis: a's items wait without a call.
	const before = vendor.stats('quota').requests;
	const again = workflow(`kq2${tag}`, 3);
	b.importWorkflow(again);
	const r2 = await b.execute(again.id, { timeoutMs: 180_000 });
	assert.ok(r2.run, r2.log.slice(-3000));
	const [served2, deferred2] = outputs(r2.run, 'chain');
	assert.equal(served2.length, 0);
	assert.deepEqual(
		deferred2.map((i) => i.json._resilience.reason),
		['key_quota', 'key_quota', 'key_quota'],
	);
	assert.equal(vendor.stats('quota').requests, before, 'the second process sent a nothing');
});

test(`n8n ${major}: the chat model with 2 requests a day for its key: 2 messages answered, the next fail at once with key_quota, neither model called`, async () => {
	const creds = ['chat1', 'chat2'].map((v) => openAiCredential(vendor, v, 'sk-test'));
	const sub = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: [{ name: `m1-${tag}` }, { name: `m2-${tag}` }] },
			retryPolicy: { fairShareKey: `chat-${tag}` },
			keyQuotas: { quota: [{ measure: 'requests', per: 'day', atMost: 2 }] },
		},
		[600, 200],
		'Chain',
		[openAiModel('Model 1', creds[0], [500, 400]), openAiModel('Model 2', creds[1], [700, 400])],
	);
	const wf = chatWorkflow(`kqc${tag}`, {
		items: 4,
		nodes: [llmChain('Chain', [600, 0]), ...sub.nodes],
		roots: ['Chain'],
		models: sub.models,
	});
	wf.nodes.find((n) => n.name === 'Resilient Chat Model').typeVersion = 1.2;
	a.importCredentials(creds);
	a.importWorkflow(wf);
	const r = await a.execute(wf.id, { timeoutMs: 180_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const items = outputs(r.run, 'Chain')[0];
	const errors = items
		.map((i) => i.json.error ?? '')
		.map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
	console.log(
		`n8n ${major}: chat, 2 requests a day: ${items.filter((i) => i.json.text).length} answered, errors: ${JSON.stringify(errors.filter(Boolean)).slice(0, 300)}; Model 1 ${vendor.stats('chat1').requests} requests, Model 2 ${vendor.stats('chat2').requests}`,
	);
	assert.equal(items.length, 4, 'every message leaves');
	assert.equal(items.filter((i) => i.json.text).length, 2);
	assert.equal(errors.filter((e) => e.includes('key_quota')).length, 2, JSON.stringify(errors));
	assert.equal(
		vendor.stats('chat1').requests + vendor.stats('chat2').requests,
		2,
		'the quota, counted at the vendor',
	);
});
