// README's pictures of the node in n8n's editor and n8n's hosted chat, taken in headless Chromium
// (Debian's chromium, puppeteer-core): the demo n8n 2.41.1 with the package installed, its owner
// set up over REST, OpenAI and Anthropic credentials created over REST, the example workflow
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
// and README's streaming example n8n-node/examples/resilient-chat-model-streaming.json (a public
// Chat Trigger in hosted-chat mode, Response Mode Streaming) with its own credentials (Base URL on
// the loopback vendors) and provider names, created over REST and published, then its chat page
// opened as a visitor does: a question typed and sent, OpenAI answering 503, Anthropic streaming
// the answer in deltas 150 ms apart:
//   docs/chat-streaming.png  n8n's hosted chat page: the question and the streamed answer
// and the same chat on the Resilient Chat Model 1.1 (On a Broken Stream: Continue, its default),
// OpenAI streaming the first half of the answer, then dropping its connection, Anthropic
// continuing it (its request carrying the first half as its prefix; it repeats the last two
// words, which the node cuts):
//   docs/chat-continued.png  the hosted chat: one whole answer, no error
// The page loads normalize.css and @n8n/chat's widget from cdn.jsdelivr.net, which this machine
// cannot reach: those requests are answered from the npm registry's copy of the same packages
// (npm pack into $RPC_CACHE/chat-widget, once), every other request goes through. Its title
// and greeting carry an emoji: Debian's fonts-noto-color-emoji is installed first when no font on
// the machine has one (as scripts/lib/browser-install.sh installs Chromium).
// Usage: node scripts/screenshots.mjs [chain] [ai-agent] [streaming-chat] [continued-chat]
// (default all; needs
// dist/: bash scripts/build-node.sh)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { ROOT, uid } from '../tests/support/n8n.mjs';
import { tempDir } from '../tests/support/tmp.mjs';
import { startLlmVendors } from '../tests/support/llm-vendors.mjs';
import { startEditorN8n, openEditor, importFromFile, openNode } from '../tests/support/editor.mjs';
import { agentExampleFile, AGENT_MODEL } from '../tests/support/agent-example.mjs';
import { activate } from '../tests/support/trigger/publish.mjs';

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

// The hosted chat's widget: the packages (and versions) its page asks cdn.jsdelivr.net for; the
// page names no @n8n/chat version, so jsdelivr serves the latest, 1.37.0 when this was written.
const CACHE =
	process.env.RPC_CACHE ?? path.join(homedir(), '.cache/n8n-nodes-resilient-provider-call');
const WIDGET = path.join(CACHE, 'chat-widget');
const WIDGET_PACKAGES = { '@n8n/chat': '1.37.0', 'normalize.css': '8.0.1' };
const CHAT_QUESTION = 'Which city is the capital of France?';
const CHAT_ANSWER = [
	'The capital of France',
	' is **Paris**,',
	' home of the Eiffel Tower',
	' and the Louvre.',
	' Anything else you would like',
	' to know about it?',
];

/**
 * The widget's packages unpacked under WIDGET/node_modules (once). `npm pack`, not `npm install`:
 * the page loads only their built files, and @n8n/chat 1.37.0's own dependencies do not all
 * resolve on the registry (@n8n/design-system@2.37.0 is missing).
 */
function chatWidget() {
	for (const [name, version] of Object.entries(WIDGET_PACKAGES)) {
		const dir = path.join(WIDGET, 'node_modules', name);
		const pj = path.join(dir, 'package.json');
		if (existsSync(pj) && JSON.parse(readFileSync(pj, 'utf8')).version === version) continue;
		mkdirSync(dir, { recursive: true });
		const tgz = execFileSync(
			'npm',
			['pack', '--silent', '--pack-destination', WIDGET, `${name}@${version}`],
			{ stdio: ['ignore', 'pipe', 'inherit'] },
		)
			.toString()
			.trim()
			.split('\n')
			.pop();
		execFileSync('tar', ['-xzf', path.join(WIDGET, tgz), '-C', dir, '--strip-components=1']);
	}
}

/** An emoji font for Chromium (read when it starts): Debian's, installed when none is there. */
function emojiFont() {
	const has = () => execFileSync('fc-list', [':charset=1f44b', 'family']).toString().trim() !== '';
	if (has()) return;
	console.error("installing Debian's fonts-noto-color-emoji for the chat's emoji");
	const apt = ['apt-get', 'install', '-y', 'fonts-noto-color-emoji'];
	const [cmd, ...args] = process.getuid() === 0 ? apt : ['sudo', ...apt];
	execFileSync(cmd, args, { stdio: ['ignore', 'ignore', 'inherit'] });
	if (!has()) throw new Error('fonts-noto-color-emoji installed, yet no font has an emoji');
}

