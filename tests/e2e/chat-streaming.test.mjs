// Chats that stream, in real n8n (N8N_MAJOR=2: 2.41.1; 1: 1.123.81) on `n8n start`, the package
// installed as n8n's community installer does: a Webhook (both majors) or a Chat Trigger (n8n 2)
// in Streaming mode -> n8n's AI Agent (Enable Streaming on, its default) with Simple Memory -> the
// Resilient Chat Model over n8n's OpenAI and Anthropic Chat Models on loopback vendors that
// stream as the real APIs do and count every request. The tests POST to the workflow's URL and
// read its NDJSON stream as it arrives (no browser).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, ROOT, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	anthropicCredential,
	anthropicModel,
	openAiCredential,
	openAiModel,
	resilientChatModel,
} from '../support/chat-workflows.mjs';
import { node } from '../support/workflow-parts.mjs';
import { items, postStreaming, startPublished, streamingAgent } from '../support/chat-stream.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = {
	openai: `sk-stream-${uid()}`,
	anthropic: `sk-ant-stream-${uid()}`,
	gemini: 'unused',
};
const LC = '@n8n/n8n-nodes-langchain';
const EXAMPLE = path.join(ROOT, 'n8n-node/examples/resilient-chat-model-streaming.json');
let vendors, server, base;
const cred = {};
const flows = {};

/** Webhook (Streaming) -> AI Agent + Simple Memory -> `model`
 * (a Resilient Chat Model over `inputs`, or one plain chat model), optionally a Calculator. */
function chatFlow(key, { inputs, plain, chat = {}, tool = false }) {
	const id = `s${key.slice(0, 5)}${uid()}`;
	const path = `s-${key}-${uid()}`;
	const { start, agent } = streamingAgent(path, major);
	const memory = node('Memory', `${LC}.memoryBufferWindow`, 1.3, 300, {
		sessionIdType: 'customKey',
		sessionKey: '={{ $json.body.session }}',
	});
	const nodes = [start, agent, memory];
	const connections = {
		[start.name]: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
		Memory: { ai_memory: [[{ node: 'Agent', type: 'ai_memory', index: 0 }]] },
	};
	const names = [];
	if (plain) {
		nodes.push(plain);
		connections[plain.name] = {
			ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
		};
	} else {
		inputs.forEach((m) => names.push(`${m.name}-${uid()}`));
		nodes.push(
			resilientChatModel(
				'Resilient Chat Model',
				{
					numberInputs: inputs.length,
					providers: { provider: names.map((name) => ({ name })) },
					breaker: { threshold: 3 },
					retryPolicy: { baseMs: 50, capMs: 200, ...chat },
				},
				[300, 200],
			),
			...inputs,
		);
		connections['Resilient Chat Model'] = {
			ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
		};
		inputs.forEach((m, i) => {
			connections[m.name] = {
				ai_languageModel: [[{ node: 'Resilient Chat Model', type: 'ai_languageModel', index: i }]],
			};
		});
	}
	if (tool) {
		nodes.push(node('Calculator', `${LC}.toolCalculator`, 1, 600, {}));
		connections.Calculator = { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] };
	}
	const wf = {
		id,
		name: id,
		active: false,
		settings: { executionOrder: 'v1' },
		nodes,
		connections,
	};
	return { wf, path, isChat: false, names };
}

/** README's streaming example as a user has it after picking credentials: OpenAI first, then
 * Anthropic, on the vendors `exOpenai` and `exClaude`. */
function exampleFlow() {
	const wf = JSON.parse(readFileSync(EXAMPLE, 'utf8'));
	wf.id = `sex${uid()}`;
	const n = (name) => wf.nodes.find((x) => x.name === name);
	n('OpenAI Chat Model').credentials.openAiApi = { id: cred.exOpenai.id, name: cred.exOpenai.name };
	n('Anthropic Chat Model').credentials.anthropicApi = {
		id: cred.exClaude.id,
		name: cred.exClaude.name,
	};
	n('Resilient Chat Model').parameters.providers.provider = [
		{ name: `openai-${uid()}` },
		{ name: `anthropic-${uid()}` },
	];
	n('When chat message received').webhookId = `chat-${uid()}`;
	return { wf, isChat: true };
}

const HELD_SCHEMA = {
	type: 'object',
	required: ['title', 'words'],
	properties: { title: { type: 'string' }, words: { type: 'integer' } },
};

