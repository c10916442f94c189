// Token and spend limits (issue 42) in real n8n, on one Redis store, counted at a loopback
// OpenAI-compatible vendor that counts tokens its own way and enforces its tokens per minute
// (tests/support/tpm-vendor.mjs):
// - Call Chain 2.1 (its OpenAI preset) in one `n8n execute` process and the Resilient Chat Model
//   (under a Basic LLM Chain, n8n's OpenAI Chat Model) in another, at once, both on the same
//   provider with Tokens per Minute set: every item served, at most 1 % of the vendor's requests
//   answered 429, and Get Metrics' resilient_provider_tokens_total equals the tokens the vendor
//   charged for the calls it served (input and output); no call settled at an estimate;
// - a Spend Cap reached mid-run: the rest of the items go to the next provider; on a chain with
//   no other, they leave on `deferred` with `spend_cap` and a `retry_at` at the next UTC day;
//   every item accounted for, the metrics' spend equal to the vendor's usage at the prices;
// - a chain of a small and a large model, Tokens per Minute on both: each one's calls reserve its
//   own Max Tokens (the large one's minute is not overrun at the small one's estimate): 0 429s;
// - a Spend Cap over an Anthropic model answering with prompt-cache usage: the spend is what
//   Anthropic bills (a cache write at its price, a read at its own), the cap held within a call;
// - input and output tokens per minute apart, as Anthropic limits them: the chat model over n8n's
//   Anthropic Chat Model (a loopback Messages API enforcing both, and saying what is left of each
//   in its headers) and an OpenAI one; short prompts with a large maximum meet the output minute,
//   long prompts with a small one the input minute: no 429, the calls the minute had no room for
//   moved on to the second model, tokens_total equal to the vendor's count.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { redisCredential } from '../support/store-credentials.mjs';
import { startTpmVendor } from '../support/tpm-vendor.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';
import {
	anthropicCredential,
	anthropicModel,
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
const REDIS = { id: `rpcTok${tag}`.slice(0, 16), name: 'token limits redis' };
const TPM = 20_000;
const PRICES = { priceInput: 2, priceOutput: 8 };
const ITPM = 2_000;
const OTPM = 3_000;
const PAIR_TPM = 4_000;
let vendor, apart, pair, cached, a, b, redis;

/** Item n's question: 600 to 3000 characters, every fifth with CJK text. */
const question = (n) =>
	`Question ${n}: ${'lorem ipsum '.repeat(50 + ((n * 37) % 200))}${n % 5 === 0 ? '東京と大阪'.repeat(60) : ''}`;

/** Call Chain 2.1 over OpenAI preset rows, 4 items at once, on Redis. */
function callChain(id, rows, items) {
	const providers = { provider: rows };
	const wf = branchesWorkflow(id, a.nodeType, [
		{
			name: 'chain',
			items,
			typeVersion: 2.1,
			parameters: {
				providers,
				stateStore: 'redis',
				stateScope: 'provider',
				itemConcurrencyMode: 'fixed',
				itemConcurrency: 4,
				// Room to wait for the minute to free: items wait in line rather than defer.
				retryPolicy: { budgetMs: 150_000, retryAfterCapMs: 120_000 },
			},
		},
	]);
	// Each item's question from its number (the Set node makes { n }).
	const chain = wf.nodes.find((n) => n.name === 'chain');
	for (const r of chain.parameters.providers.provider)
		r.userMessage = `={{ 'Question ' + $json.n + ': ' + 'lorem ipsum '.repeat(50 + ($json.n * 37) % 200) + ($json.n % 5 === 0 ? '東京と大阪'.repeat(60) : '') }}`;
	wf.nodes.find((n) => n.name === 'chain').credentials = { redis: REDIS };
	return wf;
}

/** An OpenAI preset row named `name` at instance `instance` of `server`, with `options`. */
const row = (name, instance, options = {}, server = vendor) => ({
	name,
	kind: 'openAiChat',
	model: 'gpt-test',
	userMessage: '',
	authentication: 'none',
	openAiChatOptions: { baseUrl: `${server.url(instance)}/v1`, maxTokens: 200, ...options },
});

/** A Get Metrics sample's value (NaN when absent). */
function sample(text, name, labels) {
	const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
	return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

before(async () => {
	vendor = await startTpmVendor({ tpm: TPM, delayMs: 150 });
	apart = await startTpmVendor({ tpm: 1e9, itpm: ITPM, otpm: OTPM, delayMs: 150 });
	pair = await startTpmVendor({ tpm: PAIR_TPM, delayMs: 150 });
	cached = await startTpmVendor({ tpm: 1e9, delayMs: 100, promptCache: true });
	redis = new Redis({ host: '127.0.0.1', port: REDIS_PORT, lazyConnect: false });
	// Installed as n8n's community installer does (the chat model sub-node needs the package's
	// own install, as in a user's n8n).
	a = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), a.home);
	a.importCredentials([redisCredential(REDIS.id, REDIS.name, REDIS_PORT)]);
	b = n8nInstance(n8nInstall(major), { copyOf: a });
});
after(async () => {
	await redis?.quit().catch(() => {});
	await vendor?.close();
	await apart?.close();
	await pair?.close();
	await cached?.close();
});

