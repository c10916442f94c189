// Check Provider → a guarded n8n node (On Error: Continue (using error output)) → Report Outcome
// on both of its paths, with the defaults (the ticket found through item pairing, the result read
// from what n8n put in the item), in real n8n. Items go one at a time through n8n's Loop Over
// Items, so each check sees the outcomes before it. Counts are taken at the loopback providers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { startProviders } from '../support/providers.mjs';
import { metricValue } from '../support/metrics-text.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { n8nInstall, n8nInstance, outputs, uid, ROOT } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { closeRedisClients, stores, untilOpenWindowEnds } from '../support/store-harness.mjs';
import {
	guardWorkflow as guardWorkflowOf,
	httpGuarded,
	manualWorkflow,
	node,
	openAiGuarded,
} from '../support/guard-workflows.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const OPENAI_KEY = 'sk-guard-test-key';
const HEADER = 'Bearer guard-header-key';
let providers, vendors, install, n8n, second, base;
const id = uid();
const authHash = (v) => createHash('sha256').update(v).digest('hex').slice(0, 16);
const hits = (route, rid) =>
	providers.arrivals.filter((a) => a.route === route && a.id === rid).length;

const creds = [
	{
		id: 'guardHeaderCred1',
		name: 'guard header',
		type: 'httpHeaderAuth',
		data: { name: 'Authorization', value: HEADER },
	},
	{ id: 'guardRedisCred01', name: 'guard redis', type: 'redis', data: redisData() },
];
function redisData() {
	return { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' };
}
const REDIS = { redis: { id: 'guardRedisCred01', name: 'guard redis' } };

const guardWorkflow = (wid, options) => guardWorkflowOf(n8n.nodeType, wid, options);

/** Every item the Loop handed out came back to it: Done's items by their outcome. */
function done(run) {
	const items = outputs(run, 'Done')[0].map((i) => i.json);
	const by = {};
	for (const j of items) by[j._resilience?.outcome] = (by[j._resilience?.outcome] ?? 0) + 1;
	return { items, by };
}

// Every workflow of this file, imported together (each import boots n8n's CLI).
const httpWorkflow = () =>
	guardWorkflow(`guardhttp${id}`, {
		guarded: httpGuarded(),
		check: {
			providers: {
				provider: [
					{ name: `dead-${id}`, url: `${base}/always500?id=h-${id}` },
					{ name: `next-${id}`, url: `${base}/ok?id=h-${id}&name=next` },
				],
			},
			breaker: { threshold: 3, openMs: 600000 },
		},
	});

const openAiWorkflow = () =>
	guardWorkflow(`guardopenai${id}`, {
		guarded: openAiGuarded(),
		check: {
			providers: { provider: [{ name: `openai-${id}` }] },
			breaker: { threshold: 3, openMs: 600000 },
		},
	});

/** The lease test's workflows: Check, HTTP Request and Report; and the same Check alone. */
function leaseWorkflows() {
	const name = `lease-${id}`;
	const check = {
		providers: { provider: [{ name, url: `${base}/always500?id=l-${id}` }] },
		// The probe's lease: twice the per-attempt deadline, at least the deadline + 5 s: 20 s.
		retryPolicy: { deadlineMs: 10000 },
		breaker: { threshold: 1, openMs: 1000 },
		stateStore: 'redis',
	};
	const full = `guardlease${id}`;
	const fullWf = guardWorkflow(full, {
		items: 1,
		guarded: httpGuarded(),
		check,
		report: { stateStore: 'redis' },
		extra: { credentials: REDIS },
	});
	// The same Check alone: its execution ends between Check and Report.
	const abandon = `guardabandon${id}`;
	const abandonWf = manualWorkflow(
		abandon,
		[
			node(
				'Check',
				n8n.nodeType,
				2,
				{ operation: 'checkProvider', ...check },
				{ credentials: REDIS },
			),
		],
		{ Start: { main: [[{ node: 'Check', type: 'main', index: 0 }]] } },
	);
	return [fullWf, abandonWf];
}

const sharedWorkflow = () => {
	const dead = `shared-dead-${id}`;
	const next = `shared-next-${id}`;
	return guardWorkflow(`guardshared${id}`, {
		guarded: httpGuarded(),
		check: {
			providers: {
				provider: [
					{ name: dead, url: `${base}/always500?id=s-${id}` },
					{ name: next, url: `${base}/ok?id=s-${id}&name=next` },
				],
			},
			breaker: { threshold: 3, openMs: 600000 },
			stateStore: 'redis',
		},
		report: { stateStore: 'redis' },
		extra: { credentials: REDIS },
	});
};

/** The shared-breaker chain's shape on fresh provider names, then Get Metrics on the same store
 * and names in the same execution: what the guard counted, beside what the vendor saw. */
const countedWorkflow = () => {
	const names = [`counted-dead-${id}`, `counted-next-${id}`];
	const wf = guardWorkflow(`guardcounted${id}`, {
		guarded: httpGuarded(),
		check: {
			providers: {
				provider: [
					{ name: names[0], url: `${base}/always500?id=c-${id}` },
					{ name: names[1], url: `${base}/ok?id=c-${id}&name=next` },
				],
			},
			breaker: { threshold: 3, openMs: 600000 },
			stateStore: 'redis',
		},
		report: { stateStore: 'redis' },
		extra: { credentials: REDIS },
	});
	wf.nodes.push(
		node(
			'Metrics',
			n8n.nodeType,
			2,
			{
				operation: 'getMetrics',
				providers: { provider: names.map((name) => ({ name })) },
				stateStore: 'redis',
			},
			{ credentials: REDIS },
		),
	);
	wf.connections.Done = { main: [[{ node: 'Metrics', type: 'main', index: 0 }]] };
	return wf;
};

/** Check → HTTP Request (its URL from the item: 408, 429, 529, a reset) → Report on both paths,
 * all items at once (a threshold no run reaches); `full`: the node's full-response option;
 * 'never': full response and Never Error, so every answer (503, 429, 404, 200) leaves the HTTP
 * Request node on its main output. */
const statusesWorkflow = (full) => {
	const targets =
		full === 'never'
			? ['/status/503', '/status/429', '/status/404', '/ok']
			: ['/status/408', '/status/429', '/status/529', '/reset-mid-body'];
	const http = httpGuarded();
	http.parameters.url = '={{ $json.target }}';
	if (full)
		http.parameters.options = {
			response: { response: { fullResponse: true, ...(full === 'never' && { neverError: true }) } },
		};
	const nodeType = n8n.nodeType;
	const nodes = [
		node('Items', 'n8n-nodes-base.set', 3.4, {
			mode: 'raw',
			jsonOutput: JSON.stringify({
				items: targets.map((t) => ({
					target: `${base}${t}?id=${full === 'never' ? 'stn' : 'st'}-${id}`,
				})),
			}),
		}),
		node('Split', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'items' }),
		node('Check', nodeType, 2, {
			operation: 'checkProvider',
			providers: { provider: [{ name: `statuses-${full}-${id}` }] },
			breaker: { threshold: 100, openMs: 600000 },
		}),
		http,
		node('Report', nodeType, 2, { operation: 'reportOutcome' }),
	];
	const to = (n) => [{ node: n, type: 'main', index: 0 }];
	return manualWorkflow(`guardstatuses${full}${id}`, nodes, {
		Start: { main: [to('Items')] },
		Items: { main: [to('Split')] },
		Split: { main: [to('Check')] },
		Check: { main: [to(http.name), [], []] },
		[http.name]: { main: [to('Report'), to('Report')] },
	});
};

