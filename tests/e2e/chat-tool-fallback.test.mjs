// A fall-over across vendors in the middle of an agent's tool round (issue 28): n8n's AI Agent
// with n8n's Calculator over the Resilient Chat Model over two of n8n's own chat model nodes of
// different vendors (Google Gemini Chat Model, Ollama Chat Model), each on its loopback vendor
// (the credential's host / base URL, as in chat-matrix.test.mjs), in real n8n (N8N_MAJOR=2:
// 2.41.1 on Node 24; 1: 1.123.81 on Node 20), the package installed as n8n's community installer
// does. Per pair (Gemini then Ollama, and the reverse): Model 1 answers the agent's first round
// with a Calculator call and its second round (the one carrying the tool's result) with 500; the
// Resilient Chat Model fails over to Model 2, whose request is read at its vendor in its own API's
// format: the user's message, the assistant's tool call and the tool's result. Model 2 answers
// with text that quotes the tool result it was sent, which is the agent's output. Both pairs run
// in ONE workflow, imported once and executed once.
//
// What each vendor is sent is its client's rendering of the agent's messages, the same with or
// without a fail-over: the test holds Model 1's own second request (no fail-over yet) to the same
// expectation as Model 2's. n8n 1's agent gives the assistant's tool-call message the text
// "Calling <tool> with input: <args>" beside its tool_calls, and n8n 1's @langchain/ollama
// (1.0.2: convertAMessagesToOllama returns the text alone when the content is a string) never
// sends an assistant's tool_calls: on n8n 1 an Ollama request carries the call as that text only,
// whether Ollama is Model 2 after a Gemini call or Model 1 after its own (n8n 2's 1.2.6 sends them).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import {
	aiAgent,
	calculatorTool,
	chatWorkflow,
	geminiModel,
	resilientOver,
} from '../support/chat-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run8 = uid();
const KEYS = {
	openai: 'unused',
	anthropic: 'unused',
	gemini: `g-tf-${run8}`,
	ollama: `ol-tf-${run8}`,
};

/** Credential ids: 16 characters, unique per vendor instance. */
const credId = (prefix, id) =>
	`${prefix}${id}`
		.replace(/[^A-Za-z0-9]/g, '')
		.padEnd(16, '0')
		.slice(0, 16);

/** Per vendor: the credential pointed at vendor instance `id` and the model node on it (as in
 * chat-matrix.test.mjs: Gemini's credential Host, Ollama's Base URL with an API key). */
const VENDORS = {
	gemini: {
		dialect: 'gemini',
		cred: (vendors, id) => ({
			id: credId('gm', id),
			name: `gemini ${id}`,
			type: 'googlePalmApi',
			data: { apiKey: KEYS.gemini, host: vendors.url(id) },
		}),
		node: geminiModel,
	},
	ollama: {
		dialect: 'ollama',
		cred: (vendors, id) => ({
			id: credId('ol', id),
			name: `ollama ${id}`,
			type: 'ollamaApi',
			data: { baseUrl: vendors.url(id), apiKey: KEYS.ollama },
		}),
		node: (name, cred, position) => ({
			id: name.replace(/\W/g, ''),
			name,
			type: '@n8n/n8n-nodes-langchain.lmChatOllama',
			typeVersion: 1,
			position,
			parameters: { model: 'llama3.2:latest', options: {} },
			credentials: { ollamaApi: { id: cred.id, name: cred.name } },
		}),
	},
};

/**
 * What a request body holds of the conversation, in each API's own format, in order: the user's
 * message ({ user }), the assistant's text ({ assistant }), its tool calls ({ call: [name, args] })
 * and the tool results ({ result }); a system message is left out.
 */
