// A bad request is the request's, not the model's: the chat model's chain does not move on after
// a 400/422 (the next model would get the same bad request), and the call fails with the model's
// own error, never counted against it. A 400 saying the input is too long for the model is the
// one exception the user can choose: with "Try Next Provider When Input Is Too Long" on, a model
// with a larger context takes the call. Outside n8n, the package installed as n8n installs it,
// the connected models the real LangChain clients of the same n8n install.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall } from '../support/n8n.mjs';
import { openAiBadRequest, startLlmVendors } from '../support/llm-vendors.mjs';
import { loadInstalledChatModel, n8nRequire, supplyContext, loopbackOpenAI } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-client', anthropic: 'a-client', gemini: 'g' };
let vendors, loaded, ChatOpenAI, ChatAnthropic;

before(async () => {
	const install = n8nInstall(major);
	loaded = loadInstalledChatModel(install);
	({ ChatOpenAI } = n8nRequire(install)('@langchain/openai'));
	({ ChatAnthropic } = n8nRequire(install)('@langchain/anthropic'));
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

const openai = (id, apiKey = KEYS.openai) => loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey });
const anthropic = (id) =>
	new ChatAnthropic({
		apiKey: KEYS.anthropic,
		model: 'claude-sonnet-4-5-20250929',
		anthropicApiUrl: vendors.url(id),
	});
const chain = async (models, retryPolicy = {}) => {
	const ctx = supplyContext(
		{
			numberInputs: models.length,
			providers: { provider: models.map(([name]) => ({ name })) },
			retryPolicy: { baseMs: 10, capMs: 20, ...retryPolicy },
			stateStore: 'memory',
			stateScope: 'workflow',
		},
		models.map(([name, make]) => make(name)),
	);
	const { response } = await new loaded.ResilientChatModel().supplyData.call(ctx, 0);
	return { model: response, runData: ctx.runData };
};
const failure = (promise) =>
	promise.then(
		(r) => assert.fail(`served: ${JSON.stringify(r.content)}`),
		(e) => e,
	);
const attemptsOf = (entry) => entry.attempts.map((a) => [a.name, a.outcome, a.health]);

test("a 400 from the primary fails the call with the model's own error; the fallback gets no request", async () => {
	vendors.script('b1', [openAiBadRequest()]);
	vendors.script('b2', ['ok']);
	const { model, runData } = await chain([
		['b1', openai],
		['b2', openai],
	]);
	const error = await failure(model.invoke('hi'));
	assert.match(error.message, /Invalid value for 'temperature'/, 'the vendor said why');
	assert.equal(error.status, 400);
	assert.equal(vendors.accepted('b1'), 1, 'not retried');
	assert.equal(vendors.accepted('b2'), 0, 'the fallback gets no request');
	const entry = runData[0].output;
	assert.deepEqual([entry.outcome, entry.reason], ['failed', 'non_retryable']);
	assert.deepEqual(attemptsOf(entry), [['b1', '400', 'neutral']], 'not counted against it');

	// Not counted: the primary is asked again on the next call, and serves.
	vendors.script('b1', ['ok']);
	assert.equal((await model.invoke('hi')).content, 'b1 says hi');
	assert.equal(vendors.accepted('b2'), 0);
});

test('a 422 ends the call the same way', async () => {
	vendors.script('u1', [{ status: 422, body: { error: { message: 'Unprocessable messages' } } }]);
	vendors.script('u2', ['ok']);
	const { model, runData } = await chain([
		['u1', openai],
		['u2', openai],
	]);
	const error = await failure(model.invoke('hi'));
	assert.equal(error.status, 422);
	assert.equal(vendors.accepted('u2'), 0);
	assert.equal(runData[0].output.reason, 'non_retryable');
});

test('a refused key (401) still moves the call on to the next model', async () => {
	const { model, runData } = await chain([
		['k1', (id) => openai(id, 'sk-wrong')],
		['k2', openai],
	]);
	vendors.script('k2', ['ok']);
	assert.equal((await model.invoke('hi')).content, 'k2 says hi');
	assert.deepEqual(attemptsOf(runData[0].output), [
		['k1', '401', 'neutral'],
		['k2', '200', 'success'],
	]);
});

test('context too long (OpenAI, Anthropic wordings): fails context_too_long by default; with the option on, the fallback serves', async () => {
	vendors.script('c1', ['too_long']);
	vendors.script('c2', ['too_long']);
	vendors.script('c3', ['ok']);
	const off = await chain([
		['c1', openai],
		['c3', openai],
	]);
	const error = await failure(off.model.invoke('a very long prompt'));
	assert.match(error.message, /maximum context length/);
	assert.equal(vendors.accepted('c3'), 0, 'option off: the next model gets no request');
	assert.deepEqual(
		[off.runData[0].output.outcome, off.runData[0].output.reason],
		['failed', 'context_too_long'],
	);

	const on = await chain(
		[
			['c1', openai],
			['c2', anthropic],
			['c3', openai],
		],
		{ nextProviderWhenInputTooLong: true },
	);
	assert.equal((await on.model.invoke('a very long prompt')).content, 'c3 says hi');
	const entry = on.runData[0].output;
	assert.deepEqual(attemptsOf(entry), [
		['c1', '400', 'neutral'],
		['c2', '400', 'neutral'],
		['c3', '200', 'success'],
	]);
	assert.deepEqual(
		entry.skipped.map((s) => [s.provider, s.reason]),
		[
			['c1', 'context_too_long'],
			['c2', 'context_too_long'],
		],
	);
	assert.equal(vendors.accepted('c1'), 2, 'one request per call: never retried');
});
