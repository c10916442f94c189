// The chat-model matrix (issue 28): n8n's own chat model nodes, each under the Resilient Chat
// Model in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20), the package
// installed as n8n's community installer does. Per model node M, a Basic LLM Chain (batch size
// 1, 5 items) over a Resilient Chat Model (memory store, breaker threshold 3) whose inputs are
// [M on a loopback vendor that always answers 500, M on one that answers ok]: counted at the
// vendor, the dead one gets exactly the threshold (3 requests, then its breaker is open) and the
// live one serves every item. Beside it, per model: a 400 ends the call on that model, the
// fallback gets nothing; a 429 moves the call to the fallback, and with the vendor's own hint
// (Retry-After, Gemini's RetryInfo) keeps Model 1 out for the hint's 30 s. Every
// model's branches run in ONE workflow, imported once and executed once (each `n8n execute`
// boots n8n: seconds of CPU).
//
// Each node is reached through its own credential and client, pointed at loopback the way a user
// could point it: the credential's base URL / host / endpoint field (AWS: Custom Endpoints ->
// Bedrock Runtime Endpoint, n8n 2 only), or (Groq) the client's own environment variable,
// GROQ_BASE_URL, set for the n8n process. Each runs at its newest typeVersion present in both
// majors; a node that exists in one major only runs only there.
//
// Not proven here (the client cannot be pointed at a loopback vendor by anything a user
// configures; faking it would prove nothing):
// - Mistral Cloud Chat Model (lmChatMistralCloud): its credential holds an API key only and the
//   node builds ChatMistralAI without a server URL (no option, and @mistralai/mistralai 1.15 reads
//   no environment variable for it): it always calls https://api.mistral.ai.
// - Cohere Chat Model (lmChatCohere): the node builds its client from the API key alone (the
//   credential's URL is used only to test the credential); cohere-ai reads no URL from the
//   environment.
// - Google Vertex Chat Model (lmChatGoogleVertex): a service account's OAuth token exchange with
//   Google, then the region's aiplatform host; no endpoint field.
// - AWS Bedrock Chat Model on n8n 1: its AWS credential has no Bedrock Runtime Endpoint.
// - Databricks Chat Model (n8n 2): the host must be https (assertHttpsHost) and its auth is
//   OAuth2 against that host.
// - Alibaba Cloud Chat Model (n8n 2): the credential's URL is a hidden field derived from the
//   region.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { openAiBadRequest, startLlmVendors } from '../support/llm-vendors.mjs';
import { chatWorkflow, llmChain, resilientOver } from '../support/chat-workflows.mjs';
import { matrixModels } from '../support/chat-matrix-models.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';
import { closedPort } from '../support/ports.mjs';
import { randomUUID } from 'node:crypto';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run8 = uid();
const KEYS = {
	openai: `sk-mx-${run8}`,
	anthropic: 'unused',
	gemini: `g-mx-${run8}`,
	ollama: `ol-mx-${run8}`,
	azure: `az-mx-${run8}`,
	aws: `AKIAMX${run8.toUpperCase()}`,
};
const THRESHOLD = 3;
const ITEMS = 5;

const MODELS = matrixModels(KEYS, run8);

const here = Object.entries(MODELS).filter(([, m]) => m.majors.includes(major));
const elsewhere = Object.entries(MODELS).filter(([, m]) => !m.majors.includes(major));

/** A 400 as each vendor words one (the request's fault: no model would take it). */
const BAD_REQUEST = {
	openai: openAiBadRequest(),
	gemini: {
		status: 400,
		body: {
			error: {
				code: 400,
				message: 'Invalid value at \'generation_config.temperature\' (TYPE_FLOAT), "hot"',
				status: 'INVALID_ARGUMENT',
			},
		},
	},
	ollama: { status: 400, body: { error: 'invalid options: temperature' } },
	bedrock: {
		status: 400,
		body: { message: 'Malformed input request: #/temperature: 3.0 is not less or equal to 1.0' },
	},
};
BAD_REQUEST.azure = BAD_REQUEST.openai;
/** A 429 with each vendor's own hint of when to come back (30 s): a header, or Gemini's RetryInfo
 * in the body; Ollama's and Bedrock's APIs give none. */