const CONVERSATION = {
	gemini: (body) =>
		(body?.contents ?? []).flatMap((c) =>
			(c.parts ?? []).flatMap((p) => [
				...(p.text !== undefined ? [{ [c.role === 'model' ? 'assistant' : c.role]: p.text }] : []),
				...(p.functionCall ? [{ call: [p.functionCall.name, p.functionCall.args] }] : []),
				...(p.functionResponse
					? [{ result: p.functionResponse.response?.result ?? p.functionResponse.response }]
					: []),
			]),
		),
	ollama: (body) =>
		(body?.messages ?? []).flatMap((m) => [
			...(m.role !== 'system' && m.content
				? [{ [m.role === 'tool' ? 'result' : m.role]: m.content }]
				: []),
			...(m.tool_calls ?? []).map((t) => ({ call: [t.function?.name, t.function?.arguments] })),
		]),
};
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** A conversation with the tool call's id (n8n's agent puts it in the tool's input) as `<id>`,
 * and the ids it held. */
const normalized = (conversation) => ({
	conversation: JSON.parse(JSON.stringify(conversation).replace(UUID, '<id>')),
	ids: [...new Set(JSON.stringify(conversation).match(UUID) ?? [])],
});
/**
 * The conversation a vendor of `dialect` is sent in the agent's second round, as its client on
 * this n8n renders the agent's messages: the question; on n8n 1 the agent's text for its call;
 * the call (not by n8n 1's @langchain/ollama: see the head of this file); the Calculator's result
 * as n8n's tool wrapper gives it.
 */
const expected = (dialect, pair) => {
	const [, , sum, result] = pair;
	const args = { input: sum, id: '<id>' };
	return [
		{ user: QUESTION(sum) },
		...(major === 1
			? [{ assistant: `Calling ${toolName(pair)} with input: ${JSON.stringify(args)}` }]
			: []),
		...(major === 1 && dialect === 'ollama' ? [] : [{ call: [toolName(pair), args] }]),
		{ result: JSON.stringify([{ response: result }]) },
	];
};

/** The pairs [Model 1, Model 2] run; each with its own question and sum. */
const PAIRS = [
	['gemini', 'ollama', '2+2', '4'],
	['ollama', 'gemini', '3+4', '7'],
];
const label = ([one, two]) => `${one} to ${two}`;
const vid = ([one, two], i) => `${one}To${two[0].toUpperCase()}${two.slice(1)}${i}`;
/** The Calculator node's name, which is the tool's name the model is given (n8n 2 would turn a
 * space into `_`, n8n 1 keeps it: none here). */
const toolName = ([one, two]) => `Calculator_${one}_${two}`;
const QUESTION = (sum) => `What is ${sum}? Use the calculator.`;
let vendors, run, log;
const names = {};

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const creds = [];
	const nodes = [];
	const models = [];
	const roots = [];
	PAIRS.forEach((pair, row) => {
		const [one, two, sum] = pair;
		const y = 500 * row;
		const l = label(pair);
		names[l] = [1, 2].map((i) => `${l.replace(/ /g, '-')}${i}-${run8}`);
		const inputs = [one, two].map((v, k) => {
			const cred = VENDORS[v].cred(vendors, vid(pair, k + 1));
			creds.push(cred);
			return VENDORS[v].node(`${l} model ${k + 1}`, cred, [500 + 200 * k, y + 300]);
		});
		const sub = resilientOver(
			`${l} resilient`,
			{
				numberInputs: 2,
				providers: { provider: names[l].map((name) => ({ name })) },
				breaker: { threshold: 3 },
				retryPolicy: { baseMs: 20, capMs: 50 },
			},
			[600, y + 150],
			`${l} agent`,
			inputs,
		);
		const agent = aiAgent(`${l} agent`, [700, y], major);
		agent.parameters.text = QUESTION(sum);
		agent.continueOnFail = true;
		nodes.push(agent, ...sub.nodes, calculatorTool(toolName(pair), [900, y + 150]));
		models.push(...sub.models, [toolName(pair), `${l} agent`, 0, 'ai_tool']);
		roots.push(`${l} agent`);
		// Model 1: the tool call, then 500 to the round that carries its result.
		vendors.script(vid(pair, 1), [{ tool: toolName(pair), args: { input: sum } }, 500]);
		// Model 2: the tool result it was sent, quoted.
		vendors.script(vid(pair, 2), ['echo_tool']);
	});
	n8n.importCredentials(creds);
	const wf = chatWorkflow(`toolfb${run8}`, { items: 1, roots, nodes, models });
	n8n.importWorkflow(wf);
	const started = Date.now();
	({ run, log } = await n8n.execute(wf.id, { timeoutMs: 180_000 }));
	console.log(`n8n ${major}: ${PAIRS.length} agents, one execution: ${Date.now() - started} ms`);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => vendors?.close());

