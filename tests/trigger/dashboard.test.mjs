// The shipped Grafana dashboard's queries on a real Prometheus scraping a real n8n (2.41.1, `n8n
// start`, the package installed as n8n's community installer does) while a scenario drives every
// panel, all on a redis-server of this test's own:
// - a provider dies and recovers (its breaker opens, then closes on a probe), a backup serving;
// - a 70 % storm against a tight retry budget (retries held back, items deferred);
// - hedging (p95) over a slow tail (hedges, wins, the latency row);
// - an OpenAI preset against a vendor of 3000 tokens a minute with Tokens per Minute and prices
//   (tokens, spend, calls turned away);
// - the store stopped for a few scrapes, then started again (store_up 0, fall-backs counted).
// Every query of n8n-node/monitoring/grafana-dashboard.json ($scope and $provider as All) is then
// run through Prometheus's HTTP API over the run: each answers, none empty. The breaker's state and
// the calls per second over the run are drawn (tests/support/series-svg.mjs) into the run's
// directory, and into docs/monitoring-run.svg with RPC_DOCS_PICTURE=1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { n8nInstall, n8nInstance, ROOT, uid } from '../support/n8n.mjs';
import { startProviders } from '../support/providers.mjs';
import { startTpmVendor } from '../support/tpm-vendor.mjs';
import { startOwnRedis } from '../support/own-redis.mjs';
import { startPrometheus } from '../support/trigger/prometheus.mjs';
import { activate, ownerSession } from '../support/trigger/publish.mjs';
import { installLikeN8n } from '../e2e/clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';
import { seriesSvg } from '../support/series-svg.mjs';
import { link, node } from '../support/workflow-parts.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 6);
const REDIS = { id: `rpcDash${tag}`.slice(0, 16), name: 'dashboard redis' };
const NODE = 'n8n-nodes-resilient-provider-call.resilientProviderCall';
const DASHBOARD = path.join(ROOT, 'n8n-node/monitoring/grafana-dashboard.json');
const name = (p) => `${p}-${tag}`;
let providers, tpm, redis, server, prom, base, t0;
const marks = [];

/** Webhook (POST, answers when the chain is done) -> Call Chain 2.1 over `rows` for `items`. */
function chainFlow(key, rows, items, extra = {}) {
	const id = `dash${key}${tag}`.slice(0, 16);
	const hook = `dash-${key}-${tag}`;
	const list = Array.from({ length: items }, (_, n) => ({ n: n + 1 }));
	return {
		hook,
		wf: {
			id,
			name: id,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes: [
				node(
					'Webhook',
					'n8n-nodes-base.webhook',
					2,
					0,
					{ httpMethod: 'POST', path: hook, responseMode: 'lastNode', options: {} },
					{ webhookId: hook },
				),
				node('Items', 'n8n-nodes-base.set', 3.4, 200, {
					mode: 'raw',
					jsonOutput: JSON.stringify({ items: list }),
				}),
				node('Split', 'n8n-nodes-base.splitOut', 1, 400, { fieldToSplitOut: 'items' }),
				node(
					'Call Chain',
					NODE,
					2.1,
					600,
					{
						providers: { provider: rows },
						stateStore: 'redis',
						stateScope: 'provider',
						itemConcurrencyMode: 'fixed',
						itemConcurrency: 4,
						...extra,
					},
					{ credentials: { redis: REDIS } },
				),
			],
			connections: link(['Webhook', ['Items']], ['Items', ['Split']], ['Split', ['Call Chain']]),
		},
	};
}

const url = (route) => `${base}${route}`;
const flows = {};