/** The installed file for a cdn.jsdelivr.net URL the chat page asks for, or null. */
function widgetFile(url) {
	const { pathname } = new URL(url);
	const chat = pathname.match(/^\/npm\/@n8n\/chat(?:@[^/]+)?\/dist\/(.+)$/);
	if (chat) return path.join(WIDGET, 'node_modules/@n8n/chat/dist', chat[1]);
	// jsdelivr minifies on request; the package ships the file unminified.
	if (/^\/npm\/normalize\.css(?:@[^/]+)?\/normalize(?:\.min)?\.css$/.test(pathname))
		return path.join(WIDGET, 'node_modules/normalize.css/normalize.css');
	return null;
}

/** `page` answering the chat page's cdn.jsdelivr.net requests from WIDGET; the rest go through. */
async function serveWidget(page) {
	await page.setRequestInterception(true);
	page.on('request', (request) => {
		if (request.isInterceptResolutionHandled()) return;
		if (!request.url().startsWith('https://cdn.jsdelivr.net/')) return void request.continue();
		const file = widgetFile(request.url());
		if (!file || !existsSync(file)) {
			console.error(`not served from the npm copy: ${request.url()}`);
			return void request.respond({ status: 404, body: 'not found' });
		}
		request.respond({
			status: 200,
			// A module script from another origin is fetched in CORS mode.
			headers: { 'access-control-allow-origin': '*' },
			contentType: file.endsWith('.css') ? 'text/css' : 'text/javascript',
			body: readFileSync(file),
		});
	});
}

/**
 * The streaming example with credentials on vendor instances chat-openai and chat-anthropic and
 * provider names of its own, created and published over REST; resolves with its chat page's URL
 * once n8n serves it (n8n 2 registers the webhook a moment after publishing).
 */
/** README's streaming example published on vendor instances `<prefix>-openai` and
 * `<prefix>-anthropic`; `version`: the Resilient Chat Model's. Returns its chat page's URL. */
async function publishStreamingChat(n8n, vendors, prefix = 'chat', version) {
	const openAi = { name: `OpenAI (${prefix})` };
	openAi.id = await n8n.credential(openAi.name, 'openAiApi', {
		apiKey: KEYS.openai,
		url: `${vendors.url(`${prefix}-openai`)}/v1`,
	});
	const anthropic = { name: `Anthropic (${prefix})` };
	anthropic.id = await n8n.credential(anthropic.name, 'anthropicApi', {
		apiKey: KEYS.anthropic,
		url: vendors.url(`${prefix}-anthropic`),
	});
	const wf = JSON.parse(
		readFileSync(path.join(ROOT, 'n8n-node/examples/resilient-chat-model-streaming.json'), 'utf8'),
	);
	const node = (name) => wf.nodes.find((n) => n.name === name);
	node('OpenAI Chat Model').credentials.openAiApi = openAi;
	node('Anthropic Chat Model').credentials.anthropicApi = anthropic;
	if (version) node('Resilient Chat Model').typeVersion = version;
	node('Resilient Chat Model').parameters.providers.provider = [
		{ name: `openai-${uid()}` },
		{ name: `anthropic-${uid()}` },
	];
	const webhookId = `chat-${uid()}`;
	node('When chat message received').webhookId = webhookId;
	const { id } = await n8n.rest('POST', '/workflows', {
		name: `${wf.name} (${prefix})`,
		nodes: wf.nodes,
		connections: wf.connections,
		settings: wf.settings,
	});
	await activate(n8n.rest, id);
	const url = `${n8n.base}/webhook/${webhookId}/chat`;
	for (let deadline = Date.now() + 30_000; ; await pause(300)) {
		const r = await fetch(url);
		await r.body?.cancel();
		if (r.status === 200) return url;
		if (Date.now() > deadline) throw new Error(`${url} answers ${r.status} after publishing`);
	}
}

const vendors = await startLlmVendors(KEYS);
vendors.script('openai', [503]);
// The agent's models: a Calculator call, then down (503 without a hint); Anthropic echoes the tool.
vendors.script('agent-openai', [
	{ tool: 'Calculator', args: { input: '17 * 23.5' } },
	{ status: 503 },
]);
vendors.script('agent-anthropic', ['echo_tool']);
// The chat's models: OpenAI down, Anthropic streaming its answer.
vendors.script('chat-openai', [503]);
vendors.script('chat-anthropic', [{ stream: { text: CHAT_ANSWER, gapMs: 150 } }]);
// The continued chat: OpenAI's stream breaks after three deltas, Anthropic goes on from them.
vendors.script('cont-openai', [{ stream: { text: CHAT_ANSWER, gapMs: 150, dropAfter: 3 } }]);
vendors.script('cont-anthropic', [
	{ stream: { continues: true, repeatWords: 2, text: CHAT_ANSWER.slice(3), gapMs: 150 } },
]);
/** The chat page at `url` as a visitor opens it (authentication None), in a tab of its own: the
 * question typed and sent, then the bot's answer as it grows (the widget's typing dots stay below
 * it until the stream ends), every text it showed on the way, until it reads the whole answer. */
