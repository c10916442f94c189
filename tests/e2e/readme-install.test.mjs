// README's install and import steps as written: the `npm install <package>` command README's
// "Install in your n8n" gives, run in the folder it names (`~/.n8n/nodes` under a fresh n8n home),
// with the clean clone's packed tarball in place of the registry's copy (the version under test
// is not published) and `--ignore-scripts` as n8n's installer adds; then README's demo example
// (n8n-node/examples/demo-workflow.json) imported with n8n's CLI and executed at loopback providers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startProviders } from '../support/providers.mjs';
import { ROOT, n8nInstall, n8nInstance, outputs, uid } from '../support/n8n.mjs';
import { packFromCleanCloneOnce } from './clean-checkout.mjs';
import { DEMO_NODE, demoWorkflow } from '../support/demo-workflow.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const PKG = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).name;

/** README's install step: the npm command, the folder it runs in, the example it names. */
export function readmeInstall(readme) {
	const section = /^## Install in your n8n\n([\s\S]*?)^## /m.exec(readme)?.[1];
	assert.ok(section, 'README has "## Install in your n8n"');
	const cmd = /`npm install ([^`\s]+)` in `([^`]+)`/.exec(section);
	assert.ok(cmd, 'the install section names `npm install <package>` in `<folder>`');
	const example = /\[`(n8n-node\/examples\/demo-workflow\.json)`\]/.exec(readme);
	assert.ok(example, 'README names the demo example');
	return { pkg: cmd[1], folder: cmd[2], example: example[1] };
}

let providers, n8n, steps, wf;

before(async () => {
	steps = readmeInstall(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
	assert.equal(steps.pkg, PKG, "README installs this package's name");
	assert.equal(steps.folder, '~/.n8n/nodes');
	const install = n8nInstall(major);
	const packed = await packFromCleanCloneOnce(install.nodeBin);
	n8n = n8nInstance(install, { extensions: null });
	const nodesDir = path.join(n8n.home, steps.folder.replace(/^~\//, ''));
	mkdirSync(nodesDir, { recursive: true });
	if (!existsSync(path.join(nodesDir, 'package.json')))
		writeFileSync(
			path.join(nodesDir, 'package.json'),
			JSON.stringify({ name: 'installed-nodes', private: true }),
		);
	execFileSync(
		'npm',
		['install', packed.tarball, '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
		{ cwd: nodesDir, stdio: ['ignore', 'ignore', 'inherit'] },
	);
	assert.ok(existsSync(path.join(nodesDir, 'node_modules', PKG, 'dist/engine/engine.js')));
	providers = await startProviders();
	assert.ok(existsSync(path.join(ROOT, steps.example)));
	wf = demoWorkflow(providers.port, n8n.nodeType);
	wf.id = `readme${uid()}`;
	n8n.importWorkflow([wf]);
});
after(async () => providers?.close());

test("README's install command and demo example, in n8n: every item served", async () => {
	const { run, log } = await n8n.execute(wf.id);
	assert.ok(run, log.slice(-3000));
	const [ok, deferred, failed] = outputs(run, DEMO_NODE);
	assert.deepEqual([ok.length, deferred.length, failed.length], [10, 0, 0]);
});