const RATE_LIMITED = {
	openai: {
		status: 429,
		headers: { 'Retry-After': '30' },
		body: {
			error: {
				message: 'Rate limit reached for requests',
				type: 'requests',
				code: 'rate_limit_exceeded',
			},
		},
	},
	azure: {
		status: 429,
		headers: { 'retry-after': '30', 'retry-after-ms': '30000' },
		body: {
			error: {
				code: '429',
				message:
					'Requests to the ChatCompletions_Create Operation have exceeded the call rate limit. Please retry after 30 seconds.',
			},
		},
	},
	gemini: {
		status: 429,
		body: {
			error: {
				code: 429,
				message: 'You exceeded your current quota, please check your plan and billing details.',
				status: 'RESOURCE_EXHAUSTED',
				details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '30s' }],
			},
		},
	},
	ollama: { status: 429, body: { error: 'too many requests' } },
	bedrock: {
		status: 429,
		body: { message: 'Too many requests, please wait before trying again.' },
	},
};
const hinted = (m) => m.dialect !== 'ollama' && m.dialect !== 'bedrock';

/**
 * Per model, three branches, each a chain over its own Resilient Chat Model with two inputs of
 * that node, each input on its own vendor instance: `down` (Model 1 always 500), `bad` (Model 1
 * always 400), `busy` (Model 1 always 429 with the vendor's hint); Model 2 always answers ok.
 */
const SCENARIOS = {
	down: () => [500],
	bad: (m) => [BAD_REQUEST[m.dialect]],
	busy: (m) => [RATE_LIMITED[m.dialect]],
	// Model 1's credential points at a port nothing listens on (its vendor script is never met).
	refused: () => ['ok'],
};
/** The refused scenario needs Model 1's own address: not for a node reached through a
 * process-wide variable (Groq's GROQ_BASE_URL). */
const runs = (m, scenario) => scenario !== 'refused' || !m.byModel;
/** What the engine reads a refused connection as: its code, or FETCH_FAILED through Google's
 * Gemini SDK, which rethrows Node's "fetch failed" with its message alone (the cause is gone). */
const refusedAs = (m) => (m.dialect === 'gemini' ? 'FETCH_FAILED' : 'ECONNREFUSED');
const vid = (key, scenario, i) => `${key}${scenario[0].toUpperCase()}${scenario.slice(1)}${i}`;
/** After every busy chain, one Wait past the hint's 30 s, then per node a chain over the same
 * provider names (Model 1 and 2 on instances of their own that answer ok): Model 1 serves again. */
const HINT_OVER_S = 32;
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
	let row = 0;
	const refused = `http://127.0.0.1:${await closedPort()}`;
	const afterHint = [];
	for (const [key, m] of here)
		for (const [scenario, first] of Object.entries(SCENARIOS)) {
			if (!runs(m, scenario)) continue;
			const y = 400 * row++;
			const label = `${key} ${scenario}`;
			names[label] = [1, 2].map((i) => `${key}-${scenario}${i}-${run8}`);
			const input = (i, instance = scenario, prefix = label) => {
				const id = vid(key, instance, i);
				const cred = {
					// Unique within 16 characters: the row and the input lead, the key pads.
					id: `mx${row}${instance === scenario ? 'x' : 'a'}${i}${key}`
						.replace(/[^A-Za-z0-9]/g, '')
						.padEnd(16, '0')
						.slice(0, 16),
					name: `${prefix} ${i}`,
					...m.cred(
						scenario === 'refused' && i === 1 ? refused : vendors.url(m.byModel ? '_model' : id),
					),
				};
				creds.push(cred);
				return {
					id: `${prefix} ${i}`.replace(/\W/g, ''),
					name: `${prefix} ${i}`,
					type: m.type,
					typeVersion: m.version[major],
					position: [400 + 200 * i, y + 200],
					parameters: m.parameters(id),
					credentials: { [cred.type]: { id: cred.id, name: cred.name } },
				};
			};
			const sub = resilientOver(
				`${label} resilient`,
				{
					numberInputs: 2,
					providers: { provider: names[label].map((name) => ({ name })) },
					breaker: { threshold: THRESHOLD },
					retryPolicy: { baseMs: 50, capMs: 200 },
				},
				[700, y + 100],
				`${label} chain`,
				[input(1), input(2)],
			);
			nodes.push(llmChain(`${label} chain`, [700, y]), ...sub.nodes);
			models.push(...sub.models);
			roots.push(`${label} chain`);
			vendors.script(vid(key, scenario, 1), first(m));
			vendors.script(vid(key, scenario, 2), ['ok']);
			if (scenario === 'busy' && hinted(m)) {
				// The hint over, the same provider names: Model 1 takes the calls again.
				const again = `${label} again`;
				const subAgain = resilientOver(
					`${again} resilient`,
					{
						numberInputs: 2,
						providers: { provider: names[label].map((name) => ({ name })) },
						breaker: { threshold: THRESHOLD },
						retryPolicy: { baseMs: 50, capMs: 200 },
					},
					[1100, y + 100],
					`${again} chain`,
					[input(1, 'again', again), input(2, 'again', again)],
				);
				nodes.push(
					llmChain(`${again} chain`, [1100, y], { text: "={{ $('Split').item.json.q }}" }),
					...subAgain.nodes,
				);
				models.push(...subAgain.models);
				afterHint.push(`${again} chain`);
				vendors.script(vid(key, 'again', 1), ['ok']);
				vendors.script(vid(key, 'again', 2), ['ok']);
			}
		}
	n8n.importCredentials(creds);
	const wf = chatWorkflow(`matrix${run8}`, { items: ITEMS, roots, nodes, models });
	// One Wait for every node's `again` chain, last of Split's branches (n8n's v1 order runs
	// them top to bottom): it starts once every busy chain met its 429.
	wf.nodes.push({
		id: 'hintoverwait',
		name: 'Hint over',
		type: 'n8n-nodes-base.wait',
		typeVersion: 1.1,
		position: [900, -400],
		webhookId: randomUUID(),
		parameters: { resume: 'timeInterval', amount: HINT_OVER_S, unit: 'seconds' },
	});
	wf.connections.Split.main[0].push({ node: 'Hint over', type: 'main', index: 0 });
	wf.connections['Hint over'] = {
		main: [afterHint.map((node) => ({ node, type: 'main', index: 0 }))],
	};
	n8n.importWorkflow(wf);
	const started = Date.now();
	({ run, log } = await n8n.execute(wf.id, {
		env: { GROQ_BASE_URL: vendors.url('_model') },
	}));
	console.log(
		`n8n ${major}: the matrix's execution (${here.length} model nodes, ${roots.length} chains of ${ITEMS} items) took ${Date.now() - started} ms`,
	);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => vendors?.close());

