// The node in n8n's editor, seen in headless Chromium (Debian's chromium, puppeteer-core) on
// n8n 2.41.1 with the package installed as a community package. Through the page, as a user:
// the example workflow imported from its file, its LLM node opened; every parameter the panel
// shows carries the label and help text of the node's description data (nothing swallowed or
// cut), every parameter the description data says is shown is there, the notices read in full,
// and the credential pickers of the chosen types are there. REST only sets the owner up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../support/n8n.mjs';
import {
	startEditorN8n,
	openEditor,
	importFromFile,
	openNode,
	panelTexts,
} from '../support/editor.mjs';

const require = createRequire(import.meta.url);
const { NodeHelpers } = require('n8n-workflow');
const {
	ResilientProviderCall,
} = require('../../dist/nodes/ResilientProviderCall/ResilientProviderCall.node.js');
const v2 = new ResilientProviderCall().nodeVersions[2].description;

const EXAMPLE = path.join(ROOT, 'n8n-node/examples/deferred-retry.json');
const example = JSON.parse(readFileSync(EXAMPLE, 'utf8'));
const NODE = 'Ask an LLM';
const exampleNode = example.nodes.find((n) => n.name === NODE);

let n8n, browser, panel;

/** Every property of the description, nested ones included (rows, collections' options). */
function allProperties(props, out = []) {
	for (const p of props) {
		out.push(p);
		for (const o of p.options ?? []) if (o.values) allProperties(o.values, out);
		if (p.type === 'collection') allProperties(p.options ?? [], out);
	}
	return out;
}
const described = allProperties(v2.properties);
const norm = (s) =>
	String(s ?? '')
		.replace(/\s+/g, ' ')
		.trim();
const defaults = Object.fromEntries(v2.properties.map((p) => [p.name, p.default]));
const rootValues = { ...defaults, ...exampleNode.parameters };
/** The top-level properties n8n's display logic shows for the example's node. */
const shownTop = v2.properties.filter((p) =>
	NodeHelpers.displayParameter(rootValues, p, { typeVersion: 2 }, null, rootValues),
);

before(async () => {
	n8n = await startEditorN8n();
	let page;
	({ browser, page } = await openEditor(n8n));
	await importFromFile(page, n8n, EXAMPLE);
	await openNode(page, NODE);
	panel = await panelTexts(page);
});
after(async () => {
	await browser?.close();
	await n8n?.stop();
});

test('every label the panel shows has the description data’s name and help text, in full', () => {
	assert.ok(panel.labels.length >= 10, `labels read: ${JSON.stringify(panel.labels)}`);
	for (const { name, text, help } of panel.labels) {
		const candidates = described.filter((p) => p.name === name);
		assert.ok(candidates.length, `the panel shows "${text}" (${name}), unknown to the description`);
		const match = candidates.find((p) => norm(p.displayName) === norm(text));
		assert.ok(
			match,
			`${name}: label "${text}", description says ${candidates.map((p) => `"${p.displayName}"`)}`,
		);
		const expected = candidates
			.filter((p) => norm(p.displayName) === norm(text))
			.map((p) => norm(p.description));
		assert.ok(
			expected.includes(norm(help)),
			`${name}: help "${help}", description says ${JSON.stringify(expected)}`,
		);
	}
});

test('every top-level parameter the description data shows for this node is in the panel', () => {
	const seen = new Set(panel.labels.map((l) => l.name));
	const missing = shownTop
		.filter((p) => p.type !== 'notice' && !seen.has(p.name))
		.map((p) => `${p.displayName} (${p.name})`);
	assert.deepEqual(
		missing,
		[],
		`shown by the description data, absent from the panel: ${missing.join(', ')}`,
	);
});

test('the notices read in full', () => {
	const expected = shownTop.filter((p) => p.type === 'notice').map((p) => norm(p.displayName));
	assert.deepEqual(panel.notices.map(norm), expected);
});

test('the credential pickers of the chosen types (OpenAI, Anthropic) are there', () => {
	const texts = panel.credentials.map((c) => c.text);
	for (const vendor of ['OpenAI', 'Anthropic'])
		assert.ok(
			texts.some((t) => t.includes(vendor)),
			`a ${vendor} credential picker: ${JSON.stringify(texts)}`,
		);
	assert.deepEqual(exampleNode.parameters.credentialTypes, ['openAiApi', 'anthropicApi']);
});
