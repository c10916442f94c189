// The chat-model matrix, streamed (issue 28: "streaming works under a streaming AI Agent where the
// node streams"), in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20) on
// `n8n start`, the package installed as n8n's community installer does. Per model node M of
// tests/e2e/chat-matrix.test.mjs, pointed at its loopback vendor the same way (credential field,
// or Groq's GROQ_BASE_URL for the n8n process): a Webhook in Streaming mode -> n8n's AI Agent
// (Enable Streaming, its default) -> the Resilient Chat Model (breaker threshold 3) over
// [M on a vendor that always answers 500, M on one that streams its text in 3 deltas]. Every
// node's workflow is imported and published once, one n8n runs them all; each node gets
// REQUESTS requests, one at a time (the nodes side by side). Asserted, at the vendors and in the
// NDJSON stream the client reads:
// - every response streams Model 2's text, delta for delta, one `item` line per delta, and its
//   first line reaches the client while the vendor still holds the last delta (released only
//   then: an answer buffered anywhere on the way would hang);
// - Model 1 got exactly 3 requests (the threshold: then its breaker is open), Model 2 every one;
// - every request to Model 2 asked for a stream (the vendor's `streamed`: `stream: true`, Ollama
//   without `stream: false`, Gemini's streamGenerateContent?alt=sse, Bedrock's converse-stream).
// Every node of the matrix streams in n8n: none falls back to a whole answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { resilientChatModel } from '../support/chat-workflows.mjs';
import { items, postStreaming, streamingAgent } from '../support/chat-stream.mjs';
import { activate, ownerSession } from '../support/trigger/publish.mjs';
import { matrixModels } from '../support/chat-matrix-models.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run8 = uid();
const KEYS = {
	openai: `sk-ms-${run8}`,
	anthropic: 'unused',
	gemini: `g-ms-${run8}`,
	ollama: `ol-ms-${run8}`,
	azure: `az-ms-${run8}`,
	aws: `AKIAMS${run8.toUpperCase()}`,
};
const THRESHOLD = 3;
const REQUESTS = 4;

const MODELS = matrixModels(KEYS, run8);

const here = Object.entries(MODELS).filter(([, m]) => m.majors.includes(major));
const elsewhere = Object.entries(MODELS).filter(([, m]) => !m.majors.includes(major));
/** Vendor instance of node `key`'s Model i (also Groq's model name). */
const vid = (key, i) => `${key}S${i}${run8}`;
/** Model 2's streamed text: 3 deltas, 20 ms apart. */
const deltas = (key) => [`${key} streams `, 'in three ', 'deltas.'];
let vendors, server, base;
const flows = {};

/** Webhook (Streaming) -> AI Agent -> Resilient Chat Model over Models 1 and 2 of node `key`. */
function streamFlow(key, m, creds) {
	const hook = `ms-${key}-${run8}`;
	const names = [1, 2].map((i) => `${key}-m${i}-${run8}`);
	const { start, agent } = streamingAgent(hook, major);
	const resilient = resilientChatModel(
		'Resilient Chat Model',
		{
			numberInputs: 2,
			providers: { provider: names.map((name) => ({ name })) },
			breaker: { threshold: THRESHOLD },
			retryPolicy: { baseMs: 50, capMs: 200 },
		},
		[300, 200],
	);
	const inputs = [1, 2].map((i) => {
		const id = vid(key, i);
		const cred = {
			id: `ms${i}${key}${run8}`
				.replace(/[^A-Za-z0-9]/g, '')
				.padEnd(16, '0')
				.slice(0, 16),
			name: `${key} stream ${i} ${run8}`,
			...m.cred(vendors.url(m.byModel ? '_model' : id)),
		};
		creds.push(cred);
		return {
			id: `model${i}${key}`,
			name: `Model ${i}`,
			type: m.type,
			typeVersion: m.version[major],
			position: [200 * i, 400],
			parameters: m.parameters(id),
			credentials: { [cred.type]: { id: cred.id, name: cred.name } },
		};
	});
	const connections = {
		Webhook: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
		'Resilient Chat Model': {
			ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]],
		},
	};
	inputs.forEach((input, i) => {
		connections[input.name] = {
			ai_languageModel: [[{ node: 'Resilient Chat Model', type: 'ai_languageModel', index: i }]],
		};
	});
	const wid = `ms${key}${run8}`.slice(0, 32);
	return {
		wf: {
			id: wid,
			name: `matrix streamed ${key} ${run8}`,
			active: false,
			settings: { executionOrder: 'v1' },
			nodes: [start, agent, resilient, ...inputs],
			connections,
		},
		hook,
		names,
	};
}

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), {
		extensions: null,
		env: { GROQ_BASE_URL: vendors.url('_model') },
	});
	installLikeN8n(packWorktree(), n8n.home);
	const creds = [];
	for (const [key, m] of here) {
		flows[key] = streamFlow(key, m, creds);
		vendors.script(vid(key, 1), [500]);
		// The last delta held until the client has read the first item line (below): an answer
		// buffered anywhere on the way would hang there.
		vendors.script(vid(key, 2), [{ stream: { text: deltas(key), gapMs: 20, holdLast: true } }]);
	}
	n8n.importCredentials(creds);
	n8n.importWorkflow(Object.values(flows).map((f) => f.wf));
	// Published: n8n 1 in one CLI call; n8n 2 through its REST API once it runs (as the editor's
	// Publish button does).
	if (major === 1) n8n.cli(['update:workflow', '--all', '--active=true']);
	const booted = Date.now();
	server = await n8n.start();
	base = `http://127.0.0.1:${server.port}`;
	if (major === 2) {
		const rest = await ownerSession(server.port);
		for (const f of Object.values(flows)) await activate(rest, f.wf.id);
	}
	// A published workflow's webhook registers a moment after the REST API is up (n8n 2): a GET
	// to a POST webhook then answers "did you mean POST" instead of "not registered".
	for (const f of Object.values(flows))
		for (let tries = 0; ; tries++) {
			const r = await fetch(`${base}/webhook/${f.hook}`, {
				signal: AbortSignal.timeout(2000),
			}).catch(() => null);
			const text = r ? await r.text().catch(() => '') : '';
			if (!r || r.status !== 404 || /did you mean/i.test(text)) break;
			if (tries > 120) throw new Error(`${f.hook} never registered: ${text.slice(0, 300)}`);
			await new Promise((res) => setTimeout(res, 250));
		}
	console.log(
		`n8n ${major}: ${here.length} workflows published and registered ${Date.now() - booted} ms after boot began`,
	);
});
after(async () => {
	await server?.stop();
	await vendors?.close();
});