/** Check, HTTP Request and Report wired wrong on purpose, each misuse on the error output. */
function badInputWorkflow() {
	const wid = `guardbad${id}`;
	const ok = `bad-ok-${id}`;
	const nodeType = n8n.nodeType;
	const cont = { onError: 'continueRegularOutput' };
	const ticketFrom = (edit) =>
		`={{ JSON.stringify({ ...$('Check').item.json._resilience.ticket, ${edit} }) }}`;
	const to = (n) => [{ node: n, type: 'main', index: 0 }];
	return manualWorkflow(
		wid,
		[
			node('Orphan items', 'n8n-nodes-base.set', 3.4, {
				mode: 'raw',
				jsonOutput: '{"orphan":true}',
			}),
			node('Orphan report', nodeType, 2, { operation: 'reportOutcome' }, cont),
			node('Items', 'n8n-nodes-base.set', 3.4, {
				mode: 'raw',
				jsonOutput: JSON.stringify({ items: [{ n: 1 }, { n: 2 }] }),
			}),
			node('Split', 'n8n-nodes-base.splitOut', 1, { fieldToSplitOut: 'items' }),
			node('Check', nodeType, 2, {
				operation: 'checkProvider',
				providers: { provider: [{ name: ok, url: `${base}/ok?id=b-${id}` }] },
			}),
			httpGuarded(),
			node('Report', nodeType, 2, { operation: 'reportOutcome' }),
			node('Report again', nodeType, 2, { operation: 'reportOutcome' }, cont),
			node(
				'Report foreign',
				nodeType,
				2,
				{ operation: 'reportOutcome', ticket: ticketFrom("scope: 'wf:elsewhere'") },
				cont,
			),
			node(
				'Report unknown',
				nodeType,
				2,
				{ operation: 'reportOutcome', ticket: ticketFrom("name: 'nope', provider: 5") },
				cont,
			),
			node(
				'State',
				nodeType,
				2,
				{
					operation: 'getState',
					providers: { provider: [{ name: ok, url: `${base}/ok?id=b-${id}` }] },
				},
				{ executeOnce: true },
			),
		],
		{
			Start: { main: [[...to('Orphan items'), ...to('Items')]] },
			'Orphan items': { main: [to('Orphan report')] },
			Items: { main: [to('Split')] },
			Split: { main: [to('Check')] },
			Check: { main: [to('HTTP Request')] },
			'HTTP Request': { main: [to('Report'), to('Report')] },
			Report: { main: [to('Report again')] },
			'Report again': { main: [[], [], to('Report foreign')] },
			'Report foreign': { main: [[], [], to('Report unknown')] },
			'Report unknown': { main: [[], [], to('State')] },
		},
	);
}

