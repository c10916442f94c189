// The error → outcome mapping on the errors the real clients throw (n8n's own LangChain copies):
// the status and the hint headers the vendor sent, the socket's code, a timeout. Raw as a plain
// client throws them, and as n8n's chat-model nodes throw them: their failed-attempt handler
// throws a NodeApiError (`httpCode` a string) around the client's error, which n8n 2 keeps under
// `cause` and n8n 1 loses; the node's takeOver puts it back. The engine decides what each means.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { n8nInstall, ROOT } from '../support/n8n.mjs';
import { geminiQuotaError, startLlmVendors } from '../support/llm-vendors.mjs';
import { freePorts } from '../support/ports.mjs';
import { n8nRequire } from './support.mjs';
import { createRequire } from 'node:module';
import { readAs } from '../node-units/engine-reading.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-o', anthropic: 'sk-a', gemini: 'g' };
let vendors, req, outcomeOf, outcomeWithBodyOf, takeOver, slow;

before(async () => {
	const install = n8nInstall(major);
	req = n8nRequire(install);
	const dist = createRequire(import.meta.url);
	// Judged by what the engine reads the handed-over facts as (its label, and whether a
	// Retry-After set the wait), not by the facts' shape: which fact decides is the engine's.
	const { outcomeOfModelError, errorText } = dist(path.join(ROOT, 'dist/lib/chat/outcome.js'));
	outcomeOf = (e) => {
		const r = readAs(outcomeOfModelError(e));
		return { outcome: r.outcome, retryAfter: r.retryAfter };
	};
	// With the error's text as the answer's body, as the chat model's call hands it over.
	outcomeWithBodyOf = (e) => {
		const r = readAs({ ...outcomeOfModelError(e), body: errorText(e) });
		return { outcome: r.outcome, retryAfter: r.retryAfter };
	};
	({ takeOver } = dist(path.join(ROOT, 'dist/lib/chat/takeOver.js')));
	vendors = await startLlmVendors(KEYS);
	slow = http.createServer((_q, res) => setTimeout(() => res.end('{}'), 3000).unref());
	await new Promise((r) => slow.listen(0, '127.0.0.1', r));
});
after(async () => {
	await vendors?.close();
	slow?.closeAllConnections?.();
	await new Promise((r) => slow?.close(r));
});

const openai = (baseURL, extra = {}, n8n = {}) =>
	new (req('@langchain/openai').ChatOpenAI)({
		apiKey: KEYS.openai,
		model: 'gpt-4o-mini',
		maxRetries: 0,
		configuration: { baseURL },
		...extra,
		...n8n,
	});
const anthropic = (id, n8n = {}) =>
	new (req('@langchain/anthropic').ChatAnthropic)({
		apiKey: KEYS.anthropic,
		model: 'claude-sonnet-4-5-20250929',
		maxRetries: 0,
		anthropicApiUrl: vendors.url(id),
		...n8n,
	});
const thrown = async (model) => {
	try {
		await model.invoke('hi');
	} catch (e) {
		return e;
	}
	assert.fail('the call succeeded');
};
/** The same client as n8n's chat-model nodes build it: its failed-attempt handler throws a
 * NodeApiError around the client's error (n8n's handler, last step); taken over by the node. */
const n8nStyle =
	(make) =>
	(...args) => {
		const { NodeApiError } = req('n8n-workflow');
		const node = {
			id: '1',
			name: 'Chat Model',
			type: 'x',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		};
		return takeOver(
			make(...args, {
				onFailedAttempt: (error) => {
					throw new NodeApiError(node, error, { functionality: 'configuration-node' });
				},
			}),
		);
	};
/** The outcome of one call, thrown by the plain client and by n8n's; both must agree. */
const outcomes = async (make, ...args) => {
	const raw = await thrown(make(...args));
	const wrapped = await thrown(n8nStyle(make)(...args));
	assert.equal(wrapped.constructor.name, 'NodeApiError');
	return [outcomeOf(raw), outcomeOf(wrapped), raw, wrapped];
};

test('OpenAI 500: status 500, no hint (NodeApiError httpCode "500")', async () => {
	vendors.script('o500', [500]);
	const [raw, wrapped, rawError, n8nError] = await outcomes(openai, `${vendors.url('o500')}/v1`);
	assert.equal(rawError.status, 500);
	assert.equal(n8nError.httpCode, '500');
	assert.deepEqual(raw, { outcome: '500', retryAfter: false });
	assert.deepEqual(wrapped, raw);
});

