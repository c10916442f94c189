// A credential's Allowed HTTP Request Domains, read through the n8n-workflow of each n8n major
// (its functions changed shape between 1.x and 2.x): the node refuses a URL outside the list,
// refuses "none", and lets "all" through without reading the node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { n8nInstall, ROOT } from '../support/n8n.mjs';

/** dist/lib/auth.js loaded fresh, its `n8n-workflow` the one of n8n `major`. */
function authWith(major) {
	const workflow = path.join(n8nInstall(major).dir, 'node_modules/n8n-workflow');
	const resolve = Module._resolveFilename;
	Module._resolveFilename = function (request, ...rest) {
		return resolve.call(this, request === 'n8n-workflow' ? workflow : request, ...rest);
	};
	try {
		const require = createRequire(path.join(ROOT, 'dist/index.js'));
		for (const k of Object.keys(require.cache))
			if (k.includes('n8n-workflow') || k.endsWith('auth.js')) delete require.cache[k];
		const auth = require('./lib/auth.js');
		const loaded = require(workflow);
		assert.equal(
			loaded.isDomainAllowed.length,
			major === 1 ? 2 : 1,
			`n8n ${major}'s own n8n-workflow is the one in use`,
		);
		return auth;
	} finally {
		Module._resolveFilename = resolve;
	}
}

const node = {
	id: 'n',
	name: 'Chain',
	type: 'x',
	typeVersion: 2,
	position: [0, 0],
	parameters: {},
};
const creds = (data) => ({ httpHeaderAuth: { name: 'X-Key', value: 'v', ...data } });

for (const major of [1, 2])
	test(`n8n ${major}: allowed domains are honoured before anything is sent`, () => {
		const auth = authWith(major);
		const only = creds({ allowedHttpRequestDomains: 'domains', allowedDomains: 'api.example.com' });
		assert.doesNotThrow(() =>
			auth.assertUrlAllowed(node, 'p', 'https://api.example.com/v1', 'httpHeaderAuth', only),
		);
		assert.throws(
			() => auth.assertUrlAllowed(node, 'p', 'http://127.0.0.1:9/x', 'httpHeaderAuth', only),
			/^NodeOperationError: Provider "p": its Header Auth credential allows requests only to api\.example\.com, not to 127\.0\.0\.1:9$/,
		);
		assert.throws(
			() =>
				auth.assertUrlAllowed(
					node,
					'p',
					'https://api.example.com/',
					'httpHeaderAuth',
					creds({ allowedHttpRequestDomains: 'none' }),
				),
			/configured to prevent use within an? (Resilient Provider Call|.*) node/,
		);
		let read = 0;
		const all = creds({ allowedHttpRequestDomains: 'all' });
		assert.equal(
			auth.allowedDomains(() => (read++, node), 'httpHeaderAuth', all),
			undefined,
		);
		assert.equal(read, 0, '"all" never copies the node');
	});
