// Resilient Provider Trigger and Get Metrics in real n8n queue mode (main + 3 workers), on Redis
// and on Postgres at once (one workflow set per store, one cluster start), with a second n8n main
// holding the same trigger workflows; a real Prometheus scrapes the metrics webhook.
//   40 executions fail against one dead provider -> the trigger fires once for the opening, in
//   total over both mains; after recovery once for the closing. A trigger workflow unpublished
//   through n8n's REST API (as the editor does) during the closing gets it once when published. Prometheus reads gauge 2 while open,
//   0 after, and the counters equal the requests the provider counted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startCluster } from '../support/queue/cluster.mjs';
import { REDIS_PORT, PG_PORT } from '../support/services.mjs';
import {
	callWorkflow,
	creds,
	metricsWorkflow,
	OPEN_MS,
	triggerWorkflow,
} from '../support/trigger/workflows.mjs';
import { startPrometheus } from '../support/trigger/prometheus.mjs';
import { activate, deactivate, ownerSession } from '../support/trigger/publish.mjs';
import { started, untaken } from '../support/trigger/consumers.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const STORES = ['redis', 'postgres'];
const tag = uid().slice(0, 6);
const provider = (store) => `vendor "${store}" ${tag}`; // a quote: escaped in labels and URLs
const dead = { redis: true, postgres: true };
const arrivals = { redis: 0, postgres: 0 };
const done = { redis: 0, postgres: 0 };
const sinks = {}; // tag -> [{from, to, provider, trips, scope}]
let server, base, cluster, main2, prom, flows, calledBeforeRecovery;

const until = async (what, ok, ms = 30_000) => {
	const end = Date.now() + ms;
	for (;;) {
		if (await ok()) return;
		if (Date.now() > end) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 250));
	}
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const triggerId = (s, k) => `trg${k}${s}${tag}`;
/** Every event so far taken and acknowledged by these triggers: none is still to be delivered,
 * so what the sinks hold now is all they will get. */
const settled = (kinds) =>
	until(`triggers ${kinds.join(', ')} took every event`, () =>
		STORES.every((s) => kinds.every((k) => untaken(s, triggerId(s, k)) === 0)),
	);
/** The transitions of this test's provider that a trigger's executions reported, one per
 * execution. The trigger fires for every provider of its scope, and the end-to-end lanes running
 * beside this one share the Redis and Postgres servers and the global scope, so their providers'
 * transitions reach these sinks too. Bull may run an execution's job again (a worker missed its
 * lock renewal), which is n8n's queue, not the trigger firing twice; a second firing is a second
 * execution and shows here. */
const transitions = (sink) => {
	const store = sink.split('-')[1];
	const ours = (sinks[sink] ?? []).filter((e) => e.provider === provider(store));
	const byExecution = new Map(ours.map((e) => [e.execution, e]));
	return [...byExecution.values()].map((e) => `${e.from}>${e.to}`);
};

before(async () => {
	const t0 = Date.now();
	server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1');
		const [, kind, name] = url.pathname.split('/');
		if (kind === 'v') {
			arrivals[name]++;
			res.writeHead(dead[name] ? 503 : 200, { 'content-type': 'application/json' });
			return res.end('{"ok":true}');
		}
		if (kind === 'done') done[name]++;
		if (kind === 'sink') (sinks[name] ??= []).push(Object.fromEntries(url.searchParams));
		res.writeHead(200, { 'content-type': 'application/json' });
		res.end('{}');
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	base = `http://127.0.0.1:${server.address().port}`;

	const install = n8nInstall(major);
	// Nothing is killed here: n8n's own 30 s job lock, so a busy worker's job is not run twice.
	cluster = await startCluster(install, { workers: 3, concurrency: 5, lockMs: 30_000 });
	const { nodeType } = cluster.n8n;
	const triggerType = nodeType.replace('resilientProviderCall', 'resilientProviderTrigger');
	flows = Object.fromEntries(
		STORES.map((s) => [s, callWorkflow(nodeType, s, provider(s), base, tag)]),
	);
	const metrics = metricsWorkflow(nodeType, 'redis', provider('redis'), base, tag);
	// Workflow A of each store runs on both mains (one consumer: its id); B only on the second.
	const trigger = (s, k) => triggerWorkflow(triggerType, s, base, `${k}-${s}`, triggerId(s, k));
	const storeCreds = creds(REDIS_PORT, PG_PORT);
	main2 = n8nInstance(install);
	main2.importCredentials(storeCreds);
	for (const s of STORES)
		for (const wf of [trigger(s, 'A'), trigger(s, 'B')]) {
			main2.importWorkflow(wf);
			main2.activate(wf.id);
		}
	const second = main2.start();
	await cluster.start(
		[...STORES.flatMap((s) => [flows[s].wf, trigger(s, 'A')]), metrics.wf],
		storeCreds,
	);
	main2.running = await second;
	prom = await startPrometheus(`127.0.0.1:${cluster.port}`, `/webhook/${metrics.path}`);
	// n8n reports a workflow active before its trigger has subscribed; a new consumer starts at
	// the stream's end, so the test waits for each to exist in the store.
	await until('every trigger consumer started', () =>
		STORES.every((s) => ['A', 'B'].every((k) => started(s, triggerId(s, k)))),
	);
	console.log(`queue mode, second main and Prometheus up in ${Date.now() - t0} ms`);
});

