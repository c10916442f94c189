// What npm and n8n's community-package checks read: package.json fields, LICENSE, the codex
// categories, the credential icon, and a publish workflow with npm provenance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (f) => readFileSync(path.join(ROOT, f), 'utf8');
const pj = JSON.parse(read('package.json'));

test('package.json names author, repository, homepage and bugs, and no missing main', () => {
	assert.match(pj.author.email, /@/);
	assert.match(pj.repository.url, /github\.com\/.+\.git$/);
	assert.match(pj.homepage, /^https:\/\//);
	assert.match(pj.bugs.url, /\/issues$/);
	assert.equal(pj.main, undefined);
	assert.ok(pj.keywords.includes('n8n-community-node-package'));
	assert.match(pj.scripts.prepack, /build-node\.sh/, 'npm pack builds dist/ first');
	assert.match(read('LICENSE'), /^MIT License/);
});

test('codex categories come from the community list, and the credential has light/dark icons', () => {
	const codex = JSON.parse(
		read('n8n-node/nodes/ResilientProviderCall/ResilientProviderCall.node.json'),
	);
	assert.deepEqual(codex.categories, ['Development', 'Utility']);
	assert.ok(!JSON.stringify(codex).includes('Core Nodes'));
	const cred = read('n8n-node/credentials/ResilientProviderSecretsApi.credentials.ts');
	for (const [, file] of cred.matchAll(/'file:([^']+)'/g))
		assert.ok(existsSync(path.join(ROOT, 'n8n-node/credentials', file)), file);
	assert.match(cred, /light: 'file:/);
	assert.match(cred, /dark: 'file:/);
});

test('the publish workflow publishes with npm provenance', () => {
	const yml = read('.github/workflows/publish.yml');
	// The permission must be granted at workflow or job level, not only mentioned in a comment.
	assert.match(yml, /^\s*permissions:\s*\n(\s+[\w-]+: [\w-]+.*\n)*?\s+id-token: write\b/m);
	assert.match(yml, /^\s*- run: npm publish --provenance --access public\s*$/m);
	assert.match(yml, /^\s*- run: npm ci\s*$/m);
});