/** README's guard example, its URLs at the loopback providers. */
function exampleWorkflow() {
	const template = readFileSync(path.join(ROOT, 'n8n-node/examples/guard-workflow.json'), 'utf8');
	const wf = JSON.parse(template.replaceAll('http://127.0.0.1:18700', base));
	for (const n of wf.nodes) if (n.type.endsWith('.resilientProviderCall')) n.type = n8n.nodeType;
	return wf;
}

before(async () => {
	providers = await startProviders();
	base = `http://127.0.0.1:${providers.port}`;
	vendors = await startLlmVendors({ openai: OPENAI_KEY });
	install = n8nInstall(major);
	n8n = n8nInstance(install, { env: { N8N_LOG_LEVEL: process.env.GUARD_LOG ?? 'info' } });
	n8n.importCredentials([
		...creds,
		{
			id: 'guardOpenAiCred1',
			name: 'guard openai',
			type: 'openAiApi',
			data: { apiKey: OPENAI_KEY, url: `${vendors.url(`dead-${id}`)}/v1` },
		},
	]);
	n8n.importWorkflow([
		httpWorkflow(),
		openAiWorkflow(),
		...leaseWorkflows(),
		sharedWorkflow(),
		countedWorkflow(),
		statusesWorkflow(false),
		statusesWorkflow(true),
		statusesWorkflow('never'),
		badInputWorkflow(),
		exampleWorkflow(),
	]);
	// The shared-breaker test's second n8n: a copy of this folder, workflows and credentials.
	second = n8nInstance(install, { copyOf: n8n });
});
after(async () => {
	await providers?.close();
	await vendors?.close();
	await closeRedisClients();
});

test('HTTP Request guarded: 10 items, dead provider, threshold 3 → 3 requests at it, 7 served by the next', async () => {
	const wid = `guardhttp${id}`;
	const { run, log } = await n8n.execute(wid);
	assert.ok(run, log.slice(-8000));
	assert.equal(hits('/always500', `h-${id}`), 3, 'three requests at the dead provider');
	assert.equal(hits('/ok', `h-${id}`), 7, 'the rest served by the next provider');
	const auth = providers.arrivals.filter((a) => a.id === `h-${id}`).map((a) => a.authHash);
	assert.deepEqual(new Set(auth), new Set([authHash(HEADER)]), "the node's own credential");
	const d = done(run);
	assert.equal(d.items.length, 10, 'no item lost');
	assert.deepEqual(d.by, { failed: 3, success: 7 });
	const failed = d.items.filter((j) => j._resilience.outcome === 'failed');
	for (const j of failed) {
		assert.equal(j._resilience.provider, `dead-${id}`);
		assert.equal(j._resilience.observed, '500', JSON.stringify(j._resilience.observed));
		assert.equal(j._resilience.health, 'failure');
	}
	assert.deepEqual(
		failed.flatMap((j) => j._resilience.transitions.map((t) => t.to)),
		['open'],
		'the third failure opened the breaker, once',
	);
});