// A node this matrix cannot prove here is a skip that says why (it proves nothing by passing).
for (const [, m] of elsewhere)
	test(`${m.type} on n8n ${major}`, {
		skip: m.elsewhere ?? `not in n8n ${major}, run on n8n ${m.majors.join(', ')} only`,
	});

/** Each node's REQUESTS turns, one at a time; the nodes side by side (started on first use). */
let asked;
const askAll = () =>
	(asked ??= (async () => {
		const out = {};
		await Promise.all(
			here.map(async ([key]) => {
				out[key] = [];
				for (let k = 0; k < REQUESTS; k++) {
					let released = false;
					const onLine = (line) => {
						if (line.type !== 'item' || released) return;
						released = true;
						vendors.release(vid(key, 2));
					};
					const r = await postStreaming(
						`${base}/webhook/${flows[key].hook}`,
						{ q: `Question ${k + 1}` },
						{ timeoutMs: 60_000, onLine },
					).catch((e) => ({ status: 0, lines: [], ms: 0, error: String(e) }));
					out[key].push(r);
				}
			}),
		);
		return out;
	})());

const show = (r) =>
	JSON.stringify({
		status: r.status,
		error: r.error,
		lines: r.lines.map(({ at, ...l }) => l),
	}).slice(0, 2000);

for (const [key, m] of here) {
	test(`${m.type}@${m.version[major]} under a streaming AI Agent, Model 1 always 500: every response streams Model 2's ${deltas(key).length} deltas; Model 1 gets ${THRESHOLD} requests of ${REQUESTS}, Model 2 is asked for a stream each time`, async () => {
		const turns = (await askAll())[key];
		const [one, two] = [1, 2].map((i) => vid(key, i));
		const at = (id) => vendors.arrivals.filter((a) => a.id === id);
		const [atOne, atTwo] = [at(one), at(two)];
		const want = deltas(key);
		const streamedTurns = turns.filter(
			(r) => r.status === 200 && JSON.stringify(items(r.lines)) === JSON.stringify(want),
		).length;
		console.log(
			`n8n ${major} ${m.type}@${m.version[major]}: streamed ${streamedTurns}/${REQUESTS} (item lines per response ${JSON.stringify(turns.map((r) => items(r.lines).length))}); ` +
				`Model 1 ${atOne.length} requests (${atOne.filter((a) => a.streamed).length} asked to stream), ` +
				`Model 2 ${atTwo.length} (${atTwo.filter((a) => a.streamed).length} asked to stream, ` +
				`${atTwo.filter((a) => a.sent === want.length).length} streams sent whole)`,
		);
		assert.ok(
			[...atOne, ...atTwo].every((a) => a.dialect === m.dialect && a.accepted),
			`every request in ${m.dialect}, with the credential's key: ${JSON.stringify([...atOne, ...atTwo].map((a) => [a.id, a.dialect, a.accepted]))}`,
		);
		for (const r of turns) {
			assert.equal(r.status, 200, show(r));
			// One `item` line per delta: the answer arrived as a stream, Model 2's text only.
			assert.deepEqual(items(r.lines), want, show(r));
			assert.ok(!r.lines.some((l) => l.type === 'error'), show(r));
		}
		assert.equal(atOne.length, THRESHOLD, 'the breaker: its threshold, then open');
		assert.equal(atTwo.length, REQUESTS, 'Model 2 served every request once');
		assert.ok(
			atTwo.every((a) => a.streamed && a.status === 200 && a.sent === want.length),
			`Model 2 was asked for a stream and sent it whole: ${JSON.stringify(atTwo.map((a) => [a.streamed, a.status, a.sent]))}`,
		);
	});
}
