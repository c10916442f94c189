// README's pictures of the node in n8n's editor, taken in headless Chromium (Debian's chromium,
// puppeteer-core): the demo n8n 2.41.1 with the package installed, its owner set up over REST,
// OpenAI and Anthropic credentials created over REST, the example workflow
// n8n-node/examples/deferred-retry.json imported from its file through the editor (its two LLM
// providers pointed at loopback vendors that speak each dialect; OpenAI answers 503, so Anthropic
// serves), then:
//   docs/editor-node-panel.png   the node panel: the OpenAI → Anthropic chain with n8n credentials
//   docs/editor-execution.png    the workflow run from the editor, the node's three outputs
// and README's AI Agent example n8n-node/examples/resilient-chat-model-agent.json imported the
// same way (its credentials' Base URL on the loopback vendors), run from the editor: OpenAI
// answers the first turn with a Calculator call and fails the second, Anthropic finishes:
//   docs/editor-ai-agent.png        the canvas: the agent, the Resilient Chat Model, its two
//                                   models and the tool, after the run
//   docs/editor-ai-agent-model.png  the Resilient Chat Model's panel, its model calls' entries
// Usage: node scripts/screenshots.mjs [chain] [ai-agent]   (default both; needs dist/:
// bash scripts/build-node.sh)
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, uid } from '../tests/support/n8n.mjs';
import { tempDir } from '../tests/support/tmp.mjs';
import { startLlmVendors } from '../tests/support/llm-vendors.mjs';
import { startEditorN8n, openEditor, importFromFile, openNode } from '../tests/support/editor.mjs';
import { agentExampleFile, AGENT_MODEL } from '../tests/support/agent-example.mjs';

const NODE = 'Ask an LLM';
const KEYS = { openai: `sk-oa-${uid()}`, anthropic: `sk-ant-${uid()}`, gemini: 'unused' };
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
const wanted = process.argv.slice(2);
const take = (group) => wanted.length === 0 || wanted.includes(group);
const out = (name) => path.join(ROOT, 'docs', name);

/** The canvas's Execute workflow, then until the button no longer says it is executing. */
async function executeWorkflow(page) {
	await page.click('[data-test-id=execute-workflow-button]');
	await page.waitForFunction(
		() =>
			!document
				.querySelector('[data-test-id=execute-workflow-button]')
				?.textContent?.match(/Executing|Stop/i),
		{ timeout: 60_000 },
	);
}

const vendors = await startLlmVendors(KEYS);
vendors.script('openai', [503]);
// The agent's models: a Calculator call, then down (503 without a hint); Anthropic echoes the tool.
vendors.script('agent-openai', [
	{ tool: 'Calculator', args: { input: '17 * 23.5' } },
	{ status: 503 },
]);
vendors.script('agent-anthropic', ['echo_tool']);
const n8n = await startEditorN8n();
let browser, page;
try {
	const openAi = await n8n.credential('OpenAI account', 'openAiApi', { apiKey: KEYS.openai });
	const anthropic = await n8n.credential('Anthropic account', 'anthropicApi', {
		apiKey: KEYS.anthropic,
	});
	({ browser, page } = await openEditor(n8n, { width: 1440, height: 2300 }));
	if (take('chain')) {
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

		await importFromFile(page, n8n, file);
		await openNode(page, NODE);
		await page.screenshot({ path: out('editor-node-panel.png') });
		console.log('docs/editor-node-panel.png');

		await page.click('[data-test-id=ndv-close-button]');
		await executeWorkflow(page);
		await pause(4000);
		await openNode(page, NODE);
		await page.waitForFunction(
			() => document.querySelector('[data-test-id=ndv]')?.textContent.includes('Success Branch'),
			{ timeout: 30_000 },
		);
		await pause(800);
		await page.screenshot({ path: out('editor-execution.png') });
		console.log('docs/editor-execution.png');
	}
	if (take('ai-agent')) {
		const file = await agentExampleFile(n8n, vendors, KEYS, {
			openai: 'agent-openai',
			anthropic: 'agent-anthropic',
		});
		await page.setViewport({ width: 1440, height: 1000 });
		await importFromFile(page, n8n, file);
		await executeWorkflow(page);
		await page.waitForFunction(
			() =>
				document
					.querySelector('[data-test-id=canvas-node][data-node-name="AI Agent"]')
					?.textContent.includes('1 item'),
			{ timeout: 60_000 },
		);
		// The run's toast would cover the canvas's corner: closed, then the canvas fitted.
		await page.click('.el-notification .el-notification__closeBtn').catch(() => {});
		await page.click('[data-test-id=zoom-to-fit]').catch(() => {});
		await pause(1000);
		await page.screenshot({ path: out('editor-ai-agent.png') });
		console.log('docs/editor-ai-agent.png');
		await page.setViewport({ width: 1440, height: 1200 });
		await openNode(page, AGENT_MODEL);
		await pause(800);
		await page.screenshot({ path: out('editor-ai-agent-model.png') });
		console.log('docs/editor-ai-agent-model.png');
	}
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