test('OpenAI 429 with Retry-After 7: the header reaches the engine', async () => {
	vendors.script('o429', [
		{
			status: 429,
			headers: {
				'Retry-After': '7',
				'retry-after-ms': '7000',
				'x-ratelimit-remaining-requests': '0',
			},
		},
	]);
	const [raw, wrapped] = await outcomes(openai, `${vendors.url('o429')}/v1`);
	assert.deepEqual(raw, { outcome: '429', retryAfter: true });
	assert.deepEqual(wrapped, raw);
});

test('Anthropic 503 with Retry-After: status and hint', async () => {
	vendors.script('a503', [503]);
	const [raw, wrapped] = await outcomes(anthropic, 'a503');
	assert.deepEqual(raw, { outcome: '503', retryAfter: true });
	assert.deepEqual(wrapped, raw);
});

/** n8n's Gemini chat model's client, from where n8n's LangChain nodes load it (n8n 1 keeps it
 * under @n8n/n8n-nodes-langchain, not hoisted). */
const gemini = (id, n8n = {}) =>
	new (createRequire(
		path.join(n8nInstall(major).dir, 'node_modules/@n8n/n8n-nodes-langchain/package.json'),
	)('@langchain/google-genai').ChatGoogleGenerativeAI)({
		apiKey: KEYS.gemini,
		model: 'gemini-2.0-flash',
		maxRetries: 0,
		baseUrl: vendors.url(id),
		...n8n,
	});

test("Gemini 429: the retryDelay of its RetryInfo, in the client error's text, is the hint", async () => {
	vendors.script('g429', [{ status: 429, body: geminiQuotaError('31s') }]);
	const [raw, wrapped, rawError, n8nError] = await outcomes(gemini, 'g429');
	assert.deepEqual(raw, { outcome: '429', retryAfter: false }, 'no header says when');
	assert.deepEqual(wrapped, raw);
	assert.deepEqual(outcomeWithBodyOf(rawError), { outcome: '429', retryAfter: true });
	assert.deepEqual(outcomeWithBodyOf(n8nError), { outcome: '429', retryAfter: true });
});

test('OpenAI 400 (context too long): status 400', async () => {
	vendors.script('o400', ['too_long']);
	const [raw, wrapped] = await outcomes(openai, `${vendors.url('o400')}/v1`);
	assert.deepEqual(raw, { outcome: '400', retryAfter: false });
	assert.deepEqual(wrapped, raw);
});

test('OpenAI Responses API 400 (context too long): status 400, though @langchain/openai 1.4 throws a ContextOverflowError without one', async () => {
	vendors.script('r400', ['too_long']);
	const [raw, wrapped, rawError] = await outcomes(
		(url, n8n) => openai(url, { useResponsesApi: true }, n8n),
		`${vendors.url('r400')}/v1`,
	);
	console.log(`n8n ${major}: ${rawError.constructor.name}, status ${rawError.status}`);
	assert.equal(vendors.arrivals.at(-1).dialect, 'openaiResponses');
	assert.deepEqual(raw, { outcome: '400', retryAfter: false });
	assert.deepEqual(wrapped, raw);
});

test("n8n's error as n8n serializes it (toJSON, into run data) holds no vendor body: the client's error is kept out of `cause`", async () => {
	vendors.script('oBody', [
		{ status: 500, body: { error: { message: 'x', secret: 'body-canary' } } },
	]);
	const [, wrapped, , n8nError] = await outcomes(openai, `${vendors.url('oBody')}/v1`);
	assert.equal(wrapped.outcome, '500', 'the engine still sees the status');
	assert.ok(!JSON.stringify(n8nError).includes('body-canary'), JSON.stringify(n8nError));
});

test('connection refused: the socket code under the client error (ECONNREFUSED)', async () => {
	const [port] = await freePorts(1);
	const [raw, wrapped] = await outcomes(openai, `http://127.0.0.1:${port}/v1`);
	assert.deepEqual(raw, { outcome: 'ECONNREFUSED', retryAfter: false });
	assert.deepEqual(wrapped, raw);
});

test("the client's own timeout: TIMEOUT", async () => {
	const { port } = slow.address();
	const [raw, wrapped, rawError] = await outcomes(openai, `http://127.0.0.1:${port}/v1`, {
		timeout: 300,
	});
	assert.equal(rawError.name, 'TimeoutError');
	assert.deepEqual(raw, { outcome: 'TIMEOUT', retryAfter: false });
	assert.deepEqual(wrapped, raw);
});