async function askChatPage(url) {
	const chat = await browser.newPage();
	chat.setDefaultTimeout(20_000);
	await chat.setViewport({ width: 900, height: 700 });
	await serveWidget(chat);
	await chat.goto(url, { waitUntil: 'networkidle2' });
	const input = await chat.waitForSelector('.chat-inputs textarea', { visible: true });
	await input.type(CHAT_QUESTION);
	await chat.keyboard.press('Enter');
	const whole = CHAT_ANSWER.join('').replace(/\*\*/g, '');
	const seen = new Set();
	for (let deadline = Date.now() + 60_000; ; await pause(40)) {
		const { text, typing } = await chat.evaluate(() => ({
			text: [...document.querySelectorAll('.chat-message-from-bot:not(.chat-message-typing)')]
				.at(-1)
				?.textContent.trim(),
			typing: Boolean(document.querySelector('.chat-message-typing')),
		}));
		if (text) seen.add(text);
		if (text?.includes(whole) && !typing) return { chat, seen, text, whole };
		if (Date.now() > deadline)
			throw new Error(`the chat's answer reads ${JSON.stringify(text)}, not ${whole}`);
	}
}

const n8n = await startEditorN8n();
let browser, page;
try {
	const openAi = await n8n.credential('OpenAI account', 'openAiApi', { apiKey: KEYS.openai });
	const anthropic = await n8n.credential('Anthropic account', 'anthropicApi', {
		apiKey: KEYS.anthropic,
	});
	if (take('streaming-chat') || take('continued-chat')) emojiFont();
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
	if (take('streaming-chat')) {
		chatWidget();
		const url = await publishStreamingChat(n8n, vendors);
		const { chat, seen } = await askChatPage(url);
		page = chat;
		const served = (id) => vendors.arrivals.filter((a) => a.id === id && a.accepted);
		const [oa, an] = [served('chat-openai'), served('chat-anthropic')];
		if (!oa.length || oa.some((a) => a.status !== 503) || an.length !== 1 || an[0].sent < 2)
			throw new Error(
				`expected OpenAI 503 then one Anthropic stream: ${JSON.stringify(
					[...oa, ...an].map(({ id, status, sent }) => ({ id, status, sent })),
				)}`,
			);
		// Its texts on the way: the greeting, then one per delta that reached the page by itself.
		if (seen.size < 3) throw new Error(`the answer did not grow on the page: ${[...seen]}`);
		// The input's blinking caret left out of the picture.
		await chat.evaluate(() => document.activeElement?.blur());
		await pause(800);
		await chat.screenshot({ path: out('chat-streaming.png') });
		console.log(
			`docs/chat-streaming.png (OpenAI 503 ×${oa.length}; Anthropic's answer grew on the page through ${seen.size - 1} texts)`,
		);
	}
	if (take('continued-chat')) {
		chatWidget();
		const url = await publishStreamingChat(n8n, vendors, 'cont', 1.1);
		const { chat, text, whole } = await askChatPage(url);
		page = chat;
		// One answer: nothing the continuing model repeated is shown twice.
		if (text !== whole) throw new Error(`the chat reads ${JSON.stringify(text)}, not ${whole}`);
		const served = (id) => vendors.arrivals.filter((a) => a.id === id && a.accepted);
		const [oa, an] = [served('cont-openai'), served('cont-anthropic')];
		const prefix = CHAT_ANSWER.slice(0, 3).join('');
		if (oa.length !== 1 || oa[0].sent !== 3 || an.length !== 1 || an[0].partial !== prefix)
			throw new Error(
				`expected OpenAI's stream broken after 3 deltas, Anthropic continuing it: ${JSON.stringify(
					[...oa, ...an].map(({ id, status, sent, partial }) => ({ id, status, sent, partial })),
				)}`,
			);
		await chat.evaluate(() => document.activeElement?.blur());
		await pause(800);
		await chat.screenshot({ path: out('chat-continued.png') });
		console.log(
			`docs/chat-continued.png (OpenAI broke after ${oa[0].sent} deltas; Anthropic continued from ${JSON.stringify(an[0].partial)})`,
		);
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
