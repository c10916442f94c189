// Clock skew: an n8n process whose clock runs 30 s ahead (libfaketime) makes the same decision
// as the others, because every decision uses the store's clock (Redis TIME). A negative control
// in the same skewed clock, using the worker's own clock instead, probes the provider early.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import { ROOT, n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { REDIS_PORT } from '../support/services.mjs';
import { closeRedisClients, stores, untilOpenWindowEnds } from '../support/store-harness.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
const SKEW = { LD_PRELOAD: FAKETIME_LIB, FAKETIME: '+30s', FAKETIME_DONT_FAKE_MONOTONIC: '1' };
const BEHIND = { ...SKEW, FAKETIME: '-30s' };
// The breaker's window: shorter than the 30 s skew (so the worker's own clock would see it over),
// longer than an `n8n execute` takes to boot on a loaded 2-core machine (the skewed process must
// read the store while the window is still open). local-clock-control.mjs uses the same.
const OPEN_MS = 28_000;
let providers, n8n, skewWf, behindWf;
const id = uid();
const hits = () => providers.arrivals.filter((a) => a.route === '/always500' && a.id === id).length;

before(async () => {
	if (!existsSync(FAKETIME_LIB))
		execFileSync('bash', ['-c', 'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime'], {
			stdio: 'inherit',
		});
	assert.ok(existsSync(FAKETIME_LIB), 'libfaketime is installed');
	providers = await startProviders();
	n8n = n8nInstance(n8nInstall(major));
	n8n.importCredentials([
		{
			id: 'skewRedisCred01',
			name: 'redis',
			type: 'redis',
			data: { host: '127.0.0.1', port: REDIS_PORT, database: 0, password: '' },
		},
	]);
	// Both tests' workflows in one import (each CLI call boots n8n).
	skewWf = workflow();
	behindWf = workflow(`${id}b`, 3000);
	n8n.importWorkflow([skewWf, behindWf]);
});
after(async () => {
	await providers?.close();
	await closeRedisClients();
});

function workflow(pid = id, openMs = OPEN_MS) {
	const wf = branchesWorkflow(`skew${uid()}`, n8n.nodeType, [
		{
			name: 'chain',
			items: 1,
			parameters: {
				providers: {
					provider: [
						{
							name: `skewed-${pid}`,
							url: `http://127.0.0.1:${providers.port}/always500?id=${pid}`,
							maxAttempts: 1,
						},
					],
				},
				breaker: { threshold: 1, openMs },
				stateStore: 'redis',
			},
		},
	]);
	wf.nodes.find((n) => n.name === 'chain').credentials = {
		redis: { id: 'skewRedisCred01', name: 'redis' },
	};
	// The process's own clock, as n8n itself sees it.
	wf.nodes.push({
		id: 'clock',
		name: 'clock',
		type: 'n8n-nodes-base.set',
		typeVersion: 3.4,
		position: [200, 400],
		parameters: { mode: 'raw', jsonOutput: '={{ JSON.stringify({ now: Date.now() }) }}' },
	});
	wf.connections.Start.main[0].push({ node: 'clock', type: 'main', index: 0 });
	return wf;
}

test('a 30 s skewed n8n process sees the breaker the others opened (store clock), a local-clock control does not', async () => {
	const wf = skewWf;
	const first = await n8n.execute(wf.id);
	assert.equal(
		hits(),
		1,
		`the first process tripped the breaker (open ${OPEN_MS / 1000} s): ${JSON.stringify(first.run?.data?.resultData?.runData?.chain?.[0]?.data ?? first.log.slice(-1500))}`,
	);

	const skewed = await n8n.execute(wf.id, { env: SKEW });
	assert.ok(skewed.run, skewed.log.slice(-2000));
	const offset = outputs(skewed.run, 'clock')[0][0].json.now - Date.now();
	console.log(`skewed n8n process: Date.now() is ${offset} ms off`);
	assert.ok(
		offset > 25_000 && offset < 40_000,
		`the process clock really is ~30 s ahead (${offset} ms)`,
	);
	assert.equal(
		hits(),
		1,
		'skewed process: zero requests while the breaker is open by the store clock',
	);
	const [, deferred] = outputs(skewed.run, 'chain');
	assert.equal(deferred[0].json.reason, 'circuit_open');
	void first;

	// Negative control: the same decision in the same skewed clock, taken with the worker's clock.
	const out = execFileSync(
		process.execPath,
		[path.join(ROOT, 'tests/e2e/local-clock-control.mjs'), String(providers.port), id],
		{ env: { ...process.env, ...SKEW, RPC_REDIS_PORT: String(REDIS_PORT) } },
	).toString();
	// The control's call reaches this process's loopback provider once its loop runs again.
	for (const end = Date.now() + 10_000; hits() < 2 && Date.now() < end;)
		await new Promise((r) => setTimeout(r, 20));
	console.log(`negative control (worker clock): ${out.trim()}`);
	assert.equal(
		hits(),
		2,
		'with its own clock the skewed worker probes before the window ends: the store clock is what keeps decisions equal',
	);
});

test('a process 30 s behind probes as soon as the store says the window ended, not 30 s later', async () => {
	const pid = `${id}b`;
	const calls = () =>
		providers.arrivals.filter((a) => a.route === '/always500' && a.id === pid).length;
	const wf = behindWf;
	const first = await n8n.execute(wf.id);
	assert.equal(
		calls(),
		1,
		`tripped: open for 3 s by the store clock: ${JSON.stringify(first.run?.data?.resultData?.runData?.chain?.[0]?.data ?? first.log.slice(-1500))}`,
	);
	// The 3 s window's end, read from the breaker's row on the store's clock.
	await untilOpenWindowEnds(stores.redis('global'), `skewed-${pid}`);
	const behind = await n8n.execute(wf.id, { env: BEHIND });
	assert.ok(behind.run, behind.log.slice(-2000));
	const offset = outputs(behind.run, 'clock')[0][0].json.now - Date.now();
	console.log(`process behind: Date.now() is ${offset} ms off`);
	assert.ok(
		offset < -25_000 && offset > -40_000,
		`the process clock really is ~30 s behind (${offset} ms)`,
	);
	// By its own clock the window would still have ~27 s to run; by the store's it is over.
	assert.equal(calls(), 2, 'the process 30 s behind sent the half-open probe');
	const meta = [...outputs(behind.run, 'chain').flat()][0].json._resilience;
	assert.equal(meta.attempts[0].probe, true, JSON.stringify(meta));
});