test(`n8n ${major}: Call Chain and the chat model on one provider's Tokens per Minute, two processes at once: every item served, <= 1 % 429s, tokens_total equal to the vendor's count`, async () => {
	const provider = `tpm-${tag}`;
	const limits = { tokensPerMinute: TPM, ...PRICES };
	const wfA = callChain(`tokA${tag}`, [row(provider, 'tpm', limits)], 30);
	// The chat model: its first model on the same provider (and limit), its second elsewhere.
	const creds = ['tpm', 'overflow'].map((v) => openAiCredential(vendor, v, 'sk-test'));
	const model = (name, cred, position) => {
		const m = openAiModel(name, cred, position);
		m.parameters.options = { maxTokens: 150 };
		return m;
	};
	const sub = resilientOver(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: {
				provider: [{ name: provider, tokenLimits: limits }, { name: `overflow-${tag}` }],
			},
			stateStore: 'redis',
			stateScope: 'provider',
		},
		[600, 200],
		'Chain',
		[model('Model 1', creds[0], [500, 400]), model('Model 2', creds[1], [700, 400])],
	);
	const wfB = chatWorkflow(`tokB${tag}`, {
		items: Array.from({ length: 20 }, (_, k) => ({ n: k + 1, q: question(k + 1) })),
		nodes: [llmChain('Chain', [600, 0]), ...sub.nodes],
		roots: ['Chain'],
		models: sub.models,
	});
	wfB.nodes.find((n) => n.name === 'Resilient Chat Model').credentials = { redis: REDIS };
	wfB.nodes.find((n) => n.name === 'Resilient Chat Model').typeVersion = 1.1;
	a.importCredentials(creds);
	b.importCredentials(creds);
	a.importWorkflow(wfA);
	b.importWorkflow(wfB);
	const started = Date.now();
	const [ra, rb] = await Promise.all([
		a.execute(wfA.id, { timeoutMs: 300_000 }),
		b.execute(wfB.id, { timeoutMs: 300_000 }),
	]);
	assert.ok(ra.run && rb.run, `${ra.log.slice(-3000)}\n${rb.log.slice(-3000)}`);
	const [served, deferred, failed] = outputs(ra.run, 'chain');
	const chat = outputs(rb.run, 'Chain')[0];
	const s = vendor.stats('tpm');
	const overflow = vendor.stats('overflow');
	const attempts = served.flatMap((i) => i.json._resilience.attempts);
	// The metrics once both processes ended: the store holds both entry points' counters.
	const metrics = await metricsText(`tokM${tag}`, [row(provider, 'tpm', limits)]);
	const labels = `scope="global",provider="${provider}"`;
	const counted = ['input', 'output'].map((d) =>
		sample(metrics, 'resilient_provider_tokens_total', `${labels},direction="${d}"`),
	);
	const spend = sample(metrics, 'resilient_provider_spend_total', labels);
	const waits = sample(metrics, 'resilient_provider_token_waits_total', labels);
	console.log(
		`n8n ${major}: ${served.length} Call Chain items and ${chat.length} chat calls in ${((Date.now() - started) / 1000).toFixed(1)} s; the vendor: ${s.requests} requests, ${s.r429} answered 429, ${s.input} + ${s.output} tokens charged for the calls it served, at most ${s.peakMinute} in a minute (${((100 * s.peakMinute) / TPM).toFixed(1)} % of ${TPM}); Get Metrics: tokens ${counted[0]} + ${counted[1]}, spend ${spend}, ${waits} waits in line for the minute; ${overflow.requests} chat calls moved on to the second model`,
	);
	assert.equal(
		served.length,
		30,
		JSON.stringify((deferred[0] ?? failed[0])?.json ?? {}).slice(0, 800),
	);
	assert.equal(chat.length, 20);
	assert.ok(
		chat.every((i) => !i.json.error),
		JSON.stringify(chat.find((i) => i.json.error)?.json),
	);
	assert.ok(s.r429 <= 0.01 * s.requests, `${s.r429} of ${s.requests} answered 429`);
	assert.ok(
		attempts.every((t) => t.tokens && !t.tokens.estimated),
		'each call settled at its usage',
	);
	assert.deepEqual(counted, [s.input, s.output], "tokens_total is the vendor's count");
	assert.ok(Math.abs(spend - (2 * s.input + 8 * s.output) / 1e6) < 1e-9, `spend ${spend}`);
	assert.equal(sample(metrics, 'resilient_provider_tokens_estimated_total', labels), 0);
	// Waits in line for the minute are counted in their own family (tests/token_limit.rs counts
	// one wait exactly); here it is in the scrape, a whole number.
	assert.ok(Number.isInteger(waits), `resilient_provider_token_waits_total: ${waits}`);
});

