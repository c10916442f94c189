// The Resilient Chat Model streams: a root node that streams (LangChain's stream events, as n8n's
// AI Agent reads them) gets the serving model's chunks as they arrive; a failure before the
// first committing chunk moves the call on; one after it ends the call with that model's error
// (version 1), or (1.1, On a Broken Stream: Continue) is finished by the next model: one answer.
// Outside n8n, the package installed as n8n installs it, real LangChain clients, loopback vendors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { loadInstalledChatModel, n8nRequire, supplyContext, loopbackOpenAI } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-stream', anthropic: 'sk-ant-stream', gemini: 'g' };
let vendors, loaded, ChatOpenAI, ChatAnthropic, prompts;

before(async () => {
	const install = n8nInstall(major);
	loaded = loadInstalledChatModel(install);
	const req = n8nRequire(install);
	({ ChatOpenAI } = req('@langchain/openai'));
	({ ChatAnthropic } = req('@langchain/anthropic'));
	prompts = req('@langchain/core/prompts');
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

const models = {
	openai: (id) => loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey: KEYS.openai, maxRetries: 0 }),
	responses: (id) =>
		loopbackOpenAI(ChatOpenAI, vendors, id, {
			apiKey: KEYS.openai,
			maxRetries: 0,
			useResponsesApi: true,
		}),
	anthropic: (id) =>
		new ChatAnthropic({
			apiKey: KEYS.anthropic,
			model: 'claude-sonnet-4-5',
			maxRetries: 0,
			anthropicApiUrl: vendors.url(id),
		}),
};

let chains = 0;
/** A Resilient Chat Model over `list` ([dialect, vendor id] pairs), memory store, own scope. */
async function resilient(list, retryPolicy = {}, typeVersion = 1, extra = {}) {
	const ctx = supplyContext(
		{
			numberInputs: list.length,
			providers: { provider: list.map(([, id]) => ({ name: `${id}-${++chains}` })) },
			retryPolicy: { baseMs: 10, capMs: 20, ...retryPolicy },
			stateStore: 'memory',
			stateScope: 'workflow',
			...extra,
		},
		list.map(([dialect, id]) => models[dialect](id)),
		typeVersion,
	);
	const { response } = await new loaded.ResilientChatModel().supplyData.call(ctx, 0);
	return { model: response, runData: ctx.runData };
}

/** What a streaming root node sees: the on_chat_model_stream events of prompt → model. */
async function streamEvents(model, onFirst) {
	const chain = prompts.ChatPromptTemplate.fromMessages([['human', '{q}']]).pipe(model);
	const texts = [];
	const ends = [];
	let error;
	try {
		for await (const e of chain.streamEvents({ q: 'hi' }, { version: 'v2' })) {
			if (e.event === 'on_chat_model_stream') {
				texts.push(e.data.chunk.text ?? '');
				if (texts.length === 1) await onFirst?.();
			}
			if (e.event === 'on_chat_model_end') ends.push(e.data.output);
		}
	} catch (e) {
		error = e;
	}
	return { texts, ends, error };
}

for (const dialect of ['openai', 'responses', 'anthropic']) {
	test(`${dialect}: Model 1 answers 503, Model 2's deltas arrive one for one, the last held until the first was read`, async () => {
		const [m1, m2] = [`${dialect}-down`, `${dialect}-up`];
		vendors.script(m1, [503]);
		vendors.script(m2, [{ stream: { text: ['Hel', 'lo ', 'there'], holdLast: true } }]);
		const { model, runData } = await resilient([
			[dialect, m1],
			[dialect, m2],
		]);
		const { texts, ends, error } = await streamEvents(model, () => vendors.release(m2));
		assert.equal(error, undefined, String(error?.stack));
		assert.deepEqual(
			texts.filter((t) => t !== ''),
			['Hel', 'lo ', 'there'],
		);
		// The preamble (role-only delta, response.created, message_start) rides on the first delta;
		// the chunks after the last one (finish reason, usage) carry no text.
		assert.equal(texts[0], 'Hel', 'no content-less chunk before the first delta');
		assert.equal(ends.length, 1, 'one on_chat_model_end');
		assert.equal(vendors.accepted(m2), 1);
		assert.equal(runData.at(-1).output.provider.startsWith(m2), true, JSON.stringify(runData));
		const m2Arrival = vendors.arrivals.find((a) => a.id === m2);
		assert.equal(m2Arrival.streamed, true, 'Model 2 was asked to stream');
	});

	test(`${dialect}: a streamed tool call reaches the caller as one tool call`, async () => {
		const id = `${dialect}-tool`;
		vendors.script(id, [{ stream: { tool: { name: 'calculator', args: { input: '6*7' } } } }]);
		const { model } = await resilient([
			[dialect, id],
			[dialect, `${dialect}-spare`],
		]);
		const bound = model.bindTools([
			{
				type: 'function',
				function: {
					name: 'calculator',
					description: 'math',
					parameters: { type: 'object', properties: { input: { type: 'string' } } },
				},
			},
		]);
		const { ends, error } = await streamEvents(bound);
		assert.equal(error, undefined, String(error?.stack));
		assert.equal(ends.length, 1);
		const calls = ends[0].tool_calls;
		assert.equal(calls.length, 1, JSON.stringify(ends[0]));
		assert.deepEqual([calls[0].name, calls[0].args], ['calculator', { input: '6*7' }]);
		assert.equal(vendors.accepted(`${dialect}-spare`), 0);
	});
}

