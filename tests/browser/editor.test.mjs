// The node in n8n's editor, seen in headless Chromium (Debian's chromium, puppeteer-core) on
// n8n 2.41.1 with the package installed as a community package. Through the page, as a user:
// the example workflow deferred-retry.json imported from its file (its credentials chosen, the
// presets' Base URL on loopback vendors), its LLM node opened: every parameter the panel shows
// carries the label and help text of the node's description data (nothing swallowed or cut),
// every parameter the description data shows is there, the notices read in full, the credential
// pickers of the chosen types hold their credentials; the workflow run from the editor, its
// three outputs read in the output panel; then a blank workflow, the node added by the node
// creator (after n8n's Manual Trigger) and an OpenAI → Anthropic chain built in it by clicks and
// typing (credential types, credential pickers, two provider rows with their Base URL option on
// the loopback vendors), run with Execute step while OpenAI fails: Anthropic's `text` on Success,
// Deferred and Failed empty. REST only sets the owner up, logs in and creates the OpenAI and
// Anthropic credentials.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, uid } from '../support/n8n.mjs';
import { tempDir } from '../support/tmp.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	startEditorN8n,
	openEditor,
	importFromFile,
	openNode,
	panelTexts,
	outputBranches,
	addNodeToBlankWorkflow,
	panelParameterNames,
	chooseOptions,
	chooseCredential,
	addRow,
	rowValues,
	executeStep,
	credentialPickers,
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

const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: 'unused' };
let n8n, browser, pageNow, panel, vendors, branches, blankPanel, built;
// The chain built by hand talks to its own vendor instances, so their counts are its own.
const TYPED = { openai: 'typed-openai', anthropic: 'typed-anthropic' };

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
	try {
		await setUp();
	} catch (e) {
		// What the page showed when a step failed, kept past the run for whoever reads the log.
		const shot = path.join(tmpdir(), `rpc-browser-failure-${Date.now()}.png`);
		await pageNow?.screenshot({ path: shot, fullPage: true }).catch(() => {});
		console.log(`the page at the failure: ${shot}`);
		throw e;
	}
});

