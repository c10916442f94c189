// Resilient Provider Trigger and Get Metrics in one n8n process on the memory store (both n8n
// majors; the queue-mode run on Redis and Postgres is tests/trigger/, n8n 2 only): 12 executions
// fail against a dead provider whose name holds a quote, a backslash and a line break -> the
// trigger fires once, with that name; the metrics webhook (the example workflow) answers the
// Prometheus text with the name escaped, gauge 2, and the calls the provider counted, and
// Prometheus's own parser (Debian's promtool) reads the text without a complaint.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { callWorkflow, metricsWorkflow, triggerWorkflow } from '../support/trigger/workflows.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const tag = uid().slice(0, 6);
const provider = `vendor "m" \\ \n${tag}`;
const counts = { calls: 0, done: 0 };
const sink = [];
// A second provider whose opening is the marker: the trigger hands events over in the order the
// transitions came, so once the marker's is in, a duplicate of the first would be in too.
const marker = `marker ${tag}`;
let server, n8n, flows, markerFlows, metrics;

const until = async (what, ok, ms = 60_000) => {
	const end = Date.now() + ms;
	while (!(await ok())) {
		if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 200));
	}
};

before(async () => {
	server = http.createServer((req, res) => {
		const url = new URL(req.url, 'http://127.0.0.1');
		const [, kind] = url.pathname.split('/');
		if (kind === 'v') counts.calls++;
		if (kind === 'done') counts.done++;
		if (kind === 'sink') sink.push(Object.fromEntries(url.searchParams));
		res.writeHead(kind === 'v' ? 503 : 200, { 'content-type': 'application/json' });
		res.end('{}');
	});
	await new Promise((r) => server.listen(0, '127.0.0.1', r));
	const base = `http://127.0.0.1:${server.address().port}`;
	const inst = n8nInstance(n8nInstall(major));
	const triggerType = inst.nodeType.replace('resilientProviderCall', 'resilientProviderTrigger');
	flows = callWorkflow(inst.nodeType, 'memory', provider, base, tag);
	markerFlows = callWorkflow(inst.nodeType, 'memory', marker, base, `${tag}m`);
	metrics = metricsWorkflow(inst.nodeType, 'memory', provider, base, tag);
	const trigger = triggerWorkflow(triggerType, 'memory', base, 'M', `trgmem${tag}`);
	for (const wf of [flows.wf, markerFlows.wf, metrics.wf, trigger]) {
		inst.importWorkflow(wf);
		inst.activate(wf.id);
	}
	n8n = await inst.start();
	// Webhooks and the trigger are up a moment after the REST API.
	await until('the metrics webhook', async () => {
		const r = await fetch(`http://127.0.0.1:${n8n.port}/webhook/${metrics.path}`).catch(() => null);
		await r?.arrayBuffer();
		return r?.ok === true;
	});
});

after(async () => {
	await n8n?.stop();
	server?.close();
});

test('one trigger execution for the opening; the metrics webhook answers escaped Prometheus text', async () => {
	for (let i = 0; i < 12; i++) {
		const r = await fetch(`http://127.0.0.1:${n8n.port}/webhook/${flows.path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		assert.equal(r.status, 200);
		await r.arrayBuffer();
	}
	await until('12 executions', () => counts.done === 12);
	await until('the opening', () => sink.length >= 1);
	const r = await fetch(`http://127.0.0.1:${n8n.port}/webhook/${metrics.path}`);
	const text = await r.text();
	assert.equal(r.status, 200, text);
	// n8n may reorder the parameters: text/plain with version 0.0.4 is what Prometheus needs.
	assert.match(r.headers.get('content-type'), /^text\/plain;/);
	assert.match(r.headers.get('content-type'), /version=0\.0\.4/);
	const labels = `{scope="global",provider="vendor \\"m\\" \\\\ \\n${tag}"}`;
	assert.ok(text.includes(`# TYPE resilient_provider_state gauge\n`), text);
	assert.ok(text.includes(`resilient_provider_state${labels} 2\n`), text);
	assert.ok(text.includes(`resilient_provider_calls_total${labels} ${counts.calls}\n`), text);
	assert.ok(text.includes(`resilient_provider_transitions_total${labels} 1\n`), text);
	assert.ok(
		text.includes(`resilient_provider_rejections_total${labels} ${12 - counts.calls}\n`),
		text,
	);
	// The text as Prometheus parses it: promtool exits non-zero on a malformed line or a lint
	// problem (a counter without _total, a missing HELP).
	const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
	assert.equal(check.error, undefined, "promtool (Debian's prometheus package) must be installed");
	assert.equal(check.status, 0, `promtool check metrics: ${check.stdout}${check.stderr}\n${text}`);
	// The marker: open the second provider's breaker (one execution at a time) until its event is
	// in. A duplicate of the first opening would have come before it.
	await until('the marker opening', async () => {
		if (sink.some((e) => e.provider === marker)) return true;
		const m = await fetch(`http://127.0.0.1:${n8n.port}/webhook/${markerFlows.path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: '{}',
		});
		await m.arrayBuffer();
		return false;
	});
	assert.deepEqual(
		sink.map((e) => [e.from, e.to, e.provider, e.scope, e.trips]),
		[
			['closed', 'open', provider, 'global', '1'],
			['closed', 'open', marker, 'global', '1'],
		],
	);
});
