// The Resilient Chat Model outside n8n, as n8n would load it: the package packed from this
// checkout, installed the way n8n's community installer does (peers dropped), and required with
// n8n's module paths on NODE_PATH, so @langchain/core is n8n's own copy (fact 31 of the note).
// The connected models are the real LangChain clients of the same n8n install.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import Module from 'node:module';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../support/n8n.mjs';
import { tempDir } from '../support/tmp.mjs';
import { installLikeN8n } from '../e2e/clean-checkout.mjs';

/**
 * The built dist/ packed as npm would ship it; the tarball's path. dist/ is not rebuilt here: the
 * test command built it once, and other test files read it meanwhile (run scripts/build-node.sh
 * first when running these files alone).
 */
export function packWorktree() {
	if (!existsSync(path.join(ROOT, 'dist/nodes/ResilientChatModel/ResilientChatModel.node.js')))
		throw new Error('dist/ has no Resilient Chat Model: run bash scripts/build-node.sh first');
	const dir = tempDir('rpc-chat-pack-');
	execFileSync(
		'npm',
		['pack', '--ignore-scripts', '--loglevel=error', `--pack-destination=${dir}`],
		{
			cwd: ROOT,
			stdio: 'ignore',
		},
	);
	return path.join(
		dir,
		readdirSync(dir).find((f) => f.endsWith('.tgz')),
	);
}

/** A require() that resolves from n8n's install (its @langchain/openai, n8n-workflow, …). */
export function n8nRequire(install) {
	return createRequire(path.join(install.dir, 'node_modules', 'n8n', 'package.json'));
}

/** The installed package's ResilientChatModel class, @langchain/core from n8n's NODE_PATH. */
export function loadInstalledChatModel(install) {
	const home = tempDir('rpc-chat-home-');
	const pkgDir = installLikeN8n(packWorktree(), home);
	process.env.NODE_PATH = [path.join(install.dir, 'node_modules'), process.env.NODE_PATH]
		.filter(Boolean)
		.join(path.delimiter);
	Module._initPaths();
	const req = createRequire(path.join(pkgDir, 'package.json'));
	const core = req.resolve('@langchain/core/language_models/chat_models');
	return {
		pkgDir,
		coreFile: core,
		ResilientChatModel: req(
			path.join(pkgDir, 'dist/nodes/ResilientChatModel/ResilientChatModel.node.js'),
		).ResilientChatModel,
	};
}

/**
 * Just enough of n8n's supply-data context: the node's parameters, the connected models (given
 * Model 1 first, handed over last first as n8n does), and the run data the node writes.
 */
export function supplyContext(parameters, models, typeVersion = 1) {
	const runData = [];
	const get = (name) =>
		name.split('.').reduce((o, k) => (o == null ? undefined : o[k]), parameters);
	const quiet = () => undefined;
	return {
		runData,
		getNode: () => ({
			id: 'chat',
			name: 'Resilient Chat Model',
			type: 'n8n-nodes-resilient-provider-call.resilientChatModel',
			typeVersion,
			position: [0, 0],
			parameters,
		}),
		getNodeParameter: (name, _i, fallback) => get(name) ?? fallback,
		getWorkflow: () => ({ id: 'wf-chat', name: 'chat', active: false }),
		getInputData: () => [{ json: {} }],
		getExecutionId: () => 'exec-1',
		getExecutionCancelSignal: () => undefined,
		getInputConnectionData: async () => [...models].reverse(),
		getCredentials: async () => {
			throw new Error('no credentials in this test');
		},
		addInputData: (_type, data) => {
			runData.push({ input: data[0][0].json });
			return { index: runData.length - 1 };
		},
		addOutputData: (_type, index, data) => {
			runData[index].output = Array.isArray(data) ? data[0][0].json : { error: data.message };
		},
		logger: { debug: quiet, info: quiet, warn: quiet, error: quiet },
	};
}

/** n8n's ChatOpenAI (the class from its install) on loopback vendor `id`: `options` as the
 * client takes them (apiKey, maxRetries, useResponsesApi, …). */
export function loopbackOpenAI(ChatOpenAI, vendors, id, options) {
	return new ChatOpenAI({
		model: 'gpt-4o-mini',
		...options,
		configuration: { baseURL: `${vendors.url(id)}/v1` },
	});
}