for (const pair of PAIRS) {
	const [one, two, sum] = pair;
	const l = label(pair);
	const asText = major === 1 && two === 'ollama';
	test(`n8n ${major}: ${one} calls the Calculator (${sum}), then 500; the Resilient Chat Model fails over to ${two}, whose request holds the user's message, the tool call${asText ? " (as the agent's text: n8n 1's ChatOllama sends no tool_calls, as in its own requests)" : ''} and the tool's result, as Model 1 was sent them`, () => {
		const data = run.data.resultData.runData;
		const [m1, m2] = [1, 2].map((i) => vid(pair, i));
		const at = (id) => vendors.arrivals.filter((a) => a.id === id);
		// Model 2's request, and Model 1's own for the same round (its 500, before any fail-over).
		const got = normalized(CONVERSATION[two](at(m2)[0]?.body));
		const own = normalized(CONVERSATION[one](at(m1)[1]?.body));
		const output = data[`${l} agent`]?.[0]?.data?.main?.[0]?.[0]?.json;
		const entries = (data[`${l} resilient`] ?? []).map(
			(t) => t.data?.ai_languageModel?.[0]?.[0]?.json,
		);
		const path = entries.map((e) => e?.attempts?.map((a) => [a.name, a.outcome]));
		console.log(
			`n8n ${major} ${l}: Model 1 (${one}) ${vendors.accepted(m1)} requests ` +
				`(${at(m1)
					.map((a) => a.status)
					.join(', ')}), Model 2 (${two}) ${vendors.accepted(m2)}; ` +
				`Model 2's conversation ${JSON.stringify(got.conversation)}; ` +
				`Model 1's own for that round ${JSON.stringify(own.conversation)}; ` +
				`call id ${got.ids.join(',') || 'none'} (Model 1's ${own.ids.join(',') || 'none'}); ` +
				`agent output ${JSON.stringify(output?.output ?? output)}; attempts ${JSON.stringify(path)}`,
		);
		const sent = at(m2)[0]?.body;
		console.log(
			`n8n ${major} ${l}: Model 2's ${two === 'gemini' ? 'contents' : 'messages'} as sent ` +
				JSON.stringify(sent?.contents ?? sent?.messages),
		);
		assert.ok(
			vendors.arrivals.filter((a) => a.id === m1 || a.id === m2).every((a) => a.accepted),
			'every request carried its credential',
		);
		assert.deepEqual(
			at(m1).map((a) => a.status),
			[200, 500],
			'Model 1: the tool round, then the 500',
		);
		assert.equal(vendors.accepted(m2), 1, 'Model 2: the second round');
		// Two model calls: Model 1 served the tool round; the second moved on at its 500.
		assert.deepEqual(path, [
			[[names[l][0], '200']],
			[
				[names[l][0], '500'],
				[names[l][1], '200'],
			],
		]);
		assert.deepEqual(got.conversation, expected(two, pair), "Model 2's request");
		assert.deepEqual(own.conversation, expected(one, pair), "Model 1's own second request");
		// The same call: its id (in the tool's input) as Model 1 was sent it.
		assert.deepEqual(got.ids, own.ids);
		assert.equal(got.ids.length, 1);
		assert.equal(
			output?.output,
			`${m2} read the tool result: ${JSON.stringify([{ response: pair[3] }])}`,
		);
	});
}