test(`n8n ${major}: a Spend Cap reached mid-run sends the rest to the next provider, or to deferred with spend_cap until the next UTC day`, async () => {
	// About 1900 millionths a call (about 450 tokens in at 2, 120 out at 8 per million): a cap of
	// 0.01 is reached after 5 or 6 calls.
	const capped = { spendCap: 0.01, ...PRICES };
	const wf = callChain(
		`tokS${tag}`,
		[row(`capped-${tag}`, 'capped', capped), row(`spare-${tag}`, 'spare')],
		20,
	);
	wf.nodes.find((n) => n.name === 'chain').parameters.itemConcurrency = 1;
	const alone = callChain(`tokD${tag}`, [row(`alone-${tag}`, 'alone', capped)], 12);
	alone.nodes.find((n) => n.name === 'chain').parameters.itemConcurrency = 1;
	a.importWorkflow([wf, alone]);
	const r = await a.execute(wf.id, { timeoutMs: 300_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const [served, deferred, failed] = outputs(r.run, 'chain');
	const [capStats, spare] = [vendor.stats('capped'), vendor.stats('spare')];
	const byCapped = served.filter((i) => i.json._resilience.provider === `capped-${tag}`).length;
	const skipped = served.filter((i) =>
		(i.json._resilience.skipped ?? []).some((k) => k.reason === 'spend_cap'),
	).length;
	const d = await a.execute(alone.id, { timeoutMs: 300_000 });
	assert.ok(d.run, d.log.slice(-3000));
	const [servedAlone, deferredAlone, failedAlone] = outputs(d.run, 'chain');
	const nextDay = new Date();
	nextDay.setUTCHours(24, 0, 0, 0);
	const retryAt = deferredAlone.map((i) => Date.parse(i.json._resilience.retry_at));
	const spent = (v) => (2 * v.input + 8 * v.output) / 1e6;
	console.log(
		`n8n ${major}: cap 0.01: ${byCapped} items by the capped provider (spent ${spent(capStats).toFixed(6)}: over the cap by the call that crossed it), ${served.length - byCapped} by the next one (${skipped} said spend_cap); alone: ${servedAlone.length} served, ${deferredAlone.length} deferred (spend_cap) to ${new Date(Math.min(...retryAt)).toISOString()} or later`,
	);
	assert.equal(served.length + deferred.length + failed.length, 20, 'every item accounted for');
	assert.equal(served.length, 20);
	assert.ok(byCapped >= 1 && byCapped < 20, `${byCapped} by the capped provider`);
	assert.equal(
		capStats.requests,
		byCapped,
		'no call to the capped provider once its cap was reached',
	);
	assert.equal(spare.requests, 20 - byCapped);
	assert.equal(skipped, 20 - byCapped);
	// Its spend stops within one call of the cap: the calls out when it is reached still count.
	assert.ok(spent(capStats) >= 0.01 && spent(capStats) < 0.01 + 0.0035, `${spent(capStats)}`);
	assert.equal(servedAlone.length + deferredAlone.length + failedAlone.length, 12);
	assert.equal(servedAlone.length, byCapped, 'the same cap, the same calls');
	assert.ok(deferredAlone.length > 0);
	for (const i of deferredAlone) {
		assert.equal(i.json._resilience.reason, 'spend_cap', JSON.stringify(i.json._resilience));
	}
	assert.ok(Math.min(...retryAt) >= nextDay.getTime(), `retry_at ${Math.min(...retryAt)}`);
	// The trigger's event, once per provider and period, in the scope's stream beside the rows.
	const stream = await redis.xrange('rpc:{global}:events', '-', '+');
	const caps = stream
		.map(([, fields]) => JSON.parse(fields[1]))
		.filter((e) => e.spend_cap && [`capped-${tag}`, `alone-${tag}`].includes(e.provider));
	assert.deepEqual(caps.map((e) => e.provider).sort(), [`alone-${tag}`, `capped-${tag}`]);
	assert.equal(caps[0].spend_cap.cap, '0.01');
});

test(`n8n ${major}: Call Chain 2.1 at its defaults (Item Concurrency Auto), a Spend Cap for about five calls: the calls out at once hold their estimated cost, so the spend stays within the cap plus one call, in one process and in two at once`, async () => {
	// About 1900 millionths a call as answered, held at about 2700 (its input estimate and Max
	// Tokens 200 at the prices): a cap of 0.01 is about five calls.
	const capped = { spendCap: 0.01, ...PRICES };
	const defaults = (id, name, items) => {
		const wf = callChain(id, [row(name, name, capped)], items);
		const p = wf.nodes.find((n) => n.name === 'chain').parameters;
		delete p.itemConcurrencyMode;
		delete p.itemConcurrency;
		return wf;
	};
	const spent = (v) => (2 * v.input + 8 * v.output) / 1e6;
	const one = defaults(`tokW${tag}`, `wide-${tag}`, 10);
	const twoA = defaults(`tokX${tag}`, `both-${tag}`, 10);
	const twoB = defaults(`tokY${tag}`, `both-${tag}`, 10);
	a.importWorkflow([one, twoA]);
	b.importWorkflow(twoB);
	const r = await a.execute(one.id, { timeoutMs: 300_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const [ra, rb] = await Promise.all([
		a.execute(twoA.id, { timeoutMs: 300_000 }),
		b.execute(twoB.id, { timeoutMs: 300_000 }),
	]);
	for (const x of [ra, rb]) assert.ok(x.run, x.log.slice(-3000));
	const runs = [
		['one process', [r.run], vendor.stats(`wide-${tag}`)],
		['two processes', [ra.run, rb.run], vendor.stats(`both-${tag}`)],
	];
	for (const [what, rs, stats] of runs) {
		const outs = rs.map((run) => outputs(run, 'chain'));
		const [served, deferred, failed] = [0, 1, 2].map((k) => outs.flatMap((o) => o[k]));
		console.log(
			`n8n ${major}: ${what}, cap 0.01 at Item Concurrency Auto: ${served.length} served (${stats.requests} calls), spent ${spent(stats).toFixed(6)}; ${deferred.length} deferred with spend_cap`,
		);
		assert.equal(served.length + deferred.length + failed.length, 10 * rs.length, what);
		assert.equal(failed.length, 0, what);
		assert.equal(stats.requests, served.length, `${what}: every call served`);
		// Within the cap plus one call's cost (a call here costs at most about 0.0035).
		assert.ok(spent(stats) <= 0.01 + 0.0035, `${what}: spent ${spent(stats)}`);
		for (const i of deferred) assert.equal(i.json._resilience.reason, 'spend_cap');
	}
});

test(`n8n ${major}: a chain of a small and a large model, Tokens per Minute on both: each model's calls reserve its own Max Tokens, so the large one takes no more than its minute holds (0 429s)`, async () => {
	// The vendor holds a request's prompt and max_tokens for its minute: 4000 tokens hold about
	// six of the small model's calls (Max Tokens 100) but two of the large one's (Max Tokens
	// 1500). Reserving the large model's calls at the small one's maximum sends it 429s.
	const limits = { tokensPerMinute: PAIR_TPM };
	const wf = callChain(
		`tokP${tag}`,
		[
			row(`small-${tag}`, 'small', { ...limits, maxTokens: 100 }, pair),
			row(`large-${tag}`, 'large', { ...limits, maxTokens: 1500 }, pair),
		],
		12,
	);
	// Room to wait a little, not a whole minute: what no minute holds soon is deferred.
	wf.nodes.find((n) => n.name === 'chain').parameters.retryPolicy = { budgetMs: 8_000 };
	a.importWorkflow(wf);
	const r = await a.execute(wf.id, { timeoutMs: 300_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const [served, deferred, failed] = outputs(r.run, 'chain');
	const [small, large] = [pair.stats('small'), pair.stats('large')];
	const byLarge = served.filter((i) => i.json._resilience.provider === `large-${tag}`).length;
	console.log(
		`n8n ${major}: small and large models on ${PAIR_TPM} tokens a minute each: ${served.length} served (${byLarge} by the large model), ${deferred.length} deferred; the vendor: small ${small.requests} requests (${small.r429} 429s), large ${large.requests} requests (${large.r429} 429s), at most ${large.peakMinute} tokens in the large one's minute`,
	);
	assert.equal(served.length + deferred.length + failed.length, 12, 'every item accounted for');
	assert.equal(failed.length, 0);
	assert.ok(byLarge >= 1, 'the large model took what the small one had no room for');
	assert.equal(small.r429 + large.r429, 0, 'no 429 at either model');
	assert.ok(large.peakMinute <= PAIR_TPM, `${large.peakMinute}`);
	for (const i of deferred) assert.equal(i.json._resilience.reason, 'token_limited');
});

test(`n8n ${major}: a Spend Cap over an Anthropic model answering with prompt-cache usage: spent as Anthropic bills a cache write (1.25x input) and a read (0.1x), the cap held within one call`, async () => {
	// Claude's prices per million: 3 in, 15 out, 0.30 a cache read, 3.75 a 5-minute cache write.
	// Every item's call has the same long system prompt: the first writes it to the cache, the
	// rest read it. Billed as plain input, the cache write alone would be 20 % short.
	const prices = { priceInput: 3, priceOutput: 15, priceCachedInput: 0.3, priceCacheWrite: 3.75 };
	const bill = (v) =>
		(3 * (v.input - v.cacheWrite - v.cacheRead) +
			3.75 * v.cacheWrite +
			0.3 * v.cacheRead +
			15 * v.output) /
		1e6;
	const claude = (name, options) => ({
		name,
		kind: 'anthropicMessages',
		model: 'claude-test',
		userMessage: '',
		authentication: 'none',
		anthropicMessagesOptions: {
			baseUrl: cached.url('claude'),
			maxTokens: 200,
			systemPrompt: `You answer questions. ${'Rules of the house. '.repeat(400)}`,
			...options,
		},
	});
	// A first call costs about 0.0095 (2000 tokens written), the next about 0.0030 each.
	const cap = 0.02;
	const wf = callChain(`tokC${tag}`, [claude(`claude-${tag}`, { spendCap: cap, ...prices })], 10);
	wf.nodes.find((n) => n.name === 'chain').parameters.itemConcurrency = 1;
	a.importWorkflow(wf);
	const r = await a.execute(wf.id, { timeoutMs: 300_000 });
	assert.ok(r.run, r.log.slice(-3000));
	const [served, deferred, failed] = outputs(r.run, 'chain');
	const v = cached.stats('claude');
	const metrics = await metricsText(`tokCM${tag}`, [
		claude(`claude-${tag}`, { spendCap: cap, ...prices }),
	]);
	const spend = sample(
		metrics,
		'resilient_provider_spend_total',
		`scope="global",provider="claude-${tag}"`,
	);
	console.log(
		`n8n ${major}: cap ${cap} over Anthropic prompt caching: ${served.length} served, ${deferred.length} deferred; the vendor: ${v.requests} requests, ${v.cacheWrite} tokens written to its cache, ${v.cacheRead} read from it; billed as Anthropic would ${bill(v).toFixed(6)}, Get Metrics' spend ${spend}`,
	);
	assert.equal(served.length + deferred.length + failed.length, 10, 'every item accounted for');
	assert.equal(failed.length, 0);
	assert.ok(v.cacheWrite > 0 && v.cacheRead > 0, 'the calls wrote and read the cache');
	// Each call's cost is kept in millionths: within half a millionth a call.
	assert.ok(Math.abs(spend - bill(v)) <= 5e-7 * v.requests, `spend ${spend}, billed ${bill(v)}`);
	assert.ok(deferred.length > 0, 'the cap was reached');
	// One call costs at most about 0.0095 here (the cache write's).
	assert.ok(bill(v) >= cap && bill(v) <= cap + 0.0035, `billed ${bill(v)}`);
	for (const i of deferred) assert.equal(i.json._resilience.reason, 'spend_cap');
});

test(`n8n ${major}: input and output tokens per minute apart (Anthropic's): the output minute full, then the input minute full, sends the chat model's calls on with no 429`, async () => {
	// Short prompts asking up to 1000 tokens out: the output minute (3000) holds three at once.
	// Long prompts asking up to 100: the input minute (2000) holds two or three.
	const cases = [
		{ wall: 'output', maxTokens: 1000, items: 10, q: (n) => `Question ${n}: ${'why '.repeat(20)}` },
		{
			wall: 'input',
			maxTokens: 100,
			items: 10,
			q: (n) => `Question ${n}: ${'lorem ipsum '.repeat(200 + n * 10)}`,
		},
	];
	const limits = { inputTokensPerMinute: ITPM, outputTokensPerMinute: OTPM, ...PRICES };
	const run = async ({ wall, maxTokens, items, q }, n8n) => {
		const provider = `claude-${wall}-${tag}`;
		const creds = [
			anthropicCredential(apart, `c${wall}`, 'sk-ant'),
			openAiCredential(apart, `s${wall}`, 'sk'),
		];
		const claude = anthropicModel('Claude', creds[0], [500, 400]);
		claude.parameters.options = { maxTokensToSample: maxTokens };
		const spill = openAiModel('Spill', creds[1], [700, 400]);
		spill.parameters.options = { maxTokens };
		const sub = resilientOver(
			'Resilient Chat Model',
			{
				numberInputs: 2,
				providers: {
					provider: [{ name: provider, tokenLimits: limits }, { name: `spill-${wall}-${tag}` }],
				},
				stateStore: 'redis',
				stateScope: 'provider',
			},
			[600, 200],
			'Chain',
			[claude, spill],
		);
		const wf = chatWorkflow(`tok${wall.slice(0, 1)}${tag}`, {
			items: Array.from({ length: items }, (_, k) => ({ n: k + 1, q: q(k + 1) })),
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
		assert.ok(r.run, r.log.slice(-3000));
		return {
			wall,
			provider,
			chat: outputs(r.run, 'Chain')[0],
			claude: apart.stats(`c${wall}`),
			spill: apart.stats(`s${wall}`),
		};
	};
	const results = await Promise.all([run(cases[0], a), run(cases[1], b)]);
	for (const { wall, provider, chat, claude, spill } of results) {
		const rows = [row(provider, `c${wall}`, limits)];
		const metrics = await metricsText(`tokX${wall.slice(0, 1)}${tag}`, rows);
		const labels = `scope="global",provider="${provider}"`;
		const counted = ['input', 'output'].map((d) =>
			sample(metrics, 'resilient_provider_tokens_total', `${labels},direction="${d}"`),
		);
		const state = await providerState(`tokG${wall.slice(0, 1)}${tag}`, rows);
		console.log(
			`n8n ${major}: the ${wall} minute the wall: ${chat.length} chat calls; Anthropic: ${claude.requests} requests, ${claude.r429} answered 429, at most ${claude.peakInputMinute} input (of ${ITPM}) and ${claude.peakOutputMinute} output tokens (of ${OTPM}) in a minute; ${spill.requests} calls moved on to the second model; Get Metrics: tokens ${counted[0]} + ${counted[1]} (the vendor: ${claude.input} + ${claude.output}); Get Provider State: ${state.input_tokens_left_minute} input and ${state.output_tokens_left_minute} output tokens left this minute`,
		);
		assert.equal(chat.length, 10);
		assert.ok(
			chat.every((i) => !i.json.error),
			JSON.stringify(chat.find((i) => i.json.error)?.json),
		);
		assert.equal(claude.r429, 0, `${claude.r429} of ${claude.requests} answered 429`);
		assert.ok(
			claude.requests >= 2 && spill.requests >= 1,
			`${wall}: ${claude.requests} + ${spill.requests}`,
		);
		assert.equal(claude.requests + spill.requests, 10, 'each call once');
		assert.deepEqual(counted, [claude.input, claude.output], "tokens_total is the vendor's count");
		// Get Provider State sets no limits: it reads those the chat model's calls wrote (a minute
		// later, the calls' buckets have left it).
		for (const [left, limit, used] of [
			[state.input_tokens_left_minute, ITPM, claude.input],
			[state.output_tokens_left_minute, OTPM, claude.output],
		])
			assert.ok(typeof left === 'number' && left >= limit - used && left <= limit, `${left}`);
		assert.equal(state.tokens_left_minute, null, 'no total limit set');
	}
});

/** The first item of Call Chain's `operation` (getState, getMetrics) over `rows` on the Redis
 * store, run alone in a workflow of that one node. */
async function operationItem(id, operation, rows) {
	const wf = branchesWorkflow(id, a.nodeType, [
		{
			name: operation,
			items: 1,
			typeVersion: 2.1,
			parameters: {
				operation,
				stateStore: 'redis',
				stateScope: 'provider',
				providers: { provider: rows },
			},
			nodeSettings: { credentials: { redis: REDIS }, executeOnce: true },
		},
	]);
	a.importWorkflow(wf);
	const r = await a.execute(wf.id, { timeoutMs: 120_000 });
	assert.ok(r.run, r.log.slice(-3000));
	return outputs(r.run, operation)[0][0].json;
}

/** Get Provider State of `rows`' first provider. */
function providerState(id, rows) {
	return operationItem(id, 'getState', rows);
}

/** Get Metrics of `rows`, as its Prometheus text. */
async function metricsText(id, rows) {
	return (await operationItem(id, 'getMetrics', rows)).metrics;
}
