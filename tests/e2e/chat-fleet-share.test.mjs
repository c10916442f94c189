// The Resilient Chat Model 1.1 and the fleet's learned limit in real n8n, on Redis: an
// `n8n execute` process takes a share of the provider's limit for its calls, and when the root
// node is done with the model (n8n's closeFunction) the process gives the share back at once, as
// Call Chain does at its end; before, it stayed held until its lease ended (twice the
// per-attempt deadline: 240 s here), keeping that part of the limit from every other worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { redisRow } from '../support/redis-rows.mjs';
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

const require = createRequire(import.meta.url);
const Redis = require('ioredis');

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 8);
const REDIS = { id: `rpcShare${tag}`.slice(0, 16), name: 'fleet share redis' };
const DEADLINE_MS = 120_000;
let vendor, n8n, redis;

before(async () => {
	vendor = await startTpmVendor({ tpm: 1e9, delayMs: 50 });
	redis = new Redis({ host: '127.0.0.1', port: REDIS_PORT, lazyConnect: false });
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	n8n.importCredentials([redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
});
after(async () => {
	await redis?.quit().catch(() => {});
	await vendor?.close();
});

/** The limit row of `provider` as the store holds it. */
function limitRow(provider) {
	return redisRow(redis, provider, 'limit');
}

test(`n8n ${major}: the chat model gives its process's share of the fleet limit back when the root node is done, not at the lease's end`, async () => {
	const provider = `share-${tag}`;
	const creds = ['share', 'spare'].map((v) => openAiCredential(vendor, v, 'sk-test'));
	const sub = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: [{ name: provider }, { name: `spare-${tag}` }] },
			stateStore: 'redis',
			stateScope: 'provider',
			retryPolicy: { deadlineMs: DEADLINE_MS },
		},
		[600, 200],
		'Chain',
		[openAiModel('Model 1', creds[0], [500, 400]), openAiModel('Model 2', creds[1], [700, 400])],
	);
	const wf = chatWorkflow(`share${tag}`, {
		items: Array.from({ length: 6 }, (_, k) => ({ n: k + 1, q: `Question ${k + 1}` })),
		nodes: [llmChain('Chain', [600, 0]), ...sub.nodes],
		roots: ['Chain'],
		models: sub.models,
	});
	const node = wf.nodes.find((x) => x.name === 'Resilient Chat Model');
	node.credentials = { redis: REDIS };
	node.typeVersion = 1.1;
	n8n.importCredentials(creds);
	n8n.importWorkflow(wf);
	const r = await n8n.execute(wf.id, { timeoutMs: 300_000 });
	const ended = Date.now();
	assert.ok(r.run, r.log.slice(-3000));
	const answers = outputs(r.run, 'Chain')[0];
	const row = await limitRow(provider);
	const held = (row?.shares ?? []).filter((s) => s.until_ms > ended && s.slots > 0);
	console.log(
		`n8n ${major}: ${answers.length} answers, ${vendor.stats('share').requests} calls; the limit row at the end: limit ${row?.limit}, shares held ${JSON.stringify(held)}`,
	);
	assert.equal(answers.length, 6);
	assert.ok(
		answers.every((i) => !i.json.error),
		JSON.stringify(answers.find((i) => i.json.error)?.json),
	);
	assert.ok(
		row && row.limit >= 1,
		`the calls went through the fleet limit: ${JSON.stringify(row)}`,
	);
	assert.deepEqual(held, [], 'no share left held by the process that ended');
});
