// The error → outcome mapping on the errors the real clients throw (n8n's own LangChain copies):
// the status and the hint headers the vendor sent, the socket's code, a timeout. Raw as a plain
// client throws them, and wrapped as n8n's chat-model nodes throw them (NodeApiError, `httpCode`
// a string, the client's error under `cause`). The engine decides what each one means.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';
import { n8nInstall, ROOT } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { freePorts } from '../support/ports.mjs';
import { n8nRequire } from './support.mjs';
import { createRequire } from 'node:module';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-o', anthropic: 'sk-a', gemini: 'g' };
let vendors, req, outcomeOf, slow;

before(async () => {
	const install = n8nInstall(major);
	req = n8nRequire(install);
	({ outcomeOfModelError: outcomeOf } = createRequire(import.meta.url)(
		path.join(ROOT, 'dist/lib/chat/outcome.js'),
	));
	vendors = await startLlmVendors(KEYS);
	slow = http.createServer((_q, res) => setTimeout(() => res.end('{}'), 3000).unref());
	await new Promise((r) => slow.listen(0, '127.0.0.1', r));
});
after(async () => {
	await vendors?.close();
	slow?.closeAllConnections?.();
	await new Promise((r) => slow?.close(r));
});

const openai = (baseURL, extra = {}) =>
	new (req('@langchain/openai').ChatOpenAI)({
		apiKey: KEYS.openai,
		model: 'gpt-4o-mini',
		maxRetries: 0,
		configuration: { baseURL },
		...extra,
	});
const anthropic = (id) =>
	new (req('@langchain/anthropic').ChatAnthropic)({
		apiKey: KEYS.anthropic,
		model: 'claude-3-5-haiku-latest',
		maxRetries: 0,
		anthropicApiUrl: vendors.url(id),
	});
const thrown = async (model) => {
	try {
		await model.invoke('hi');
	} catch (e) {
		return e;
	}
	assert.fail('the call succeeded');
};
/** What n8n's failed-attempt handler throws: NodeApiError around the client's error. */
const asN8n = (error) => {
	const { NodeApiError } = req('n8n-workflow');
	const node = {
		id: '1',
		name: 'OpenAI Chat Model',
		type: 'x',
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	return new NodeApiError(node, error, { functionality: 'configuration-node' });
};

test('OpenAI 500: status 500, no hint; the same from n8n’s NodeApiError (httpCode "500")', async () => {
	vendors.script('o500', [500]);
	const raw = await thrown(openai(`${vendors.url('o500')}/v1`));
	assert.equal(raw.status, 500);
	assert.deepEqual(outcomeOf(raw), { kind: 'status', status: 500, headers: {} });
	const wrapped = asN8n(raw);
	assert.equal(wrapped.httpCode, '500');
	assert.deepEqual(outcomeOf(wrapped), { kind: 'status', status: 500, headers: {} });
});

test('OpenAI 429 with Retry-After 7: the header reaches the engine, raw and wrapped', async () => {
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
	const raw = await thrown(openai(`${vendors.url('o429')}/v1`));
	const want = { kind: 'status', status: 429, headers: { 'retry-after': '7' } };
	assert.deepEqual(outcomeOf(raw), want);
	assert.deepEqual(outcomeOf(asN8n(raw)), want);
});

test('Anthropic 503 with Retry-After: status and hint, raw and wrapped', async () => {
	vendors.script('a503', [503]);
	const raw = await thrown(anthropic('a503'));
	const want = { kind: 'status', status: 503, headers: { 'retry-after': '1' } };
	assert.deepEqual(outcomeOf(raw), want);
	assert.deepEqual(outcomeOf(asN8n(raw)), want);
});

test('OpenAI 400 (context too long): status 400', async () => {
	vendors.script('o400', ['too_long']);
	const raw = await thrown(openai(`${vendors.url('o400')}/v1`));
	assert.deepEqual(outcomeOf(asN8n(raw)), { kind: 'status', status: 400, headers: {} });
});

test('connection refused: the socket code under the client error (ECONNREFUSED)', async () => {
	const [port] = await freePorts(1);
	const raw = await thrown(openai(`http://127.0.0.1:${port}/v1`));
	assert.deepEqual(outcomeOf(raw), { kind: 'error', code: 'ECONNREFUSED' });
	assert.deepEqual(outcomeOf(asN8n(raw)), { kind: 'error', code: 'ECONNREFUSED' });
});

test("the client's own timeout: TIMEOUT", async () => {
	const { port } = slow.address();
	const raw = await thrown(openai(`http://127.0.0.1:${port}/v1`, { timeout: 300 }));
	assert.equal(raw.name, 'TimeoutError');
	assert.deepEqual(outcomeOf(raw), { kind: 'error', code: 'TIMEOUT' });
	assert.deepEqual(outcomeOf(asN8n(raw)), { kind: 'error', code: 'TIMEOUT' });
});
