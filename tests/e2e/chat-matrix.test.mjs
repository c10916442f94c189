// The chat-model matrix (issue 28): n8n's own chat model nodes, each under the Resilient Chat
// Model in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20), the package
// installed as n8n's community installer does. Per model node M, a Basic LLM Chain (batch size
// 1, 5 items) over a Resilient Chat Model (memory store, breaker threshold 3) whose inputs are
// [M on a loopback vendor that always answers 500, M on one that answers ok]: counted at the
// vendor, the dead one gets exactly the threshold (3 requests, then its breaker is open) and the
// live one serves every item. Beside it, per model: a 400 ends the call on that model, the
// fallback gets nothing; a 429 with the vendor's own hint moves the call to the fallback. Every
// model's branches run in ONE workflow, imported once and executed once (each `n8n execute`
// boots n8n: seconds of CPU).
//
// Each node is reached through its own credential and client, pointed at loopback the way a user
// could point it: the credential's base URL / host / endpoint field, or (Groq) the client's own
// environment variable, GROQ_BASE_URL, set for the n8n process. Each runs at its newest
// typeVersion present in both majors; a node that exists in one major only runs only there.
//
// Not proven here (their client cannot be pointed at a loopback vendor without faking what the
// user configures):
// - Mistral Cloud Chat Model (lmChatMistralCloud): its credential has an API key only and the
//   node builds the client without a server URL (no option, no environment variable in
//   @mistralai/mistralai 1.15): it always calls https://api.mistral.ai.
// - AWS Bedrock Chat Model (lmChatAwsBedrock): SigV4-signed requests to the region's
//   bedrock-runtime host; the credential has no endpoint field.
// - Google Vertex Chat Model (lmChatGoogleVertex): a service account's OAuth token exchange with
//   Google, then the region's aiplatform host; no endpoint field.
// - Cohere, Databricks, Alibaba Cloud, Lemonade: not attempted in this pass (time), not found
//   unreachable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { chatWorkflow, llmChain, resilientOver } from '../support/chat-workflows.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run8 = uid();
const KEYS = {
	openai: `sk-mx-${run8}`,
	anthropic: 'unused',
	gemini: `g-mx-${run8}`,
	ollama: `ol-mx-${run8}`,
	azure: `az-mx-${run8}`,
};
const THRESHOLD = 3;
const ITEMS = 5;

/** An OpenAI-compatible node whose credential has a `url` (its base URL, /v1 included). */
const compatible = (type, credType, model, majors = [1, 2]) => ({
	type: `@n8n/n8n-nodes-langchain.${type}`,
	version: { 1: 1, 2: 1 },
	majors,
	cred: (vendors, id) => ({
		type: credType,
		data: { apiKey: KEYS.openai, url: `${vendors.url(id)}/v1` },
	}),
	parameters: () => ({ model, options: {} }),
	dialect: 'openai',
});

/**
 * The matrix: per model node, its type, version per major, the credential pointed at vendor
 * instance `id` and the node's parameters. `byModel`: the client's base URL is process-wide, so
 * the vendor tells its instances apart by the request's model (the instance's id).
 */
const MODELS = {
	gemini: {
		type: '@n8n/n8n-nodes-langchain.lmChatGoogleGemini',
		// 1.1 and 1.2 exist in n8n 2 only.
		version: { 1: 1, 2: 1 },
		majors: [1, 2],
		cred: (vendors, id) => ({
			type: 'googlePalmApi',
			data: { apiKey: KEYS.gemini, host: vendors.url(id) },
		}),
		parameters: () => ({ modelName: 'models/gemini-2.0-flash', options: {} }),
		dialect: 'gemini',
	},
	ollama: {
		type: '@n8n/n8n-nodes-langchain.lmChatOllama',
		version: { 1: 1, 2: 1 },
		majors: [1, 2],
		cred: (vendors, id) => ({
			type: 'ollamaApi',
			data: { baseUrl: vendors.url(id), apiKey: KEYS.ollama },
		}),
		parameters: () => ({ model: 'llama3.2:latest', options: {} }),
		dialect: 'ollama',
	},
	openRouter: compatible('lmChatOpenRouter', 'openRouterApi', 'openai/gpt-4o-mini'),
	deepSeek: compatible('lmChatDeepSeek', 'deepSeekApi', 'deepseek-chat'),
	xAiGrok: compatible('lmChatXAiGrok', 'xAiApi', 'grok-3-mini'),
	vercelAiGateway: compatible('lmChatVercelAiGateway', 'vercelAiGatewayApi', 'openai/gpt-4o-mini'),
	nvidia: compatible('lmChatNvidia', 'nvidiaApi', 'meta/llama-3.1-8b-instruct', [2]),
	moonshot: compatible('lmChatMoonshot', 'moonshotApi', 'kimi-k2-0711-preview', [2]),
	minimax: compatible('lmChatMinimax', 'minimaxApi', 'MiniMax-M2', [2]),
	groq: {
		type: '@n8n/n8n-nodes-langchain.lmChatGroq',
		version: { 1: 1, 2: 1 },
		majors: [1, 2],
		byModel: true,
		cred: () => ({ type: 'groqApi', data: { apiKey: KEYS.openai } }),
		parameters: (id) => ({ model: id, options: {} }),
		dialect: 'openai',
	},
	azure: {
		type: '@n8n/n8n-nodes-langchain.lmChatAzureOpenAi',
		version: { 1: 1, 2: 1 },
		majors: [1, 2],
		cred: (vendors, id) => ({
			type: 'azureOpenAiApi',
			data: {
				endpointType: 'classic',
				apiKey: KEYS.azure,
				resourceName: 'unused-resource',
				apiVersion: '2025-03-01-preview',
				endpoint: vendors.url(id),
			},
		}),
		parameters: () => ({ authentication: 'azureOpenAiApi', model: 'gpt-4o-mini', options: {} }),
		dialect: 'azure',
	},
};