test('Model 1 sends two chunks and drops the connection: the caller has both and the error, Model 2 none', async () => {
	vendors.script('drop-1', [{ stream: { text: ['one ', 'two ', 'three'], dropAfter: 2 } }]);
	vendors.script('drop-2', ['ok']);
	const { model, runData } = await resilient([
		['openai', 'drop-1'],
		['openai', 'drop-2'],
	]);
	const { texts, error } = await streamEvents(model);
	assert.deepEqual(texts, ['one ', 'two ']);
	assert.ok(error, 'the model error reached the caller');
	assert.equal(vendors.accepted('drop-2'), 0, 'no other model continues a partial answer');
	assert.equal(vendors.accepted('drop-1'), 1, 'counted once');
	const entry = runData.at(-1).output;
	assert.equal(entry.outcome, 'failed');
	assert.equal(entry.reason, 'stream_broken');
	assert.equal(entry.attempts.length, 1);
	assert.match(entry.attempts[0].outcome, /^stream_broken:/);
});

test('first-chunk deadline 300 ms, Model 1 stalls after its headers: cut off, its socket closed, Model 2 streams', async () => {
	vendors.script('stall-1', [{ stream: { stallAfterHeaders: 'preamble' } }]);
	vendors.script('stall-2', [{ stream: { text: ['fast'] } }]);
	const { model, runData } = await resilient(
		[
			['openai', 'stall-1'],
			['openai', 'stall-2'],
		],
		{ deadlineMs: 30000, firstChunkDeadlineMs: 300, failOverFirst: true },
	);
	const started = Date.now();
	let firstAt;
	const { texts, error } = await streamEvents(model, () => (firstAt = Date.now()));
	assert.equal(error, undefined, String(error?.stack));
	assert.deepEqual(
		texts.filter((t) => t !== ''),
		['fast'],
	);
	assert.ok(firstAt - started < 300 + 600, `first chunk after ${firstAt - started} ms`);
	const stalled = vendors.arrivals.find((a) => a.id === 'stall-1');
	assert.equal(stalled.clientClosed, true);
	assert.ok(
		stalled.closedAt - started < 300 + 300,
		`closed after ${stalled.closedAt - started} ms`,
	);
	assert.equal(runData.at(-1).output.attempts[0].outcome, 'TIMEOUT');
});

test('a first-chunk deadline not below the per-attempt deadline is refused, naming the field', async () => {
	await assert.rejects(
		resilient(
			[
				['openai', 'x-1'],
				['openai', 'x-2'],
			],
			{ deadlineMs: 1000, firstChunkDeadlineMs: 1000 },
		),
		/First-Chunk Deadline|first_chunk_deadline_ms/,
	);
});

test('a caller that does not stream is answered as before, and the models are not asked to stream', async () => {
	vendors.script('plain-1', [500]);
	vendors.script('plain-2', ['ok']);
	const { model } = await resilient([
		['openai', 'plain-1'],
		['openai', 'plain-2'],
	]);
	const answer = await model.invoke('hi');
	assert.equal(answer.content, 'plain-2 says hi');
	assert.equal(
		vendors.arrivals.filter((a) => a.id.startsWith('plain-')).some((a) => a.streamed),
		false,
	);
});

