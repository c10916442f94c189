// The Fair Share Key's default is the version's (src/config/versions.rs, `fair_share_by_workflow`):
// from Call Chain 2.2, Check Provider 2.2 and the chat model 1.2 the node hands the engine the
// workflow as the key where the user set none; before, none (each worker a part of its own).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { versionDefaults, withVersionDefaults } = require('../../dist/lib/plan/versionDefaults.js');

const keyAt = (node, version, set) => {
	const config = { providers: [{ name: 'm' }], ...set };
	withVersionDefaults(config, versionDefaults(node, version), 'wf-7');
	return config.fair_share_key;
};

test('from Call Chain 2.2, Check Provider 2.2 and the chat model 1.2 the key is the workflow', () => {
	assert.equal(keyAt('callChain', 2.2), 'workflow:wf-7');
	assert.equal(keyAt('guard', 2.2), 'workflow:wf-7');
	assert.equal(keyAt('chatModel', 1.2), 'workflow:wf-7');
});

test('before those versions no key is handed over: each worker keeps a part of its own', () => {
	assert.equal(keyAt('callChain', 2.1), undefined);
	assert.equal(keyAt('guard', 2.1), undefined);
	assert.equal(keyAt('chatModel', 1.1), undefined);
});

test("the user's key is kept, and an unsaved workflow (no id) hands over none", () => {
	assert.equal(keyAt('callChain', 2.2, { fair_share_key: 'customer-42' }), 'customer-42');
	const config = { providers: [{ name: 'm' }] };
	withVersionDefaults(config, versionDefaults('callChain', 2.2), undefined);
	assert.equal(config.fair_share_key, undefined);
});
