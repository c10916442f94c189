// When every connected model is cooling down, a model call fails at once with an error that
// carries retry_at and the reason (so the root node's own error handling applies), and nothing
// is sent; a Retry-After shorter than the cap moves the call to the next model, and the primary
// serves again once it has passed. Outside n8n, the package installed as n8n installs it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { loadInstalledChatModel, n8nRequire, supplyContext, loopbackOpenAI } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-cool', anthropic: 'a', gemini: 'g' };
let vendors, loaded, ChatOpenAI;

before(async () => {
	const install = n8nInstall(major);
	loaded = loadInstalledChatModel(install);
	({ ChatOpenAI } = n8nRequire(install)('@langchain/openai'));
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

/** When the `n`-th request reached vendor instance `id` (this process's clock). */
const arrivalOf = (id, n) => vendors.arrivals.filter((a) => a.id === id)[n].t;
const openai = (id) => loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey: KEYS.openai });
const chain = async (ids, retryPolicy) => {
	const ctx = supplyContext(
		{
			numberInputs: ids.length,
			providers: { provider: ids.map((name) => ({ name })) },
			retryPolicy: { baseMs: 10, capMs: 20, ...retryPolicy },
			stateStore: 'memory',
			stateScope: 'workflow',
		},
		ids.map(openai),
	);
	const { response } = await new loaded.ResilientChatModel().supplyData.call(ctx, 0);
	return { model: response, runData: ctx.runData };
};

test('every model answers 429 with Retry-After: 3600: the call fails with retry_at; the next one at once, sending nothing', async () => {
	const hour = { status: 429, headers: { 'Retry-After': '3600' } };
	vendors.script('c1', [hour]);
	vendors.script('c2', [hour]);
	const { model, runData } = await chain(['c1', 'c2'], {});
	const first = await model.invoke('hi').then(
		() => assert.fail('served'),
		(e) => e,
	);
	assert.match(first.message, /retry_at \d{4}-\d\d-\d\dT/);
	const retryAt = Date.parse(first.retry_at);
	assert.ok(retryAt > Date.now() + 3000 * 1000, first.retry_at);
	assert.equal(vendors.accepted('c1') + vendors.accepted('c2'), 2);
	const started = Date.now();
	const second = await model.invoke('hi again').then(
		() => assert.fail('served'),
		(e) => e,
	);
	assert.ok(Date.now() - started < 1000, 'failed at once');
	assert.ok(second.reason, 'the reason travels with the error');
	assert.match(second.message, new RegExp(`\\(${second.reason}\\); retry_at`));
	assert.equal(vendors.accepted('c1') + vendors.accepted('c2'), 2, 'nothing sent while cooling');
	assert.deepEqual(
		runData.map((r) => r.output.outcome),
		['deferred', 'deferred'],
	);
});

test('primary 429 with Retry-After: 2 once, then 200: calls in the next 2 s go to the fallback, then the primary serves again', async () => {
	vendors.script('r1', [{ status: 429, headers: { 'Retry-After': '2' } }, 'ok']);
	vendors.script('r2', ['ok']);
	// A hint above the cap closes the provider for everyone and the call moves on (no sleep in place).
	const { model, runData } = await chain(['r1', 'r2'], { retryAfterCapMs: 500 });
	// The window is read from when the 429 left the vendor (T): the engine closed r1 for 2 s from
	// its own later reading of that answer, so a call that ended before T + 2000 was decided while
	// r1 was closed, however slow the machine; one made after the first call's end + 2000 is not.
	const calls = [];
	do {
		const content = (await model.invoke('hi')).content;
		calls.push({ content, endedAt: Date.now() });
		await new Promise((r) => setTimeout(r, 100));
	} while (Date.now() < arrivalOf('r1', 0) + 1500);
	const T = arrivalOf('r1', 0);
	assert.equal(calls[0].content, 'r2 says hi');
	const inWindow = calls.filter((c) => c.endedAt < T + 2000);
	assert.ok(
		inWindow.length >= 1 && inWindow.every((c) => c.content === 'r2 says hi'),
		JSON.stringify(calls),
	);
	assert.equal(
		vendors.arrivals.filter((a) => a.id === 'r1' && a.t < T + 2000).length,
		1,
		'no request to the primary while its Retry-After runs',
	);
	await new Promise((r) => setTimeout(r, Math.max(0, calls[0].endedAt + 2000 + 1 - Date.now())));
	const before = vendors.accepted('r1');
	assert.equal((await model.invoke('hi')).content, 'r1 says hi');
	assert.equal(vendors.accepted('r1'), before + 1);
	assert.ok(
		runData[0].output.attempts[0].retry_after,
		JSON.stringify(runData[0].output.attempts[0]),
	);
});