const openai = (id, name = id) => openAiModel(name, cred[id], [0, 0]);
const claude = (id, name = id) => anthropicModel(name, cred[id], [0, 0]);

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	for (const id of [
		'exOpenai',
		'leak',
		'leakDrop',
		'down',
		'up',
		'ctl',
		'stall',
		'fast',
		'long',
		'drop',
		'spare',
		'tdown',
		'heldBad',
		'heldGood',
		'refuses',
		'helps',
	])
		cred[id] = openAiCredential(vendors, id, KEYS.openai);
	for (const id of ['exClaude', 'tool', 'toolCtl', 'dropSpare'])
		cred[id] = anthropicCredential(vendors, id, KEYS.anthropic);
	n8n.importCredentials(Object.values(cred));
	flows.failover = chatFlow('failover', { inputs: [openai('down'), openai('up')] });
	flows.control = chatFlow('control', { plain: openai('ctl') });
	flows.tool = chatFlow('tool', { inputs: [openai('tdown'), claude('tool')], tool: true });
	flows.toolCtl = chatFlow('toolctl', { plain: claude('toolCtl'), tool: true });
	flows.stall = chatFlow('stall', {
		inputs: [openai('stall'), openai('fast')],
		chat: { deadlineMs: 30000, firstChunkDeadlineMs: 1000 },
	});
	// The long healthy stream runs on the defaults (no retry policy of its own).
	flows.long = chatFlow('long', { inputs: [openai('long'), openai('spare')] });
	flows.long.wf.nodes.find((n) => n.name === 'Resilient Chat Model').parameters.retryPolicy = {};
	flows.leak = chatFlow('leak', { inputs: [openai('leak'), openai('leakDrop')] });
	flows.drop = chatFlow('drop', { inputs: [openai('drop'), claude('dropSpare')] });
	flows.example = exampleFlow();
	// Answer Check with a JSON Schema (chat model 1.1): the stream is held until it passes.
	flows.held = chatFlow('held', { inputs: [openai('heldBad'), openai('heldGood')] });
	Object.assign(
		flows.held.wf.nodes.find((n) => n.name === 'Resilient Chat Model'),
		{
			typeVersion: 1.1,
		},
	).parameters.answerCheck = { jsonSchema: JSON.stringify(HELD_SCHEMA) };
	// Answer Check at its 1.1 defaults: a refusal streamed over Chat Completions moves on.
	flows.refusal = chatFlow('refusal', { inputs: [openai('refuses'), openai('helps')] });
	flows.refusal.wf.nodes.find((n) => n.name === 'Resilient Chat Model').typeVersion = 1.1;
	({ server, base } = await startPublished(n8n, major, Object.values(flows), url));
});
after(async () => {
	await server?.stop();
	await vendors?.close();
});

const url = (f, b = base) =>
	f.isChat ? `${b}/webhook/${f.wf.nodes[0].webhookId}/chat` : `${b}/webhook/${f.path}`;
const streamed = [];
const ask = (f, q, session, opts) =>
	postStreaming(
		url(f),
		f.isChat ? { action: 'sendMessage', sessionId: session, chatInput: q } : { q, session },
		opts,
	).then((r) => (streamed.push(...r.lines), r));
const at = (id) => vendors.accepted(id);
const requestsTo = (id) => vendors.arrivals.filter((a) => a.id === id && a.accepted);
const show = (r) => JSON.stringify(r.lines.map(({ at, ...l }) => l)).slice(0, 1500);

test("Webhook (Streaming) -> AI Agent -> Resilient Chat Model, Model 1 answers 503: the reply is Model 2's deltas one for one, as the same agent streams on Model 2 alone; the next turn sees it in memory", async () => {
	const text = ['Paris ', 'is the ', 'capital.'];
	vendors.script('down', [503]);
	vendors.script('up', [
		{ stream: { text, holdLast: true } },
		{ stream: { text: ['You asked ', 'about Paris.'] } },
	]);
	vendors.script('ctl', [{ stream: { text, holdLast: true } }]);
	const session = `s${uid()}`;
	// The vendor holds its last delta until the test has read the first item line: a wrapper that
	// buffered the answer would hang here.
	const release = (id) => async (line) => line.type === 'item' && vendors.release(id);
	const ours = await ask(flows.failover, 'What is the capital of France?', session, {
		onLine: release('up'),
	});
	const theirs = await ask(flows.control, 'What is the capital of France?', session, {
		onLine: release('ctl'),
	});
	console.log(`n8n ${major}: streamed ${show(ours)}`);
	assert.deepEqual(items(ours.lines), text, show(ours));
	assert.deepEqual(
		items(ours.lines),
		items(theirs.lines),
		'the same as the agent on Model 2 alone',
	);
	assert.ok(at('down') >= 1);
	assert.equal(at('up'), 1);
	assert.equal(requestsTo('up')[0].body.stream, true, 'Model 2 was asked to stream');

	const next = await ask(flows.failover, 'What did I ask?', session);
	assert.deepEqual(items(next.lines), ['You asked ', 'about Paris.'], show(next));
	const history = JSON.stringify(requestsTo('up')[1].body.messages);
	assert.match(history, /Paris is the capital\./, 'turn 1 is in the memory the agent sends');
});

