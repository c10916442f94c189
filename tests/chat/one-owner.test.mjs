// One owner of retries, outside n8n: a plain LangChain ChatOpenAI left at maxRetries 2 retries on
// its own (3 requests for one call); connected through the Resilient Chat Model it sends exactly
// one request per engine attempt, bound to tools or not. @langchain/core is n8n's copy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { n8nInstall } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { loadInstalledChatModel, n8nRequire, supplyContext, loopbackOpenAI } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-test-openai', anthropic: 'sk-test-anthropic', gemini: 'g' };
let vendors, install, loaded, ChatOpenAI, HumanMessage;

before(async () => {
	install = n8nInstall(major);
	loaded = loadInstalledChatModel(install);
	const req = n8nRequire(install);
	({ ChatOpenAI } = req('@langchain/openai'));
	({ HumanMessage } = req('@langchain/core/messages'));
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

const openai = (id) =>
	loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey: KEYS.openai, maxRetries: 2 });

const PARAMETERS = (primary, backup) => ({
	numberInputs: 2,
	providers: { provider: [{ name: primary }, { name: backup }] },
	// Fail Over First off (the chat model's default is on): the primary keeps its 3 attempts, so
	// each of them is seen to cost exactly one request.
	retryPolicy: { baseMs: 10, capMs: 20, maxAttempts: 3, failOverFirst: false },
	breaker: { threshold: 50 },
	stateStore: 'memory',
	stateScope: 'workflow',
});

test('@langchain/core is the copy of the n8n install, not one installed with the package', () => {
	assert.ok(
		loaded.coreFile.startsWith(path.join(install.dir, 'node_modules', '@langchain', 'core')),
		loaded.coreFile,
	);
});

test('control: the plain ChatOpenAI at maxRetries 2 makes 3 requests for one call at an always-500 server', async () => {
	vendors.script('alone', [500]);
	await assert.rejects(openai('alone').invoke([new HumanMessage('hi')]));
	assert.equal(vendors.accepted('alone'), 3);
});

for (const bound of [false, true]) {
	test(`through the Resilient Chat Model${bound ? ', tools bound' : ''}: one request per engine attempt, then the fallback serves`, async () => {
		const [p, b] = [`p${bound}`, `b${bound}`];
		vendors.script(p, [500]);
		vendors.script(b, ['ok']);
		const ctx = supplyContext(PARAMETERS(p, b), [openai(p), openai(b)]);
		const { response } = await new loaded.ResilientChatModel().supplyData.call(ctx, 0);
		const model = bound ? response.bindTools([]) : response;
		const answer = await model.invoke([new HumanMessage('hi')]);
		assert.equal(answer.content, `${b} says hi`);
		const entry = ctx.runData[0].output;
		const primaryAttempts = entry.attempts.filter((a) => a.name === p);
		console.log(
			`primary: ${vendors.accepted(p)} requests for ${primaryAttempts.length} engine attempts; fallback ${vendors.accepted(b)}`,
		);
		assert.equal(primaryAttempts.length, 3, JSON.stringify(entry.attempts));
		assert.equal(vendors.accepted(p), primaryAttempts.length);
		assert.equal(vendors.accepted(b), 1);
		assert.equal(entry.provider, b);
		assert.equal(entry.outcome, 'success');
	});
}
