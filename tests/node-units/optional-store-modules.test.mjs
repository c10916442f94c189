// ioredis and pg load only when their store is chosen: the built node, copied where neither
// module can be resolved (and with any attempt to load them refused), loads and runs items
// through the in-memory store with a stubbed HTTP answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, mkdirSync, symlinkSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** dist/ alone, beside n8n-workflow (the host's peer dependency) and nothing else. */
function isolatedDist() {
	const dir = mkdtempSync(path.join(tmpdir(), 'rpc-no-stores-'));
	cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
	mkdirSync(path.join(dir, 'node_modules'));
	symlinkSync(
		path.join(ROOT, 'node_modules/n8n-workflow'),
		path.join(dir, 'node_modules/n8n-workflow'),
	);
	return dir;
}

/** A minimal IExecuteFunctions: parameters fall back to the description's defaults, as in n8n. */
function context(node, version, params, items) {
	const defaults = Object.fromEntries(node.description.properties.map((p) => [p.name, p.default]));
	const value = (name, fallback) => {
		const set = name.split('.').reduce((o, k) => o?.[k], params);
		return set !== undefined ? set : name in defaults ? defaults[name] : fallback;
	};
	const calls = [];
	return {
		calls,
		getInputData: () => items,
		getNode: () => ({
			id: 'n',
			name: 'Chain',
			type: 'x.resilientProviderCall',
			typeVersion: version,
			position: [0, 0],
			parameters: params,
		}),
		getNodeParameter: (name, _i, fallback) => value(name, fallback),
		getWorkflow: () => ({ id: 'wf', name: 'wf', active: false }),
		getCredentials: async () => {
			throw new Error('no credential set');
		},
		getExecutionId: () => 'exec-1',
		getExecutionCancelSignal: () => undefined,
		continueOnFail: () => false,
		logger: { info() {}, warn() {}, error() {}, debug() {} },
		helpers: {
			httpRequest: async (req) => {
				calls.push(req.url);
				return { statusCode: 200, headers: {}, body: { ok: true } };
			},
		},
	};
}

for (const version of [1, 2])
	test(`without ioredis and pg the node (version ${version}) loads and serves items through the memory store`, async () => {
		const dir = isolatedDist();
		const refused = [];
		const resolve = Module._resolveFilename;
		Module._resolveFilename = function (request, ...rest) {
			if (request === 'ioredis' || request === 'pg') {
				refused.push(request);
				throw Object.assign(new Error(`Cannot find module '${request}'`), {
					code: 'MODULE_NOT_FOUND',
				});
			}
			return resolve.call(this, request, ...rest);
		};
		try {
			const require = createRequire(path.join(dir, 'dist/index.js'));
			const {
				ResilientProviderCall,
			} = require('./nodes/ResilientProviderCall/ResilientProviderCall.node.js');
			const node = new ResilientProviderCall().nodeVersions[version];
			const ctx = context(
				node,
				version,
				{
					operation: 'callChain',
					stateStore: 'memory',
					providers: { provider: [{ name: 'only', method: 'GET', url: 'http://127.0.0.1:9/ok' }] },
				},
				[{ json: { n: 1 } }, { json: { n: 2 } }],
			);
			const [success, deferred, failed] = await node.execute.call(ctx);
			assert.equal(success.length, 2, JSON.stringify({ deferred, failed }).slice(0, 2000));
			assert.equal(success[0].json._resilience.provider, 'only');
			assert.equal(ctx.calls.length, 2);
			assert.deepEqual(refused, [], 'nothing asked for ioredis or pg');
			assert.ok(
				!Object.keys(require.cache).some((f) => /node_modules[\\/](ioredis|pg)[\\/]/.test(f)),
				'neither module is loaded',
			);
		} finally {
			Module._resolveFilename = resolve;
		}
	});