test('a tool call streamed by Model 2 (Anthropic): the Calculator runs once, the answer streams as on Model 2 alone', async () => {
	const script = [
		{ stream: { tool: { name: 'Calculator', args: { input: '6*7' } } } },
		{ stream: { text: ['It is ', '42.'] } },
	];
	vendors.script('tdown', [503]);
	vendors.script('tool', script);
	vendors.script('toolCtl', script);
	const r = await ask(flows.tool, 'What is 6 times 7? Use the calculator.', `t${uid()}`);
	const ctl = await ask(flows.toolCtl, 'What is 6 times 7? Use the calculator.', `t${uid()}`);
	// n8n's agent writes an item for every chunk with content, "" for each of Anthropic's
	// content-block chunks of a tool call; the preamble (message_start, the block's start) does
	// not reach it through this node, so it writes fewer of those than on Anthropic alone.
	const text = (lines) => items(lines).filter((t) => t !== '');
	assert.deepEqual(text(r.lines), ['It is ', '42.'], show(r));
	assert.deepEqual(text(r.lines), text(ctl.lines), 'the same text as on Anthropic alone');
	assert.ok(items(r.lines).length <= items(ctl.lines).length, show(ctl));
	assert.equal(at('tool'), 2, 'one call for the tool call, one for the answer');
	const second = JSON.stringify(requestsTo('tool')[1].body.messages);
	const alone = JSON.stringify(requestsTo('toolCtl')[1].body.messages).replaceAll(
		'toolCtl',
		'tool',
	);
	assert.equal(second, alone, 'the second call carries what it carries on Anthropic alone');
	assert.equal((second.match(/"tool_result"/g) ?? []).length, 1, 'the tool ran once');
	assert.match(second, /42/, 'its result went back to the model');
});

test("first-chunk deadline 1 s (per-attempt 30 s), Model 1 stalls after its headers: Model 2 answers within 1 s + 300 ms, Model 1's socket closed within 300 ms of the deadline", async () => {
	vendors.script('stall', [{ stream: { stallAfterHeaders: 'preamble' } }]);
	vendors.script('fast', [{ stream: { text: ['quick ', 'answer'] } }]);
	const sent = Date.now();
	const r = await ask(flows.stall, 'hello', `d${uid()}`);
	const first = r.lines.find((l) => l.type === 'item');
	assert.deepEqual(items(r.lines), ['quick ', 'answer'], show(r));
	console.log(
		`n8n ${major}: first chunk after ${first.at} ms; Model 1 closed after ${requestsTo('stall')[0].closedAt - sent} ms`,
	);
	const m1 = requestsTo('stall')[0];
	const m1Sent = m1.t - sent;
	assert.ok(
		first.at < m1Sent + 1000 + 300,
		`first item at ${first.at} ms (Model 1 asked at ${m1Sent} ms)`,
	);
	assert.equal(m1.clientClosed, true);
	assert.ok(
		m1.closedAt - m1.t < 1000 + 300,
		`Model 1 closed ${m1.closedAt - m1.t} ms after its request`,
	);
	assert.equal(at('stall'), 1, 'cut off once, not retried while Model 2 could answer');
});

test(
	'a healthy stream of 25 s at one chunk a second completes on the defaults',
	{ timeout: 90_000 },
	async () => {
		const text = Array.from({ length: 25 }, (_, i) => `w${i} `);
		vendors.script('long', [{ stream: { text, gapMs: 1000 } }]);
		const r = await ask(flows.long, 'tell me a long story', `l${uid()}`);
		assert.deepEqual(items(r.lines), text, show(r));
		assert.ok(r.ms >= 24_000, `${r.ms} ms`);
		assert.equal(at('spare'), 0);
	},
);