// A node this matrix cannot prove here is a skip that says why (it proves nothing by passing).
for (const [, m] of elsewhere)
	test(`${m.type} on n8n ${major}`, {
		skip: m.elsewhere ?? `not in n8n ${major}, run on n8n ${m.majors.join(', ')} only`,
	});

/** The chain's items, the sub-node's run-data entries (one per model call), and the vendors'. */
const branch = (key, m, scenario) => {
	const label = `${key} ${scenario}`;
	const data = run.data.resultData.runData;
	const [one, two] = [1, 2].map((i) => vid(key, scenario, i));
	const seen = vendors.arrivals.filter((a) => a.id === one || a.id === two);
	assert.ok(
		seen.every((a) => a.dialect === m.dialect && a.accepted),
		`every request in ${m.dialect}, with the credential's key: ${JSON.stringify(seen.map((a) => [a.id, a.dialect, a.accepted]))}`,
	);
	return {
		items: data[`${label} chain`]?.[0]?.data?.main?.[0] ?? [],
		entries: (data[`${label} resilient`] ?? []).map(
			(t) => t.data?.ai_languageModel?.[0]?.[0]?.json,
		),
		raw: JSON.stringify(data[`${label} resilient`]?.[0] ?? null).slice(0, 1500),
		first: vendors.accepted(one),
		second: vendors.accepted(two),
		ok: `${two} says hi`,
		names: names[label],
	};
};
const at = (m) => `n8n ${major} ${m.type}@${m.version[major]}`;
const path = (e) => e?.attempts?.map((a) => [a.name, a.outcome]);