test('Check/Report counted through the engine: Get Metrics equals the vendor (3 + 7 calls, 3 failures, 7 rejections)', async () => {
	const { run, log } = await n8n.execute(`guardcounted${id}`);
	assert.ok(run, log.slice(-8000));
	const dead = hits('/always500', `c-${id}`);
	const next = hits('/ok', `c-${id}`);
	assert.deepEqual([dead, next], [3, 7], 'control: the vendor saw the breaker open after 3');
	const text = outputs(run, 'Metrics')[0][0].json.metrics;
	const metric = (name, provider) => {
		const value = metricValue(text, name, provider);
		assert.ok(value !== undefined, `${name} of ${provider} in:\n${text}`);
		return value;
	};
	const [d, n] = [`counted-dead-${id}`, `counted-next-${id}`];
	assert.equal(metric('calls_total', d), dead, 'each call counted once, at Report');
	assert.equal(metric('calls_total', n), next);
	assert.equal(metric('failures_total', d), 3);
	assert.equal(metric('failures_total', n), 0);
	assert.equal(metric('rejections_total', d), 7, 'Check skipped the open breaker 7 times');
	assert.equal(metric('transitions_total', d), 1);
});

for (const full of [false, true])
	test(`Report Outcome after an HTTP Request node (full response ${full ? 'on' : 'off'}): 408, 429, 529 and a reset, each read and counted as README's outcome table says`, async (t) => {
		const started = Date.now();
		// Twice in a full run beside two other lanes, `n8n execute` hung here for 300 s with only
		// its start-up logged (never alone, nor beside three CPU hogs): where it stopped is told by
		// what the vendor saw by then.
		const { run, log } = await n8n.execute(`guardstatuses${full}${id}`).catch((e) => {
			const seen = providers.arrivals
				.filter((a) => a.id === `st-${id}`)
				.map((a) => `${a.route} at +${a.t - started} ms`);
			throw new Error(`${e.message}\nthe vendor saw: ${seen.join(', ') || 'nothing'}`);
		});
		assert.ok(run, log.slice(-8000));
		const items = outputs(run, 'Report')
			.flat()
			.map((i) => i.json);
		const seen = Object.fromEntries(
			items.map((j) => [
				new URL(j.target).pathname,
				[j._resilience.observed, j._resilience.health],
			]),
		);
		t.diagnostic(JSON.stringify(seen));
		assert.equal(items.length, 4, JSON.stringify(items).slice(0, 2000));
		// The status as received (a 529 is no 500); 408 and 529 count against health, 429 does
		// not (it closes the gate), a reset does (README's outcome table).
		assert.deepEqual(seen, {
			'/status/408': ['408', 'failure'],
			'/status/429': ['429', 'neutral'],
			'/status/529': ['529', 'failure'],
			'/reset-mid-body': ['ECONNRESET', 'failure'],
		});
	});

test('Report Outcome follows the engine, not the guarded output: HTTP Request with full response and Never Error puts 503, 429 and 404 on its main output, and each leaves Report on failed', async (t) => {
	const { run, log } = await n8n.execute(`guardstatusesnever${id}`);
	assert.ok(run, log.slice(-8000));
	// Every answer left the HTTP Request node on its main output, as its full response.
	assert.equal(outputs(run, 'HTTP Request')[0].length, 4);
	assert.deepEqual(outputs(run, 'HTTP Request')[1] ?? [], []);
	const [success, , failed] = outputs(run, 'Report').map((o) => o.map((i) => i.json));
	// The item is the response: its status tells which target it was.
	const seen = (items) =>
		Object.fromEntries(
			items.map((j) => [
				j.statusCode,
				[j._resilience.outcome, j._resilience.observed, j._resilience.health],
			]),
		);
	t.diagnostic(JSON.stringify({ success: seen(success), failed: seen(failed) }));
	assert.deepEqual(seen(success), { 200: ['success', '200', 'success'] });
	assert.deepEqual(seen(failed), {
		503: ['failed', '503', 'failure'],
		429: ['failed', '429', 'neutral'],
		404: ['failed', '404', 'neutral'],
	});
	// Counted at the provider: each target was asked once.
	for (const p of ['/status/503', '/status/429', '/status/404', '/ok'])
		assert.equal(hits(p, `stn-${id}`), 1, p);
});