async function setUp() {
	vendors = await startLlmVendors(KEYS);
	// OpenAI is down: the chain moves on and Anthropic serves every item.
	vendors.script('openai', [503]);
	vendors.script(TYPED.openai, [500]);
	n8n = await startEditorN8n();
	// The user's own credentials (REST), chosen in the example's node with the presets' Base URL
	// set to the loopback vendors: the file a user has after picking theirs.
	const openAi = await n8n.credential('OpenAI account', 'openAiApi', { apiKey: KEYS.openai });
	const anthropic = await n8n.credential('Anthropic account', 'anthropicApi', {
		apiKey: KEYS.anthropic,
	});
	const wf = JSON.parse(
		readFileSync(EXAMPLE, 'utf8')
			.replace('REPLACE_OPENAI_CREDENTIAL', openAi)
			.replace('REPLACE_ANTHROPIC_CREDENTIAL', anthropic),
	);
	const [oa, an] = wf.nodes.find((n) => n.name === NODE).parameters.providers.provider;
	oa.openAiChatOptions.baseUrl = `${vendors.url('openai')}/v1`;
	an.anthropicMessagesOptions.baseUrl = vendors.url('anthropic');
	const file = path.join(tempDir('rpc-browser-'), 'deferred-retry.json');
	writeFileSync(file, JSON.stringify(wf));
	let page;
	({ browser, page } = await openEditor(n8n));
	pageNow = page;
	await importFromFile(page, n8n, file);
	await openNode(page, NODE);
	panel = await panelTexts(page);
	// Run it from the editor: the canvas's Execute workflow button, then the node's output panel.
	await page.click('[data-test-id=ndv-close-button]');
	await page.click('[data-test-id=execute-workflow-button]');
	await page
		.waitForFunction(
			() =>
				document
					.querySelector('[data-test-id=canvas-node][data-node-name="Ask an LLM"]')
					?.textContent.includes('2 items'),
			{ timeout: 90_000 },
		)
		.catch(() => {});
	await openNode(page, NODE);
	await page.waitForFunction(
		() => document.querySelector('[data-test-id=ndv]')?.textContent.includes('Success Branch'),
		{ timeout: 30_000 },
	);
	branches = await outputBranches(page);
	// A new user's start: a blank workflow, the node added through the node creator.
	await addNodeToBlankWorkflow(
		page,
		n8n,
		'Resilient Provider Call',
		'Call a fallback chain of providers',
	);
	blankPanel = await panelParameterNames(page);
	// Then the chain built by clicks and typing, no JSON: OpenAI → Anthropic on their credentials.
	await chooseOptions(page, 'credentialTypes', ['OpenAI', 'Anthropic']);
	await chooseCredential(page, 'OpenAI', 'OpenAI account');
	await chooseCredential(page, 'Anthropic', 'Anthropic account');
	// Names of their own: the example's providers "openai" and "anthropic" keep their state
	// (OpenAI's cooldown after its 503s) in this n8n, and a row's state goes by its name.
	const message = 'Summarise ticket T-9 in one line';
	const row = (name, kind, auth, model, baseUrl) => ({
		fields: {
			name,
			kind: { pick: kind },
			authentication: { pick: auth },
			model,
			userMessage: message,
		},
		options: { baseUrl: { label: 'Base URL', text: baseUrl } },
	});
	await addRow(
		page,
		'providers',
		row(
			'gpt',
			'OpenAI-Compatible Chat Completions',
			'OpenAI',
			'gpt-4o-mini',
			`${vendors.url(TYPED.openai)}/v1`,
		),
	);
	await addRow(
		page,
		'providers',
		row(
			'claude',
			'Anthropic Messages',
			'Anthropic',
			'claude-3-5-haiku-latest',
			vendors.url(TYPED.anthropic),
		),
	);
	const typed = await rowValues(page, 'providers');
	const pickers = (await credentialPickers(page)).map((c) => c.text);
	await executeStep(page, 'Success Branch');
	built = {
		typed,
		pickers,
		branches: await outputBranches(page),
		canvas: await page.$$eval('[data-test-id=canvas-node]', (els) =>
			els.map((e) => e.getAttribute('data-node-name')),
		),
	};
}
after(async () => {
	await browser?.close();
	await n8n?.stop();
	await vendors?.close();
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

test('the credential pickers of the chosen types (OpenAI, Anthropic) are there, each on its credential', () => {
	assert.deepEqual(exampleNode.parameters.credentialTypes, ['openAiApi', 'anthropicApi']);
	const texts = panel.credentials.map((c) => c.text);
	// Each picker holds the credential of its type (created as "OpenAI account", "Anthropic account").
	for (const name of ['OpenAI account', 'Anthropic account'])
		assert.equal(
			texts.filter((t) => t.includes(name)).length,
			1,
			`a picker on ${name}: ${JSON.stringify(texts)}`,
		);
	assert.equal(panel.credentials.length, 3, `Secrets, OpenAI, Anthropic: ${JSON.stringify(texts)}`);
});

test('run from the editor: OpenAI down, Anthropic answers both items on Success; Deferred and Failed are empty', () => {
	const seen = JSON.stringify(branches);
	assert.deepEqual(
		branches.map((b) => b.title.replace(/\s*\(.*\)$/, '')),
		['Success Branch', 'Deferred Branch', 'Failed Branch'],
		seen,
	);
	const [success, deferred, failed] = branches;
	assert.match(success.title, /\(2 items\)/, seen);
	assert.deepEqual(success.texts, ['anthropic says hi', 'anthropic says hi'], seen);
	for (const empty of [deferred, failed]) {
		assert.doesNotMatch(empty.title, /\(\d+ items?\)/, seen);
		assert.deepEqual(empty.texts, [], seen);
	}
	assert.ok(vendors.accepted('openai') >= 2, 'OpenAI was asked for each item');
	assert.equal(vendors.accepted('anthropic'), 2);
});

test('from a blank workflow, the added node offers Credential Types Used (to get the OpenAI and Anthropic pickers)', () => {
	const expected = shownTop
		.filter(
			(p) => p.type !== 'notice' && ['operation', 'credentialTypes', 'providers'].includes(p.name),
		)
		.map((p) => p.name);
	assert.deepEqual(
		expected.filter((name) => !blankPanel.includes(name)),
		[],
		`the new node's panel shows ${JSON.stringify(blankPanel)}`,
	);
});

test('from a blank workflow, an OpenAI → Anthropic chain built by clicks and typing: OpenAI fails, Anthropic answers on Success', () => {
	const seen = JSON.stringify(built);
	// n8n put a Manual Trigger in front of the node added to the blank workflow.
	assert.equal(built.canvas.length, 2, seen);
	assert.ok(built.canvas.includes('Resilient Provider Call'), seen);
	// What was typed and picked is what the rows hold, each on its vendor and its credential.
	const message = 'Summarise ticket T-9 in one line';
	assert.deepEqual(
		built.typed,
		[
			...['gpt', 'OpenAI-Compatible Chat Completions', 'OpenAI', 'gpt-4o-mini', message],
			`${vendors.url(TYPED.openai)}/v1`,
			...['claude', 'Anthropic Messages', 'Anthropic', 'claude-3-5-haiku-latest', message],
			vendors.url(TYPED.anthropic),
		],
		seen,
	);
	for (const name of ['OpenAI account', 'Anthropic account'])
		assert.equal(built.pickers.filter((t) => t.includes(name)).length, 1, seen);
	const [success, deferred, failed] = built.branches;
	assert.deepEqual(
		built.branches.map((b) => b.title),
		['Success Branch (1 item)', 'Deferred Branch', 'Failed Branch'],
		seen,
	);
	assert.deepEqual(success.texts, [`${TYPED.anthropic} says hi`], seen);
	assert.deepEqual([...deferred.texts, ...failed.texts], [], seen);
	// The credentials chosen in the pickers reached the vendors (a wrong or missing key is a 401).
	assert.ok(vendors.accepted(TYPED.openai) >= 1, 'OpenAI was asked, with its credential');
	assert.equal(vendors.accepted(TYPED.anthropic), 1, 'Anthropic answered, with its credential');
});