for (const [key, m] of here) {
	test(`${m.type}@${m.version[major]}, Model 1 always 500: it gets ${THRESHOLD} requests (the breaker's threshold), Model 2 serves all ${ITEMS} items`, () => {
		const b = branch(key, m, 'down');
		const served = b.items.filter((i) => i.json.text === b.ok).length;
		console.log(`${at(m)}: dead ${b.first} requests, live ${served}/${ITEMS} served`);
		assert.deepEqual(
			b.items.map((i) => i.json.text ?? i.json.error),
			Array(ITEMS).fill(b.ok),
			b.raw,
		);
		assert.equal(b.first, THRESHOLD, 'the breaker: threshold, then open');
		assert.equal(b.second, ITEMS);
		// The engine read the vendor's status through this node's client and n8n's error.
		assert.deepEqual(path(b.entries[0]), [
			[b.names[0], '500'],
			[b.names[1], '200'],
		]);
	});

	test(`${m.type}@${m.version[major]}, Model 1 always 400: each call ends with its error, Model 2 gets nothing`, () => {
		const b = branch(key, m, 'bad');
		console.log(
			`${at(m)}: 400 ends the call: ${b.items.filter((i) => i.json.error).length}/${ITEMS} failed, ` +
				`Model 1 ${b.first} requests, Model 2 ${b.second}; attempts ${JSON.stringify(path(b.entries[0]))}`,
		);
		assert.equal(b.items.length, ITEMS);
		assert.ok(
			b.items.every((i) => i.json.error && !i.json.text),
			JSON.stringify(b.items[0]?.json),
		);
		assert.equal(b.second, 0, 'the fallback gets no request');
		assert.equal(b.first, ITEMS, 'once per call, not retried, never counted open');
		assert.deepEqual(path(b.entries[0]), [[b.names[0], '400']], b.raw);
	});

	test(`${m.type}@${m.version[major]}, Model 1 always 429${hinted(m) ? " with its vendor's hint (30 s)" : ' (no hint)'}: the call moves to Model 2${hinted(m) ? ', and Model 1 gets no other request while the hint runs' : ''}`, () => {
		const b = branch(key, m, 'busy');
		console.log(
			`${at(m)}: 429 moves on: Model 1 ${b.first} requests, Model 2 served ${b.items.filter((i) => i.json.text === b.ok).length}/${ITEMS}; ` +
				`hint read: ${Boolean(b.entries[0]?.attempts?.[0]?.retry_after)}`,
		);
		assert.deepEqual(
			b.items.map((i) => i.json.text ?? i.json.error),
			Array(ITEMS).fill(b.ok),
			b.raw,
		);
		assert.deepEqual(path(b.entries[0]), [
			[b.names[0], '429'],
			[b.names[1], '200'],
		]);
		assert.equal(b.second, ITEMS);
		if (hinted(m)) {
			assert.ok(b.entries[0].attempts[0].retry_after, 'the hint reached the engine');
			assert.equal(b.first, 1, 'gated for the 30 s of its hint');
			// The hint over, the same provider names: Model 1 serves every call again.
			const again =
				run.data.resultData.runData[`${key} busy again chain`]?.[0]?.data?.main?.[0] ?? [];
			const [one, two] = [1, 2].map((i) => vid(key, 'again', i));
			console.log(
				`${at(m)}: ${HINT_OVER_S} s later, Model 1 served ${again.filter((i) => i.json.text === `${one} says hi`).length}/${ITEMS}`,
			);
			assert.deepEqual(
				again.map((i) => i.json.text ?? i.json.error),
				Array(ITEMS).fill(`${one} says hi`),
			);
			assert.equal(vendors.accepted(two), 0, 'Model 2 is not needed any more');
		} else {
			// No hint: the engine gates Model 1 for its own short backoff, and a 429 is not held
			// against it (neutral, never opens its breaker): how many items find the gate shut is
			// a matter of timing (measured 1 and 3 of 5).
			assert.ok(b.first >= 1 && b.first <= ITEMS);
			assert.ok(
				b.entries.every((e) =>
					e.attempts.every((a) => a.name !== b.names[0] || a.health === 'neutral'),
				),
			);
		}
	});

	test(
		`${m.type}@${m.version[major]}, Model 1's address refuses connections: the engine reads ${refusedAs(m)} through this node's client and Model 2 serves all ${ITEMS} items`,
		{
			skip:
				!runs(m, 'refused') &&
				'its address is a process-wide variable: Model 1 and Model 2 cannot differ',
		},
		() => {
			const b = branch(key, m, 'refused');
			console.log(
				`${at(m)}: refused: Model 2 served ${b.items.filter((i) => i.json.text === b.ok).length}/${ITEMS}; attempts ${JSON.stringify(path(b.entries[0]))}`,
			);
			assert.deepEqual(
				b.items.map((i) => i.json.text ?? i.json.error),
				Array(ITEMS).fill(b.ok),
				b.raw,
			);
			assert.deepEqual(path(b.entries[0]), [
				[b.names[0], refusedAs(m)],
				[b.names[1], '200'],
			]);
			assert.equal(b.second, ITEMS);
		},
	);
}
