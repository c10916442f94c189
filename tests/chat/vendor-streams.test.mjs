// The loopback vendors' streams (tests/support/llm-vendors.mjs) as the real LangChain clients of
// n8n read them: ChatOpenAI on chat completions and on the Responses API, ChatAnthropic on
// Messages, each loaded from an n8n install the way its @n8n/n8n-nodes-langchain resolves it.
// One chunk per vendor delta, tool calls as tool_call_chunks, a held last delta that proves the
// client streams, a dropped socket that makes the stream throw, an abort that closes a stalled
// socket (n8n 1's ChatAnthropic leaves it open). Both majors when run alone; N8N_MAJOR picks one
// (the end-to-end lanes run each).
import { test, describe, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { n8nInstall, VERSIONS } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { loopbackOpenAI } from './support.mjs';

const KEYS = { openai: 'sk-stream', anthropic: 'a-stream', gemini: 'g-stream' };
const majors = process.env.N8N_MAJOR ? [Number(process.env.N8N_MAJOR)] : [2, 1];
const TOOL = {
	type: 'function',
	function: {
		name: 'lookup',
		description: 'Looks a city up',
		parameters: {
			type: 'object',
			properties: { city: { type: 'string' }, days: { type: 'number' } },
			required: ['city'],
		},
	},
};

let vendors;
before(async () => (vendors = await startLlmVendors(KEYS)));
after(async () => vendors?.close());
// Where this test's arrivals start: an earlier test's arrival (its status 200 already there) must
// not pass for this test's request before that request reaches the vendor.
let firstOfTest = 0;
beforeEach(() => (firstOfTest = vendors.arrivals.length));

/** The vendor's last arrival for instance `id` in this test. */
const arrivalOf = (id) =>
	vendors.arrivals
		.slice(firstOfTest)
		.filter((a) => a.id === id)
		.at(-1);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** Polls `check` every 5 ms until it is truthy or `ms` pass; its last value. */
async function until(check, ms) {
	const end = Date.now() + ms;
	while (!check() && Date.now() < end) await sleep(5);
	return check();
}
/** Every chunk of `model.stream(input, options)`, or the chunks before it threw and the error. */
async function drain(model, input = 'hi', options = {}) {
	const chunks = [];
	try {
		for await (const chunk of await model.stream(input, options)) chunks.push(chunk);
		return { chunks, error: null };
	} catch (error) {
		return { chunks, error };
	}
}
const texts = (chunks) => chunks.map((c) => c.text).filter((t) => t !== '');

for (const major of majors) {
	describe(`n8n ${VERSIONS[major]}`, () => {
		let ChatOpenAI, ChatAnthropic;
		before(() => {
			// What n8n's chat model nodes require: resolved from @n8n/n8n-nodes-langchain.
			const install = n8nInstall(major);
			const nodes = path.join(install.dir, 'node_modules/@n8n/n8n-nodes-langchain/package.json');
			const req = createRequire(nodes);
			({ ChatOpenAI } = req(req.resolve('@langchain/openai')));
			({ ChatAnthropic } = req(req.resolve('@langchain/anthropic')));
		});
		const openai = (useResponsesApi) => (id) =>
			loopbackOpenAI(ChatOpenAI, vendors, id, {
				apiKey: KEYS.openai,
				maxRetries: 0,
				useResponsesApi,
			});
		const dialects = [
			{ name: 'chat completions', dialect: 'openai', make: openai(false) },
			{ name: 'Responses API', dialect: 'openaiResponses', make: openai(true) },
			{
				name: 'Anthropic Messages',
				dialect: 'anthropic',
				make: (id) =>
					new ChatAnthropic({
						apiKey: KEYS.anthropic,
						model: 'claude-sonnet-4-5-20250929',
						maxRetries: 0,
						anthropicApiUrl: vendors.url(id),
					}),
			},
		];

		for (const { name, dialect, make } of dialects) {
			const id = `${dialect}-${major}`;

			test(`${name}: one text chunk per vendor delta, after a preamble of chunks without text`, async () => {
				vendors.script(id, [{ stream: { text: ['Hel', 'lo, ', 'wor', 'ld'] } }]);
				const { chunks, error } = await drain(make(id));
				assert.equal(error, null);
				assert.deepEqual(texts(chunks), ['Hel', 'lo, ', 'wor', 'ld']);
				const first = chunks.findIndex((c) => c.text !== '');
				assert.ok(first >= 1, 'the preamble (role-only delta, response.created, message_start)');
				assert.ok(chunks.slice(0, first).every((c) => c.text === ''));
				assert.equal(chunks.reduce((a, c) => a.concat(c)).text, 'Hello, world');
				const arrival = arrivalOf(id);
				assert.equal(arrival.dialect, dialect);
				assert.equal(arrival.streamed, true);
				assert.equal(arrival.body.stream, true);
				assert.equal(arrival.sent, 4);
				assert.equal(arrival.clientClosed, false);
				assert.ok(arrival.closedAt >= arrival.t);
			});

			test(`${name}: 'ok' to a streamed request streams "<id> says hi" in 3 deltas`, async () => {
				vendors.script(id, ['ok']);
				const { chunks, error } = await drain(make(id));
				assert.equal(error, null);
				assert.equal(texts(chunks).length, 3);
				assert.equal(texts(chunks).join(''), `${id} says hi`);
				assert.equal(arrivalOf(id).sent, 3);
			});

			for (const answer of [
				{ tool: 'lookup', args: { city: 'Paris', days: 3 } },
				{ stream: { tool: { name: 'lookup', args: { city: 'Paris', days: 3 } }, gapMs: 5 } },
			]) {
				test(`${name}: a streamed tool call (${Object.keys(answer)[0]}) arrives as tool_call_chunks`, async () => {
					vendors.script(id, [answer]);
					const { chunks, error } = await drain(make(id).bindTools([TOOL]));
					assert.equal(error, null);
					const pieces = chunks.filter((c) => c.tool_call_chunks?.length);
					assert.ok(pieces.length >= 3, `the call's start and ≥2 argument fragments`);
					assert.equal(pieces[0].tool_call_chunks[0].name, 'lookup');
					const message = chunks.reduce((a, c) => a.concat(c));
					assert.equal(message.tool_calls.length, 1);
					assert.equal(message.tool_calls[0].name, 'lookup');
					assert.deepEqual(message.tool_calls[0].args, { city: 'Paris', days: 3 });
					assert.equal(arrivalOf(id).sent, pieces.length - 1);
				});
			}

			test(`${name}: holdLast — the first text chunk arrives before release()`, async () => {
				vendors.script(id, [{ stream: { text: ['one ', 'two ', 'three'], holdLast: true } }]);
				const stream = await make(id).stream('hi');
				const it = stream[Symbol.asyncIterator]();
				let step;
				do step = await it.next();
				while (!step.done && step.value.text === '');
				assert.equal(step.value?.text, 'one ', 'the first delta, read while the last is held');
				assert.ok(await until(() => arrivalOf(id).sent === 2, 1000), 'all but the last sent');
				await sleep(50);
				assert.equal(arrivalOf(id).sent, 2, 'the last delta waits for release()');
				assert.equal(arrivalOf(id).closedAt, null);
				vendors.release(id);
				const rest = [];
				for (step = await it.next(); !step.done; step = await it.next()) rest.push(step.value);
				assert.deepEqual(texts(rest), ['two ', 'three']);
				assert.equal(arrivalOf(id).sent, 3);
				assert.equal(arrivalOf(id).clientClosed, false);
			});

			test(`${name}: dropAfter 2 — 2 text chunks, then the stream throws`, async () => {
				vendors.script(id, [{ stream: { text: ['a', 'b', 'c', 'd'], dropAfter: 2, gapMs: 50 } }]);
				const { chunks, error } = await drain(make(id));
				assert.deepEqual(texts(chunks), ['a', 'b']);
				// undici's fetch body, through each SDK unwrapped: the product classifies this shape.
				assert.ok(error instanceof TypeError, `${error?.name}: ${error?.message}`);
				assert.equal(error.message, 'terminated');
				assert.equal(error.cause?.code, 'UND_ERR_SOCKET');
				assert.equal(error.cause?.message, 'other side closed');
				const arrival = arrivalOf(id);
				assert.equal(arrival.sent, 2);
				assert.equal(arrival.clientClosed, false, 'the vendor closed it');
				assert.ok(arrival.closedAt >= arrival.t);
			});

			for (const stall of [true, 'preamble']) {
				// n8n 1.123's Anthropic client (@langchain/anthropic 1.1.3) ends the call at once on an
				// abort but leaves its connection open: createStreamWithRetry(payload, { headers }) sends
				// the request without the call's signal (measured: still open after 5 s); every other
				// client here closes it within milliseconds.
				const lingers = major === 1 && dialect === 'anthropic';
				const does = lingers
					? 'rejects the call, the socket stays open'
					: 'closes the socket at once';
				test(`${name}: stallAfterHeaders ${stall} — an abort ${does}`, async () => {
					vendors.script(id, [{ stream: { stallAfterHeaders: stall } }]);
					const abort = new AbortController();
					const run = drain(make(id), 'hi', { signal: abort.signal });
					assert.ok(await until(() => arrivalOf(id)?.status === 200, 2000));
					await sleep(150);
					assert.equal(arrivalOf(id).closedAt, null, 'stalled, never ending');
					const abortedAt = Date.now();
					abort.abort();
					const { chunks, error } = await run;
					assert.ok(error, 'the aborted stream throws');
					assert.equal(error.name, 'AbortError');
					assert.deepEqual(texts(chunks), []);
					const closed = await until(() => arrivalOf(id).closedAt !== null, lingers ? 1000 : 300);
					const arrival = arrivalOf(id);
					if (lingers) {
						assert.equal(closed, false, 'still open: when this fails, the client closes it now');
						return;
					}
					assert.ok(closed, 'closed after the abort');
					assert.ok(arrival.closedAt - abortedAt <= 300, `${arrival.closedAt - abortedAt} ms`);
					assert.equal(arrival.clientClosed, true);
					assert.equal(arrival.sent, 0);
				});
			}

			test(`${name}: firstDelayMs — the preamble at once, the first delta that much later`, async () => {
				vendors.script(id, [{ stream: { text: ['x', 'y'], firstDelayMs: 300 } }]);
				const seen = [];
				for await (const chunk of await make(id).stream('hi')) seen.push([Date.now(), chunk.text]);
				const first = seen.find(([, t]) => t !== '');
				assert.ok(seen[0][1] === '', 'a preamble chunk first');
				assert.ok(first[0] - seen[0][0] >= 250, `${first[0] - seen[0][0]} ms`);
				assert.deepEqual(seen.map(([, t]) => t).filter(Boolean), ['x', 'y']);
			});

			test(`${name}: a 25-delta stream with gaps arrives whole`, async () => {
				const text = Array.from({ length: 25 }, (_, i) => `w${i} `);
				vendors.script(id, [{ stream: { text, gapMs: 10 } }]);
				const { chunks, error } = await drain(make(id));
				assert.equal(error, null);
				assert.deepEqual(texts(chunks), text);
				assert.equal(arrivalOf(id).sent, 25);
			});

			test(`${name}: an error answer to a streamed request is a plain JSON error`, async () => {
				vendors.script(id, [503]);
				const { chunks, error } = await drain(make(id));
				assert.equal(chunks.length, 0);
				assert.equal(error?.status, 503);
				const arrival = arrivalOf(id);
				assert.equal(arrival.streamed, true);
				assert.equal(arrival.status, 503);
				assert.equal(arrival.sent, undefined);
			});
		}

		test('a release() before the hold is reached: that stream does not wait', async () => {
			const id = `early-${major}`;
			vendors.script(id, [{ stream: { text: ['p', 'q'], holdLast: true } }]);
			vendors.release(id);
			const { chunks, error } = await drain(dialects[0].make(id));
			assert.equal(error, null);
			assert.deepEqual(texts(chunks), ['p', 'q']);
		});

		test('a { stream } answer to a request that is not streamed is the plain success body', async () => {
			const id = `plain-${major}`;
			vendors.script(id, [{ stream: { text: ['jo', 'ined'] } }]);
			const message = await dialects[2].make(id).invoke('hi');
			assert.equal(message.text, 'joined');
			assert.equal(arrivalOf(id).streamed, false);
			assert.equal(arrivalOf(id).sent, undefined);
		});
	});
}
