// README's pictures of the node in n8n's editor, taken in headless Chromium (Debian's chromium,
// puppeteer-core): the demo n8n 2.41.1 with the package installed, its owner set up over REST,
// OpenAI and Anthropic credentials created over REST, the example workflow
// n8n-node/examples/deferred-retry.json imported from its file through the editor (its two LLM
// providers pointed at loopback vendors that speak each dialect; OpenAI answers 503, so Anthropic
// serves), then:
//   docs/editor-node-panel.png   the node panel: the OpenAI → Anthropic chain with n8n credentials
//   docs/editor-execution.png    the workflow run from the editor, the node's three outputs
// Usage: node scripts/screenshots.mjs   (needs dist/: bash scripts/build-node.sh)
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, uid } from '../tests/support/n8n.mjs';
import { tempDir } from '../tests/support/tmp.mjs';
import { startLlmVendors } from '../tests/support/llm-vendors.mjs';
import { startEditorN8n, openEditor, importFromFile, openNode } from '../tests/support/editor.mjs';

const NODE = 'Ask an LLM';
const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: 'unused' };
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

const vendors = await startLlmVendors(KEYS);
vendors.script('openai', [503]);
const n8n = await startEditorN8n();
let browser, page;
try {
	const openAi = await n8n.credential('OpenAI account', 'openAiApi', { apiKey: KEYS.openai });
	const anthropic = await n8n.credential('Anthropic account', 'anthropicApi', {
		apiKey: KEYS.anthropic,
	});
	// The example as a user would have it after picking their credentials and base URLs.
	const wf = JSON.parse(
		readFileSync(path.join(ROOT, 'n8n-node/examples/deferred-retry.json'), 'utf8')
			.replace('REPLACE_OPENAI_CREDENTIAL', openAi)
			.replace('REPLACE_ANTHROPIC_CREDENTIAL', anthropic),
	);
	const node = wf.nodes.find((n) => n.name === NODE);
	const [oa, an] = node.parameters.providers.provider;
	oa.openAiChatOptions.baseUrl = `${vendors.url('openai')}/v1`;
	an.anthropicMessagesOptions.baseUrl = vendors.url('anthropic');
	const file = path.join(tempDir('rpc-screenshots-'), 'deferred-retry.json');
	writeFileSync(file, JSON.stringify(wf));

	({ browser, page } = await openEditor(n8n, { width: 1440, height: 2300 }));
	await importFromFile(page, n8n, file);
	await openNode(page, NODE);
	const out = (name) => path.join(ROOT, 'docs', name);
	await page.screenshot({ path: out('editor-node-panel.png') });
	console.log('docs/editor-node-panel.png');

	await page.click('[data-test-id=ndv-close-button]');
	await page.click('[data-test-id=execute-workflow-button]');
	await page.waitForFunction(
		() =>
			!document
				.querySelector('[data-test-id=execute-workflow-button]')
				?.textContent?.match(/Executing|Stop/i),
		{ timeout: 60_000 },
	);
	await pause(4000);
	await openNode(page, NODE);
	await page.waitForFunction(
		() => document.querySelector('[data-test-id=ndv]')?.textContent.includes('Success Branch'),
		{ timeout: 30_000 },
	);
	await pause(800);
	await page.screenshot({ path: out('editor-execution.png') });
	console.log('docs/editor-execution.png');
} catch (e) {
	const shot = path.join(tmpdir(), 'rpc-screenshots-failed.png');
	await page?.screenshot({ path: shot });
	console.error(`the page when it failed: ${shot}`);
	throw e;
} finally {
	await browser?.close();
	await n8n.stop();
	await vendors.close();
}