before(async () => {
	providers = await startProviders();
	tpm = await startTpmVendor({ tpm: 3000, delayMs: 50 });
	redis = await startOwnRedis();
	const p = `http://127.0.0.1:${providers.port}`;
	flows.recover = chainFlow(
		'recover',
		[
			{ name: name('dies'), url: `${p}/fail-then-ok?n=3&id=${name('dies')}` },
			{ name: name('backup'), url: `${p}/ok?id=${name('backup')}` },
		],
		1,
		{ breaker: { threshold: 3, openMs: 4000 }, retryPolicy: { maxAttempts: 1 } },
	);
	flows.storm = chainFlow(
		'storm',
		[{ name: name('storm'), url: `${p}/storm?pct=70&id=${name('storm')}` }],
		40,
		{
			retryPolicy: {
				maxAttempts: 5,
				baseMs: 10,
				capMs: 20,
				budgetMs: 2000,
				retryBudgetPercent: 1,
				retryBudgetFloorPerS: 1,
			},
			breaker: { threshold: 1000 },
		},
	);
	flows.hedge = chainFlow(
		'hedge',
		[
			{ name: name('slow'), url: `${p}/tail?slow=40&ms=600&fast=20&id=${name('slow')}` },
			{ name: name('fast'), url: `${p}/ok?id=${name('fast')}` },
		],
		30,
		{ retryPolicy: { hedge: 'p95', hedgeMinMs: 50, hedgeMaxMs: 200 } },
	);
	flows.tokens = chainFlow(
		'tokens',
		[
			{
				name: name('tokens'),
				kind: 'openAiChat',
				model: 'gpt-test',
				userMessage: '={{ "Question " + $json.n + ": " + "lorem ipsum ".repeat(60) }}',
				authentication: 'none',
				openAiChatOptions: {
					baseUrl: `${tpm.url('dash')}/v1`,
					maxTokens: 100,
					tokensPerMinute: 3000,
					priceInput: 2,
					priceOutput: 8,
				},
			},
		],
		12,
		{ retryPolicy: { budgetMs: 1500 } },
	);
	const all = ['dies', 'backup', 'storm', 'slow', 'fast', 'tokens'].map((k) => ({ name: name(k) }));
	const metricsHook = `dash-metrics-${tag}`;
	const metrics = JSON.parse(
		readFileSync(path.join(ROOT, 'n8n-node/examples/metrics-workflow.json'), 'utf8'),
	);
	metrics.id = `dashmetrics${tag}`.slice(0, 16);
	for (const n of metrics.nodes) {
		if (n.type === 'n8n-nodes-base.webhook') {
			n.parameters.path = metricsHook;
			n.webhookId = metricsHook;
		}
		if (n.type === NODE) {
			n.parameters.providers = { provider: all };
			// A store that does not answer is said within the scrape's timeout.
			n.parameters.storeOptions = { operationTimeoutMs: 300 };
			n.credentials = { redis: REDIS };
		}
	}
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	n8n.importCredentials([
		{
			...REDIS,
			type: 'redis',
			data: { host: '127.0.0.1', port: redis.port, database: 0, password: '' },
		},
	]);
	n8n.importWorkflow([metrics, ...Object.values(flows).map((f) => f.wf)]);
	server = await n8n.start();
	base = `http://127.0.0.1:${server.port}`;
	const rest = await ownerSession(server.port);
	for (const wf of [metrics, ...Object.values(flows).map((f) => f.wf)]) await activate(rest, wf.id);
	for (let tries = 0; ; tries++) {
		const r = await fetch(url(`/webhook/${metricsHook}`)).catch(() => null);
		if (r?.ok) break;
		if (tries > 120) throw new Error(`the metrics webhook never answered: ${r?.status}`);
		await new Promise((res) => setTimeout(res, 250));
	}
	prom = await startPrometheus(`127.0.0.1:${server.port}`, `/webhook/${metricsHook}`, {
		interval: 1,
		timeout: 1,
	});
});
after(async () => {
	await prom?.stop();
	await server?.stop();
	await redis?.stop();
	await tpm?.close();
	await providers?.close();
});

const run = (f) => fetch(url(`/webhook/${f.hook}`), { method: 'POST' }).then((r) => r.text());
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mark = (label) => marks.push({ t: Date.now() / 1000, label });
/** Waits until Prometheus has scraped `query` to a value for which `ok` holds. */
async function scraped(what, query, ok, ms = 30_000) {
	const end = Date.now() + ms;
	for (;;) {
		const v = await prom.value(query);
		if (v !== undefined && ok(v)) return v;
		assert.ok(Date.now() < end, `${what}: ${query} read ${v}`);
		await sleep(250);
	}
}