const here = Object.entries(MODELS).filter(([, m]) => m.majors.includes(major));
const elsewhere = Object.entries(MODELS).filter(([, m]) => !m.majors.includes(major));
let vendors, run, log, names;
const ids = (key) => ({ dead: `${key}Dead`, live: `${key}Live` });

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const creds = [];
	const nodes = [];
	const models = [];
	const roots = [];
	names = {};
	here.forEach(([key, m], row) => {
		const vid = ids(key);
		names[key] = [`${key}-dead-${run8}`, `${key}-live-${run8}`];
		const input = (which, x) => {
			const id = vid[which];
			const cred = {
				// Unique within 16 characters: the row and the input lead, the key pads.
				id: `mx${row}${which[0]}${key}`
					.replace(/[^A-Za-z0-9]/g, '')
					.padEnd(16, '0')
					.slice(0, 16),
				name: `${key} ${which}`,
				...m.cred(vendors, m.byModel ? '_model' : id),
			};
			creds.push(cred);
			const name = `${key} ${which}`;
			return {
				id: name.replace(/\W/g, ''),
				name,
				type: m.type,
				typeVersion: m.version[major],
				position: [x, 400 * row + 200],
				parameters: m.parameters(id),
				credentials: { [cred.type]: { id: cred.id, name: cred.name } },
			};
		};
		const chain = `${key} chain`;
		const sub = resilientOver(
			`${key} resilient`,
			{
				numberInputs: 2,
				providers: { provider: names[key].map((name) => ({ name })) },
				breaker: { threshold: THRESHOLD },
				retryPolicy: { baseMs: 50, capMs: 200 },
			},
			[700, 400 * row + 100],
			chain,
			[input('dead', 600), input('live', 800)],
		);
		nodes.push(llmChain(chain, [700, 400 * row]), ...sub.nodes);
		models.push(...sub.models);
		roots.push(chain);
		vendors.script(vid.dead, [500]);
		vendors.script(vid.live, ['ok']);
	});
	n8n.importCredentials(creds);
	const wf = chatWorkflow(`matrix${run8}`, { items: ITEMS, roots, nodes, models });
	n8n.importWorkflow(wf);
	const started = Date.now();
	({ run, log } = await n8n.execute(wf.id, {
		env: { GROQ_BASE_URL: vendors.url('_model') },
	}));
	console.log(`n8n ${major}: the matrix's execution took ${Date.now() - started} ms`);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => vendors?.close());

for (const [key, m] of elsewhere)
	test(`n8n ${major} has no ${m.type}: run on n8n ${m.majors.join(', ')} only`, () => {
		console.log(
			`n8n ${major} ${m.type}: not in this major, run on n8n ${m.majors.join(', ')} only`,
		);
	});

for (const [key, m] of here)
	test(`${m.type}@${m.version[major]}: the dead model gets ${THRESHOLD} requests, the live one serves all ${ITEMS} items`, () => {
		const { dead, live } = ids(key);
		const items = run.data.resultData.runData[`${key} chain`]?.[0]?.data?.main?.[0] ?? [];
		const served = items.filter((i) => i.json.text === `${live} says hi`).length;
		console.log(
			`n8n ${major} ${m.type}@${m.version[major]}: dead ${vendors.accepted(dead)} requests, live ${served}/${ITEMS} served`,
		);
		const seen = vendors.arrivals.filter((a) => a.id === dead || a.id === live);
		assert.ok(
			seen.every((a) => a.dialect === m.dialect && a.accepted),
			`every request in ${m.dialect}, with the credential's key: ${JSON.stringify(seen.map((a) => [a.id, a.dialect, a.accepted]))}`,
		);
		assert.deepEqual(
			items.map((i) => i.json.text ?? i.json.error),
			Array(ITEMS).fill(`${live} says hi`),
			JSON.stringify(run.data.resultData.runData[`${key} resilient`]?.[0]).slice(0, 1500),
		);
		assert.equal(vendors.accepted(dead), THRESHOLD, 'the breaker: threshold, then open');
		assert.equal(vendors.accepted(live), ITEMS);
	});