test("OpenAI node guarded (credential's Base URL at the loopback vendor): dead vendor, threshold 3 → 3 requests, 7 deferred", async () => {
	const wid = `guardopenai${id}`;
	vendors.script(`dead-${id}`, [500]);
	const { run, log } = await n8n.execute(wid);
	assert.ok(run, log.slice(-8000));
	assert.equal(vendors.accepted(`dead-${id}`), 3, 'three requests at the vendor, with its key');
	const d = done(run);
	assert.equal(d.items.length, 10, 'no item lost');
	assert.deepEqual(d.by, { failed: 3, deferred: 7 });
	for (const j of d.items.filter((x) => x._resilience.outcome === 'failed'))
		assert.equal(j._resilience.observed, '500', JSON.stringify(j._resilience.observed));
	for (const j of d.items.filter((x) => x._resilience.outcome === 'deferred')) {
		assert.equal(j.reason, 'circuit_open');
		assert.ok(Date.parse(j.retry_at) > Date.now(), 'retry_at after the window');
	}
});

test('a probe whose Report never comes is freed by its lease: the next probe goes out after it, from another execution (Redis)', async (t) => {
	const full = `guardlease${id}`;
	const abandon = `guardabandon${id}`;
	const trip = await n8n.execute(full);
	assert.deepEqual(done(trip.run).by, { failed: 1 }, 'one failure opened the breaker');
	await untilOpenWindowEnds(stores.redis('global'), `lease-${id}`); // as Redis's clock reads it
	const a = outputs((await n8n.execute(abandon)).run, 'Check');
	assert.equal(a[0].length, 1, 'execution A takes the probe');
	const ticket = a[0][0].json._resilience.ticket;
	assert.equal(ticket.probe, true);
	const b = await n8n.execute(full);
	const bItem = done(b.run).items[0];
	assert.equal(bItem._resilience.outcome, 'deferred', 'execution B: the probe is out');
	assert.equal(bItem.reason, 'half_open_busy');
	assert.ok(Date.now() < ticket.expires_ms, 'B ran while the lease held');
	assert.equal(hits('/always500', `l-${id}`), 1, 'B sent nothing');
	await new Promise((r) => setTimeout(r, Math.max(0, ticket.expires_ms - Date.now() + 300)));
	const c = await n8n.execute(full);
	const probeAt = providers.arrivals.filter((x) => x.id === `l-${id}`).at(-1)?.t;
	t.diagnostic(
		`measured: lease ${ticket.expires_ms - ticket.issued_ms} ms; the next probe reached the provider ${probeAt - ticket.issued_ms} ms after the abandoned one was checked`,
	);
	assert.ok(probeAt >= ticket.expires_ms, 'the next probe went out after the lease ended');
	const cItem = done(c.run).items[0];
	assert.equal(
		cItem._resilience.outcome,
		'failed',
		'execution C probed (and the provider is still dead)',
	);
	assert.equal(cItem._resilience.probe, true);
	assert.equal(hits('/always500', `l-${id}`), 2, 'one probe, after the lease');
});