for (const [from, to, how] of [
	['openai', 'anthropic', { repeatWords: 2 }],
	['openai', 'openai', { restart: true }],
	['anthropic', 'openai', {}],
]) {
	test(`1.1: ${from} drops after two chunks, ${to} continues (${JSON.stringify(how)}): one answer, no error, no repeat at the seam`, async () => {
		const [m1, m2] = [`cont-${from}-${to}-1`, `cont-${from}-${to}-2`];
		vendors.script(m1, [{ stream: { text: ['The quick ', 'brown fox '], dropAfter: 2 } }]);
		vendors.script(m2, [
			{ stream: { continues: true, text: ['jumps over ', 'the lazy dog.'], ...how } },
		]);
		const { model, runData } = await resilient(
			[
				[from, m1],
				[to, m2],
			],
			{},
			1.1,
		);
		const { texts, ends, error } = await streamEvents(model);
		assert.equal(error, undefined, String(error?.stack));
		assert.equal(texts.join(''), 'The quick brown fox jumps over the lazy dog.');
		assert.equal(ends.length, 1);
		const asked = vendors.arrivals.find((a) => a.id === m2);
		// Anthropic continues its prefix (no trailing space); any other reads the instruction.
		assert.equal(
			asked.partial,
			to === 'anthropic' ? 'The quick brown fox' : 'The quick brown fox ',
		);
		const entry = runData.at(-1).output;
		assert.equal(entry.outcome, 'success');
		assert.deepEqual(entry.continued, [{ model: entry.provider, after_chars: 20 }]);
		assert.match(entry.attempts[0].outcome, /^stream_broken:/);
		assert.equal(vendors.accepted(m1), 1);
		assert.equal(vendors.accepted(m2), 1);
	});
}

test('1.2: a model streaming every 50 ms goes silent after 20 chunks: the next model finishes within 5 s, not at the 30 s idle limit', async (t) => {
	const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
	vendors.script('pace-1', [{ stream: { text: words, gapMs: 50, stallAfter: 20 } }]);
	vendors.script('pace-2', [{ stream: { continues: true, text: ['and the rest.'] } }]);
	const { model, runData } = await resilient(
		[
			['openai', 'pace-1'],
			['openai', 'pace-2'],
		],
		{},
		1.2,
	);
	const at = [];
	const chain = prompts.ChatPromptTemplate.fromMessages([['human', '{q}']]).pipe(model);
	for await (const e of chain.streamEvents({ q: 'hi' }, { version: 'v2' }))
		if (e.event === 'on_chat_model_stream' && e.data.chunk.text)
			at.push([Date.now(), e.data.chunk.text]);
	const stalledAt = at[19][0];
	const resumed = at.find(([, t]) => t.includes('the rest'));
	assert.ok(resumed, JSON.stringify(at.map(([, t]) => t)));
	const after = resumed[0] - stalledAt;
	t.diagnostic(`the continuation reached the caller ${after} ms after the stall`);
	assert.ok(after < 5_000, `the continuation reached the caller ${after} ms after the stall`);
	assert.ok(after >= 2_000, `cut at the learned limit's floor, not before: ${after} ms`);
	const entry = runData.at(-1).output;
	assert.equal(entry.outcome, 'success');
	assert.match(entry.attempts[0].outcome, /^stream_broken:/);
});

test('1.2: a model streaming every 400 ms is never cut by the learned idle limit', async () => {
	const words = Array.from({ length: 12 }, (_, i) => `s${i} `);
	vendors.script('slow-pace', [{ stream: { text: words, gapMs: 400 } }]);
	vendors.script('slow-pace-2', ['never asked']);
	const { model, runData } = await resilient(
		[
			['openai', 'slow-pace'],
			['openai', 'slow-pace-2'],
		],
		{},
		1.2,
	);
	const { texts, error } = await streamEvents(model);
	assert.equal(error, undefined, String(error?.stack));
	assert.equal(texts.join(''), words.join(''));
	assert.equal(vendors.accepted('slow-pace-2'), 0);
	assert.equal(runData.at(-1).output.outcome, 'success');
});

test("1.1, End With an Error: the broken model's error, as version 1", async () => {
	vendors.script('end-1', [{ stream: { text: ['one ', 'two ', 'three'], dropAfter: 2 } }]);
	vendors.script('end-2', ['ok']);
	const { model } = await resilient(
		[
			['openai', 'end-1'],
			['openai', 'end-2'],
		],
		{},
		1.1,
		{ onBrokenStream: 'error' },
	);
	const { texts, error } = await streamEvents(model);
	assert.deepEqual(texts, ['one ', 'two ']);
	assert.ok(error);
	assert.equal(vendors.accepted('end-2'), 0);
});