test('Model 1 sends two chunks and drops the connection: the caller has both and the error, Model 2 nothing, the memory no fragment; the next turn is answered', async () => {
	vendors.script('drop', [
		{ stream: { text: ['half ', 'an ', 'answer'], dropAfter: 2 } },
		{ stream: { text: ['whole ', 'answer'] } },
	]);
	vendors.script('dropSpare', ['ok']);
	const session = `x${uid()}`;
	const r = await ask(flows.drop, 'first question', session);
	console.log(`n8n ${major}: broken stream ${show(r)}`);
	assert.deepEqual(items(r.lines), ['half ', 'an '], show(r));
	assert.ok(r.lines.some((l) => l.type === 'error') || r.lines.at(-1).type === 'end', show(r));
	assert.equal(at('dropSpare'), 0, 'no other model continues a partial answer');
	assert.equal(at('drop'), 1);
	const next = await ask(flows.drop, 'second question', session);
	assert.deepEqual(items(next.lines), ['whole ', 'answer'], show(next));
	const history = JSON.stringify(requestsTo('drop')[1].body.messages);
	assert.doesNotMatch(history, /half an/, 'no fragment of the broken answer in memory');
});

test("README's streaming example (a public Chat Trigger in Streaming mode), OpenAI answers 503: the chat streams Anthropic's answer; the next message sees it in memory", async () => {
	vendors.script('exOpenai', [503]);
	vendors.script('exClaude', [
		{ stream: { text: ['Hello ', 'from ', 'Claude'] } },
		{ stream: { text: ['Still ', 'here'] } },
	]);
	const session = `c${uid()}`;
	const r = await ask(flows.example, 'hi', session);
	assert.deepEqual(items(r.lines), ['Hello ', 'from ', 'Claude'], show(r));
	assert.ok(at('exOpenai') >= 1);
	const next = await ask(flows.example, 'still there?', session);
	assert.deepEqual(items(next.lines), ['Still ', 'here'], show(next));
	const history = JSON.stringify(requestsTo('exClaude')[1].body.messages);
	assert.match(history, /Hello from Claude/, 'the first answer is in the chat memory');
});

test("Model 1 reflects the API key in its 503, Model 2 breaks mid-stream: the key is in no streamed line and not in n8n's log", async () => {
	vendors.script('leak', [{ reflect: 503 }]);
	vendors.script('leakDrop', [{ stream: { text: ['a ', 'b'], dropAfter: 1 } }]);
	const r = await ask(flows.leak, 'hello', `k${uid()}`);
	assert.deepEqual(items(r.lines), ['a '], show(r));
	assert.ok(
		vendors.arrivals.some((a) => a.id === 'leak' && a.accepted),
		'the key was sent',
	);
	for (const line of streamed) assert.doesNotMatch(JSON.stringify(line), new RegExp(KEYS.openai));
	assert.doesNotMatch(server.log(), new RegExp(KEYS.openai), "n8n's log");
});

test('Answer Check with a JSON Schema: Model 1 streams text that is not JSON, held and never shown; Model 2 streams valid JSON, delivered delta for delta once it passed', async () => {
	const good = ['{"title": "A good', ' brief", ', '"words": 3}'];
	vendors.script('heldBad', [{ stream: { text: ['Not ', 'JSON ', 'at all.'] } }]);
	vendors.script('heldGood', [{ stream: { text: good } }]);
	const r = await ask(flows.held, 'Write a brief as JSON.', `s${uid()}`);
	console.log(`n8n ${major}: held stream ${show(r)}`);
	assert.deepEqual(items(r.lines), good, show(r));
	assert.ok(!JSON.stringify(r.lines).includes('Not '), "Model 1's text reached no one");
	assert.equal(at('heldBad'), 1);
	assert.equal(at('heldGood'), 1);
});

test("a model streaming a refusal over Chat Completions (`delta.refusal`, content null) is never counted: asked on every message past its threshold, the next model's answer streamed, the refusal shown to no one", async () => {
	const refusal = ["I'm sorry, ", "but I can't ", 'help with that.'];
	vendors.script('refuses', [{ stream: { refusal } }]);
	vendors.script('helps', [{ stream: { text: ['Happy ', 'to help.'] } }]);
	const MESSAGES = 4;
	for (let k = 0; k < MESSAGES; k++) {
		const r = await ask(flows.refusal, 'Tell me a secret.', `s${uid()}`);
		assert.deepEqual(items(r.lines), ['Happy ', 'to help.'], show(r));
		assert.ok(!JSON.stringify(r.lines).includes('sorry'), 'the refusal reached no one');
	}
	// Its breaker's threshold is 3: a refusal counted as a failure would have opened it.
	assert.equal(at('refuses'), MESSAGES);
	assert.ok(requestsTo('refuses').every((a) => a.body.stream === true));
	assert.equal(at('helps'), MESSAGES);
});