after(async () => {
	await prom?.stop();
	await main2?.running?.stop();
	await cluster?.stop();
	server?.close();
});

const post = async (store, n) => {
	const sent = [];
	for (let i = 0; i < n; i++) {
		sent.push(cluster.post(flows[store].path, { i }));
		if (sent.length % 10 === 0) await Promise.all(sent.splice(0));
	}
	await Promise.all(sent);
};
const gauge = (s) =>
	prom.value(`resilient_provider_state{provider=${JSON.stringify(provider(s))}}`);
const calls = (s) =>
	prom.value(`resilient_provider_calls_total{provider=${JSON.stringify(provider(s))}}`);

test('40 executions against a dead provider: the opening fires the trigger once in total over two mains', async () => {
	const t0 = Date.now();
	await Promise.all(STORES.map((s) => post(s, 40)));
	console.log(`40 posted per store in ${Date.now() - t0} ms`);
	await until('40 executions per store', () => STORES.every((s) => done[s] === 40), 120_000);
	const allDone = Date.now(); // every execution wrote its counters before its `done` call
	console.log(
		`40 done per store in ${Date.now() - t0} ms; provider calls ${JSON.stringify(arrivals)}`,
	);
	await until('the openings', () =>
		STORES.every((s) => ['A', 'B'].every((k) => transitions(`${k}-${s}`).length >= 1)),
	);
	await settled(['A', 'B']);
	for (const s of STORES) {
		assert.deepEqual(transitions(`A-${s}`), ['closed>open'], `${s}: ${JSON.stringify(sinks)}`);
		assert.deepEqual(transitions(`B-${s}`), ['closed>open'], s);
		const e = sinks[`A-${s}`].find((x) => x.provider === provider(s));
		assert.deepEqual([e.provider, e.trips, e.scope], [provider(s), '1', 'global']);
		assert.ok(Math.abs(Number(e.at_ms) - Date.now()) < 300_000, `at_ms ${e.at_ms}`);
		// 5 failures open it; executions already past admission may still call (at most one
		// per execution slot: 3 workers x 5); the others are rejected without a call.
		assert.ok(arrivals[s] >= 5 && arrivals[s] <= 5 + 14, `${s}: ${arrivals[s]} calls`);
	}
	calledBeforeRecovery = { ...arrivals };
	await until('Prometheus reads the open gauge', async () => (await gauge('redis')) === 2);
	await until('Prometheus reads the calls', async () => (await calls('redis')) === arrivals.redis);
	// The calls stop at the opening, the rejections go on to the last execution: read them from
	// a scrape taken after every execution was done, not from whichever scrape came last.
	const rejections = await prom.valueScrapedAfter(
		`resilient_provider_rejections_total{provider=${JSON.stringify(provider('redis'))}}`,
		allDone,
	);
	// maxAttempts 1: each of the 40 executions either called once or was rejected once.
	assert.equal(rejections, 40 - arrivals.redis);
});

test('recovery while B is unpublished as in the editor: the closing fires A once over two mains; B gets it once when published again', async () => {
	// B runs only on the second main: switched off there (REST, as the editor's Unpublish) during
	// the closing, its triggers are closed, not just idle.
	const rest = await ownerSession(main2.running.port);
	for (const s of STORES) await deactivate(rest, triggerId(s, 'B'));
	for (const s of STORES) dead[s] = false;
	const opened = Math.max(
		...STORES.map((s) => Number(sinks[`A-${s}`].find((x) => x.provider === provider(s)).at_ms)),
	);
	await sleep(Math.max(0, opened + OPEN_MS + 500 - Date.now())); // the open window ends
	await Promise.all(STORES.map((s) => post(s, 1)));
	await until('the closings', () => STORES.every((s) => transitions(`A-${s}`).length >= 2));
	await settled(['A']); // B is off: its events wait for it
	for (const s of STORES) {
		assert.deepEqual(transitions(`A-${s}`), ['closed>open', 'half_open>closed'], s);
		assert.deepEqual(transitions(`B-${s}`), ['closed>open'], `${s}: B was off`);
		assert.equal(arrivals[s], calledBeforeRecovery[s] + 1, `${s}: one probe closes it`);
	}
	await until('Prometheus reads the closed gauge', async () => (await gauge('redis')) === 0);
	await until('Prometheus reads the calls', async () => (await calls('redis')) === arrivals.redis);
	for (const s of STORES) await activate(rest, triggerId(s, 'B'));
	await until('B gets the closing it missed', () =>
		STORES.every((s) => transitions(`B-${s}`).length >= 2),
	);
	await settled(['A', 'B']);
	for (const s of STORES) {
		assert.deepEqual(transitions(`B-${s}`), ['closed>open', 'half_open>closed'], s);
		assert.deepEqual(transitions(`A-${s}`), ['closed>open', 'half_open>closed'], `${s}: no repeat`);
	}
});
