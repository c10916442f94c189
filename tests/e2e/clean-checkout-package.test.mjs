// The package from a clean checkout (tests/e2e/clean-checkout.mjs): built with Node alone from
// the committed pkg/, installed as n8n's community installer does, README's demo run in this n8n
// with README's counts at the providers. Without its engine, n8n still starts and the node fails
// with a clear NodeOperationError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import { n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';
import { installLikeN8n, packFromCleanCloneOnce } from './clean-checkout.mjs';
import { DEMO_NODE, demoWorkflow, requestsAtProviders } from '../support/demo-workflow.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
let providers, n8n, pkgDir, packed, demoWf, noEngineWf;

before(async () => {
	const install = n8nInstall(major);
	// npm ci runs under an n8n's Node (24 for n8n 2, 20 for n8n 1): in the test command, once, by
	// whichever lane comes first, and both n8n install that tarball (the test command's own npm ci
	// is on Node 20 too).
	packed = await packFromCleanCloneOnce(install.nodeBin);
	console.log(`packed from a clean clone of ${packed.head} under ${packed.packedBy}`);
	n8n = n8nInstance(install, { extensions: null });
	pkgDir = installLikeN8n(packed.tarball, n8n.home);
	providers = await startProviders();
	// Both tests' workflows in one import (each CLI call boots n8n).
	demoWf = demoWorkflow(providers.port, n8n.nodeType);
	demoWf.id = `demo${uid()}`;
	noEngineWf = branchesWorkflow(`pkg${uid()}`, n8n.nodeType, [
		{
			name: 'installed',
			items: 2,
			parameters: {
				providers: {
					provider: [{ name: `p-${uid()}`, url: `http://127.0.0.1:${providers.port}/ok?id=pkg` }],
				},
			},
		},
	]);
	n8n.importWorkflow([demoWf, noEngineWf]);
});
after(async () => providers?.close());

test('npm pack on a clean clone without Rust ships the built node, its engine and no .d.ts', () => {
	const has = (f) => packed.files.includes(`package/${f}`);
	for (const f of [
		'dist/nodes/ResilientProviderCall/ResilientProviderCall.node.js',
		'dist/nodes/ResilientProviderCall/ResilientProviderCall.node.json',
		'dist/nodes/ResilientProviderCall/resilientProviderCall.svg',
		'dist/nodes/ResilientProviderCall/resilientProviderCall.dark.svg',
		'dist/nodes/ResilientProviderTrigger/ResilientProviderTrigger.node.js',
		'dist/nodes/ResilientProviderTrigger/ResilientProviderTrigger.node.json',
		'dist/nodes/ResilientProviderTrigger/resilientProviderTrigger.svg',
		'dist/nodes/ResilientProviderTrigger/resilientProviderTrigger.dark.svg',
		'dist/credentials/ResilientProviderSecretsApi.credentials.js',
		'dist/credentials/resilientProviderSecrets.svg',
		'dist/credentials/resilientProviderSecrets.dark.svg',
		'dist/engine/engine.js',
		// What operators load: the Grafana dashboard and the Prometheus alerting rules.
		'n8n-node/monitoring/grafana-dashboard.json',
		'n8n-node/monitoring/alert-rules.yml',
		'LICENSE',
		'README.md',
		'package.json',
	])
		assert.ok(has(f), `${f} in the tarball (${packed.files.length} files)`);
	assert.deepEqual(
		packed.files.filter((f) => f.endsWith('.d.ts')),
		[],
	);
	// The engine's bytes are inside dist/engine/engine.js (loaded without fs: n8n's scanner).
	assert.deepEqual(
		packed.files.filter((f) => f.endsWith('.wasm')),
		[],
	);
	assert.ok(
		!packed.files.some((f) =>
			/^package\/(src|pkg|scripts|n8n-node\/(?!examples\/|monitoring\/))/.test(f),
		),
	);
});

// README's table is one quiet run: down 3, flaky 8, healthy 4. How many items meet flaky's gate
// closed by its second 429 (1 s) and go to healthy (300 ms each) depends on the machine's speed
// (seen on a loaded machine: flaky 9, healthy 3), so that split is checked as an invariant; the
// breaker's count is exact.
test("README's demo in the installed package: down 3, and every item served by flaky or healthy", async () => {
	const { run, log } = await n8n.execute(demoWf.id);
	assert.ok(run, log.slice(-3000));
	const [ok, deferred, failed] = outputs(run, DEMO_NODE);
	const counts = requestsAtProviders(providers.arrivals);
	console.log(
		`demo at the providers: ${JSON.stringify(counts)} (README: down 3, flaky 8, healthy 4)`,
	);
	assert.equal(counts.down, 3, 'the dead provider costs the threshold, then its breaker is open');
	assert.equal(
		counts.flaky - 2 + counts.healthy,
		10,
		"flaky's two 429s, then one request per item",
	);
	assert.ok(counts.healthy >= 1 && counts.healthy <= 5, JSON.stringify(counts));
	assert.deepEqual([ok.length, deferred.length, failed.length], [10, 0, 0]);
});

test('with the engine removed, n8n still starts and the node fails with a clear error', async () => {
	assert.ok(existsSync(path.join(pkgDir, 'dist/engine/engine.js')));
	rmSync(path.join(pkgDir, 'dist/engine/engine.js'));
	const { run, log } = await n8n.execute(noEngineWf.id);
	assert.ok(run, `n8n ran the workflow: ${log.slice(-2000)}`);
	const error = run.data.resultData.error;
	assert.ok(error, 'the execution reports the node error');
	assert.match(error.message, /resilience engine \(WebAssembly\) could not be loaded/);
	assert.equal(run.data.resultData.lastNodeExecuted, 'installed');
});