test(`n8n ${major}: every query of the shipped dashboard answers with series while a provider dies and recovers, a retry budget runs out, hedges race, a token limit holds and the store goes away`, async () => {
	t0 = Date.now() / 1000;
	const state = (p) => `resilient_provider_state{provider="${name(p)}"}`;
	await scraped('the first scrape', state('dies'), (v) => v === 0);
	mark('provider dies');
	for (let k = 0; k < 3; k++) await run(flows.recover);
	await scraped('its breaker open', state('dies'), (v) => v === 2);
	// While it is open the backup serves (until a probe finds it back): each run's call is
	// scraped before the next run.
	const calls = `sum(resilient_provider_calls_total{provider=~"${name('dies')}|${name('backup')}"})`;
	const made = (await prom.value(calls)) ?? 0;
	for (let k = 1; k <= 6; k++) {
		await run(flows.recover);
		await scraped(`the chain's call ${k}`, calls, (v) => v >= made + k);
	}
	mark('storm, hedges, tokens');
	await Promise.all([run(flows.storm), run(flows.hedge), run(flows.tokens)]);
	// Each counted and scraped before the store goes away (its restart forgets the counters).
	const sel = (m, ...ps) => `sum(${m}{provider=~"${ps.map(name).join('|')}"})`;
	await scraped('hedges', sel('resilient_provider_hedges_total', 'slow', 'fast'), (v) => v > 0);
	const budget = sel('resilient_provider_retry_budget_exhausted_total', 'storm');
	await scraped('retries held back', budget, (v) => v > 0);
	const turned = sel('resilient_provider_token_limited_total', 'tokens');
	await scraped('calls turned away', turned, (v) => v > 0);
	// The open window (4 s) ends (the gauge reads half-open, unless a run above probed it
	// already); the next item probes and the provider answers again.
	await scraped('its open window over', state('dies'), (v) => v <= 1);
	await run(flows.recover);
	await scraped('its breaker closed again', state('dies'), (v) => v === 0);
	mark('store stopped');
	const port = redis.port;
	await redis.stop();
	await scraped('the store down', 'resilient_provider_store_up', (v) => v === 0);
	// A few scrapes of it down, each a fall-back to memory counted.
	await scraped('fall-backs counted', 'resilient_provider_store_fallbacks_total', (v) => v >= 3);
	mark('store started');
	redis = await startOwnRedis(port);
	await scraped('the store back', 'resilient_provider_store_up', (v) => v === 1, 60_000);
	// The rows of the providers are gone with the store's restart: run them once more, so every
	// family has its series again before the end (the latency rows last).
	await Promise.all([run(flows.hedge), run(flows.recover)]);
	await scraped(
		'the latency rows again',
		'count(resilient_provider_latency_seconds)',
		(v) => v > 0,
	);
	const t1 = Date.now() / 1000;

	// Every query of the dashboard, its variables as All, over the run.
	const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8'));
	const results = [];
	for (const p of dashboard.panels)
		for (const target of p.targets) {
			const expr = target.expr
				.replaceAll('$__rate_interval', '15s')
				.replaceAll('$scope', '.*')
				.replaceAll('$provider', '.*');
			const r = await prom.range(expr, Math.floor(t0), Math.ceil(t1), 1);
			results.push({
				panel: p.title,
				expr,
				status: r.status,
				series: r.data?.result?.length ?? 0,
				error: r.error,
			});
		}
	console.log(
		`n8n ${major}: ${results.length} queries of ${dashboard.panels.length} panels over ${Math.round(t1 - t0)} s:\n${results.map((r) => `  ${r.status} ${String(r.series).padStart(2)} series  ${r.panel}: ${r.expr}`).join('\n')}`,
	);
	for (const r of results) {
		assert.equal(r.status, 'success', `${r.panel}: ${r.expr}: ${r.error}`);
		assert.ok(r.series > 0, `${r.panel}: ${r.expr} has no series`);
	}
	// What the scenario did shows in the series it should.
	const max = async (q) => {
		const r = await prom.range(q, Math.floor(t0), Math.ceil(t1), 1);
		return Math.max(0, ...r.data.result.flatMap((s) => s.values.map(([, v]) => Number(v))));
	};
	const seen = {
		open: await max(state('dies')),
		budget: await max(
			`resilient_provider_retry_budget_exhausted_total{provider="${name('storm')}"}`,
		),
		// A hedge is counted on the provider it is sent to (the next one).
		hedges: await max(
			`sum(resilient_provider_hedges_total{provider=~"${name('slow')}|${name('fast')}"})`,
		),
		tokens: await max(`resilient_provider_token_limited_total{provider="${name('tokens')}"}`),
		fallbacks: await max('resilient_provider_store_fallbacks_total'),
	};
	console.log(`n8n ${major}: the scenario's marks in the series: ${JSON.stringify(seen)}`);
	assert.equal(seen.open, 2, 'the breaker opened');
	assert.ok(seen.budget > 0, 'retries held back by the budget');
	assert.ok(seen.hedges > 0, 'hedges sent');
	assert.ok(seen.tokens > 0, 'calls turned away by the token limit');
	assert.ok(seen.fallbacks > 0, 'fall-backs to memory counted');

	// The picture: the breaker's state and the calls per second over the run.
	const series = async (q, label) => {
		const r = await prom.range(q, Math.floor(t0), Math.ceil(t1), 1);
		return r.data.result.map((s) => ({
			name: label(s.metric),
			points: s.values.map(([t, v]) => [t, Number(v)]),
		}));
	};
	const short = (m) => (m.provider ?? m.scope ?? '').replace(`-${tag}`, '');
	const svg = seriesSvg(
		[
			{
				title: 'Breaker state (resilient_provider_state)',
				steps: true,
				max: 2,
				ticks: [
					[0, 'closed'],
					[1, 'half-open'],
					[2, 'open'],
				],
				series: await series(
					`max by (provider) (resilient_provider_state{provider=~"${name('dies')}|${name('storm')}"})`,
					short,
				),
			},
			{
				title: 'Calls per second (rate of resilient_provider_calls_total, 15 s)',
				unit: '/s',
				series: await series(
					'sum by (provider) (rate(resilient_provider_calls_total[15s]))',
					short,
				),
			},
			{
				title: 'State store up (resilient_provider_store_up)',
				steps: true,
				max: 1,
				ticks: [
					[0, 'down'],
					[1, 'up'],
				],
				series: await series('min by (scope) (resilient_provider_store_up)', () => 'store'),
			},
		],
		{ marks },
	);
	const runDir = process.env.RPC_RUN_DIR ?? '/tmp';
	writeFileSync(path.join(runDir, 'monitoring-run.svg'), svg);
	if (process.env.RPC_DOCS_PICTURE === '1')
		writeFileSync(path.join(ROOT, 'docs/monitoring-run.svg'), svg);
});
