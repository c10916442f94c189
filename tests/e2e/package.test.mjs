// Installed the way users install it: `npm pack`, the tarball unpacked into the n8n user
// folder's .n8n/nodes as n8n's community-package installer does (peer and dev dependencies
// stripped, `npm install --ignore-scripts`), then run. Without its .wasm, n8n still starts
// and the node fails with a clear NodeOperationError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, rmSync, existsSync } from 'node:fs';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import { ROOT, n8nInstall, n8nInstance, branchesWorkflow, outputs, uid } from '../support/n8n.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const PKG = 'n8n-nodes-resilient-provider-call';
let providers, n8n, pkgDir;

before(async () => {
	providers = await startProviders();
	n8n = n8nInstance(n8nInstall(major), { extensions: null });
	const tarball = execFileSync('npm', ['pack', '--silent', `--pack-destination=${n8n.home}`], {
		cwd: ROOT,
	})
		.toString()
		.trim()
		.split('\n')
		.pop();
	const nodesDir = path.join(n8n.home, '.n8n', 'nodes');
	pkgDir = path.join(nodesDir, 'node_modules', PKG);
	mkdirSync(pkgDir, { recursive: true });
	execFileSync('tar', ['-xzf', path.join(n8n.home, tarball), '-C', pkgDir, '--strip-components=1']);
	const pj = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
	delete pj.devDependencies;
	delete pj.peerDependencies;
	delete pj.optionalDependencies;
	writeFileSync(path.join(pkgDir, 'package.json'), JSON.stringify(pj, null, 2));
	execFileSync(
		'npm',
		[
			'install',
			'--audit=false',
			'--fund=false',
			'--bin-links=false',
			'--install-strategy=shallow',
			'--ignore-scripts=true',
			'--package-lock=false',
		],
		{ cwd: pkgDir, stdio: 'ignore' },
	);
	writeFileSync(
		path.join(nodesDir, 'package.json'),
		JSON.stringify({ name: 'installed-nodes', private: true, dependencies: { [PKG]: pj.version } }),
	);
});
after(async () => providers?.close());

function workflow() {
	return branchesWorkflow(`pkg${uid()}`, n8n.nodeType, [
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
}

test('npm pack carries dist/ with the engine, and the installed package runs in n8n', async () => {
	assert.ok(
		existsSync(path.join(pkgDir, 'dist/engine/engine_bg.wasm')),
		'the .wasm is in the tarball',
	);
	assert.ok(
		existsSync(path.join(pkgDir, 'dist/nodes/ResilientProviderCall/resilientProviderCall.svg')),
	);
	const wf = workflow();
	n8n.importWorkflow(wf);
	const { run, log } = await n8n.execute(wf.id);
	assert.ok(run, log.slice(-3000));
	assert.equal(outputs(run, 'installed')[0].length, 2);
});

test('with the .wasm removed, n8n still starts and the node fails with a clear error', async () => {
	rmSync(path.join(pkgDir, 'dist/engine/engine_bg.wasm'));
	const wf = workflow();
	n8n.importWorkflow(wf);
	const { run, log } = await n8n.execute(wf.id);
	assert.ok(run, `n8n ran the workflow: ${log.slice(-2000)}`);
	const error = run.data.resultData.error;
	assert.ok(error, 'the execution reports the node error');
	assert.match(error.message, /resilience engine \(WebAssembly\) could not be loaded/);
	assert.equal(run.data.resultData.lastNodeExecuted, 'installed');
});