test('Redis: two n8n processes guard the same provider: one breaker, each call counted once', async (t) => {
	const dead = `shared-dead-${id}`;
	const wid = `guardshared${id}`;
	const runs = await Promise.all([n8n.execute(wid), second.execute(wid)]);
	const results = runs.map((r) => done(r.run));
	assert.deepEqual(
		results.map((r) => r.items.length),
		[10, 10],
		'no item lost in either process',
	);
	const atDead = hits('/always500', `s-${id}`);
	// Checks of the two processes interleave: each may hold one ticket for the dead provider
	// when the third failure opens the breaker (one item at a time per process).
	t.diagnostic(`measured: ${atDead} requests at the dead provider from the two processes`);
	assert.ok(atDead >= 3 && atDead <= 4, `${atDead} requests at the dead provider`);
	assert.equal(atDead + hits('/ok', `s-${id}`), 20, 'every item called one provider once');
	const failed = results.reduce((n, r) => n + (r.by.failed ?? 0), 0);
	assert.equal(failed, atDead, 'each request at the dead provider reported once');
	const opened = results.flatMap((r) =>
		r.items.flatMap((j) => (j._resilience.transitions ?? []).filter((t) => t.to === 'open')),
	);
	assert.equal(opened.length, 1, 'one breaker: it opened once for both processes');
	const Redis = createRequire(path.join(ROOT, 'package.json'))('ioredis');
	const redis = new Redis({ host: '127.0.0.1', port: REDIS_PORT });
	const counters = await redis.hgetall(`rpc:{global}:${dead}:counters`);
	await redis.quit();
	assert.equal(Number(counters.calls), atDead, 'the store counted each call once');
	assert.equal(Number(counters.failures), atDead);
});

test('bad input: no pairing, a ticket reported twice, a foreign ticket, an unknown provider: each a clear error naming the field, nothing counted twice, no item lost', async () => {
	const wid = `guardbad${id}`;
	const { run, log } = await n8n.execute(wid);
	assert.ok(run, log.slice(-8000));
	const failedOf = (name) => {
		const o = outputs(run, name);
		assert.equal(o[0].length, 0, `${name}: nothing reported as a success`);
		return o[2].map((i) => i.json);
	};
	const orphan = failedOf('Orphan report');
	assert.equal(orphan.length, 1, 'the orphan item is kept');
	assert.match(orphan[0].error, /"Check Node" \(checkNode\)/);
	assert.equal(outputs(run, 'Report')[0].length, 2, 'the first report of each ticket');
	const again = failedOf('Report again');
	assert.equal(again.length, 2);
	for (const j of again) assert.match(j.error, /"Ticket" \(ticket\).*already reported/);
	const foreign = failedOf('Report foreign');
	assert.equal(foreign.length, 2);
	for (const j of foreign) assert.match(j.error, /"Ticket" \(ticket\).*in scope 'wf:elsewhere'/);
	const unknown = failedOf('Report unknown');
	assert.equal(unknown.length, 2);
	for (const j of unknown) assert.match(j.error, /"Ticket" \(ticket\).*provider 'nope'/);
	assert.equal(hits('/ok', `b-${id}`), 2, 'two calls');
	const state = outputs(run, 'State')[0][0].json;
	assert.equal(state.counters.calls, 2, 'each call counted once, however often reported');
	assert.equal(state.counters.failures, 0);
});

test('the example workflow (n8n-node/examples/guard-workflow.json): 3 failures open the breaker, the 4th item waits until retry_at, then the probe and the rest pass', async () => {
	const wf = exampleWorkflow();
	const { run, log } = await n8n.execute(wf.id);
	assert.ok(run, log.slice(-8000));
	const at = providers.arrivals.filter((a) => a.route === '/fail-then-ok');
	assert.deepEqual(
		at.map((a) => a.n),
		[1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
		'ten requests: three 503s, then the probe and six more',
	);
	const all = outputs(run, 'All jobs')[0].map((i) => i.json._resilience.outcome);
	assert.equal(all.length, 10, 'every job came back');
	assert.deepEqual(
		{
			failed: all.filter((o) => o === 'failed').length,
			success: all.filter((o) => o === 'success').length,
		},
		{ failed: 3, success: 7 },
	);
	const waited = run.data.resultData.runData['Wait until retry_at'];
	assert.equal(waited?.length, 1, 'one item waited, once');
	const check = run.data.resultData.runData['Check Provider'];
	const deferred = check.flatMap((r) => r.data.main[1] ?? []).map((i) => i.json);
	assert.deepEqual(
		deferred.map((j) => j.reason),
		['circuit_open'],
	);
	const probes = check.flatMap((r) => r.data.main[0] ?? []).filter((i) => i.json._resilience.probe);
	assert.equal(probes.length, 1, 'one probe after the wait');
});
