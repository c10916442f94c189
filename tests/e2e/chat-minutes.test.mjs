// The chat model's scenarios that take minutes of real time (issue 58), side by side in one real
// n8n (N8N_MAJOR=2: 2.41.1; 1: 1.123.81) on `n8n start`, the package installed as n8n's community
// installer does: chat messages through n8n's AI Agent streaming behind a Webhook and, on n8n 2, a
// Chat Trigger, over the Resilient Chat Model 1.2 at its defaults on loopback vendors that stream
// as OpenAI does and count every request.
//   - recovery after a long outage: Model 1 down for 5 minutes, then healthy, a message every 5 s
//     (both roots by turns, naming the same providers: one breaker for both);
//   - learned deadlines: a reasoning model whose first token always takes 15-25 s, and a model
//     that sends a chunk every 400 ms.
// scripts/test-node.sh runs this file in the lane of files that mostly wait (`--waiting`).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { openAiCredential, openAiModel } from '../support/chat-workflows.mjs';
import { agentFlow, askFlow, flowUrl, items, startPublished } from '../support/chat-stream.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEY = `sk-minutes-${uid()}`;
const OUTAGE_MS = 5 * 60_000;
const PROBE_INTERVAL_MS = 10_000; // the chat model 1.2's default Probe Interval
const FIRST_CHUNK_DEADLINE_MS = 8_000; // its default First-Chunk Deadline
let vendors, server, base;
const flows = {};
const roots = (key) => (major === 2 ? [`${key}Hook`, `${key}Chat`] : [`${key}Hook`]);

before(async () => {
	vendors = await startLlmVendors({ openai: KEY });
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const ids = ['loDown', 'loUp', 'thinker', 'thinkSpare', 'steady', 'steadySpare'];
	const cred = Object.fromEntries(ids.map((id) => [id, openAiCredential(vendors, id, KEY)]));
	n8n.importCredentials(Object.values(cred));
	const pair = (a, b) => [openAiModel(a, cred[a], [0, 0]), openAiModel(b, cred[b], [0, 0])];
	for (const [key, a, b] of [
		['outage', 'loDown', 'loUp'],
		['think', 'thinker', 'thinkSpare'],
		['steady', 'steady', 'steadySpare'],
	]) {
		const names = [`${a}-${uid()}`, `${b}-${uid()}`];
		for (const root of roots(key))
			flows[root] = agentFlow(major, root.toLowerCase(), pair(a, b), {
				names,
				viaChat: root.endsWith('Chat'), // n8n 1's Chat Trigger does not stream
			});
	}
	({ server, base } = await startPublished(n8n, major, Object.values(flows), flowUrl));
});
after(async () => {
	await server?.stop();
	await vendors?.close();
});

const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
const requestsTo = (id) => vendors.arrivals.filter((a) => a.id === id && a.accepted);
/** Message `k` of a scenario, to its roots by turns; its text, or a failure showing the lines. */
async function ask(key, k) {
	const rootsOf = roots(key);
	const r = await askFlow(flows[rootsOf[k % rootsOf.length]], base, `${key} ${k}`, `m${uid()}`);
	const text = items(r.lines).join('');
	assert.ok(text, `${key} message ${k}: ${JSON.stringify(r.lines).slice(0, 1500)}`);
	return { text, ms: r.ms };
}

// The three scenarios use providers of their own and run at once: the file takes the outage's
// five minutes, not the sum.
describe('minutes of real time, side by side', { concurrency: true }, () => {
	test(
		'Model 1 down 5 minutes then healthy, a message every 5 s: every message answered, one probe per 10 s at most, Model 1 used again within 30 s of its recovery',
		{ timeout: OUTAGE_MS + 180_000 },
		async (t) => {
			vendors.script('loDown', [503]);
			vendors.script('loUp', [{ stream: { text: ['model 2 ', 'answers'] } }]);
			const started = Date.now();
			let recoveredAt;
			const served = [];
			for (let k = 0; ; k++) {
				await sleepUntil(started + 5_000 * k);
				if (recoveredAt === undefined && Date.now() >= started + OUTAGE_MS) {
					vendors.script('loDown', [{ stream: { text: ['model 1 ', 'is back'] } }]);
					recoveredAt = Date.now();
				}
				const { text } = await ask('outage', k);
				assert.ok(text === 'model 2 answers' || text === 'model 1 is back', text);
				served.push(text.startsWith('model 1') ? 1 : 2);
				// Three answers from Model 1 in a row after its recovery, or a minute past it, ends it.
				const again = served.slice(-3).join('') === '111';
				if (recoveredAt && (again || Date.now() > recoveredAt + 60_000)) break;
			}
			const toModel1 = requestsTo('loDown').map((a) => a.t);
			const during = toModel1.filter((at) => at < recoveredAt);
			const gaps = during.slice(1).map((at, i) => at - during[i]);
			// Before the breaker first opens, its threshold's failures may come close together; from
			// its first wait of an interval on, each request to Model 1 is the fleet's one probe.
			const opened = gaps.findIndex((g) => g >= PROBE_INTERVAL_MS - 1_000);
			const back = toModel1.find((at) => at >= recoveredAt);
			t.diagnostic(
				`n8n ${major}: ${served.length} messages (${roots('outage').length} roots by turns); ${during.length} requests to Model 1 during the 5-minute outage, the shortest gap between its probes ${Math.min(...gaps.slice(opened))} ms; used again ${back ? back - recoveredAt : 'never'} ms after its recovery`,
			);
			assert.ok(opened >= 0 && opened < 5, `the breaker opened: gaps ${gaps.join(' ')}`);
			for (const g of gaps.slice(opened))
				assert.ok(g >= PROBE_INTERVAL_MS - 1_000, `two probes ${g} ms apart: ${gaps.join(' ')}`);
			assert.ok(
				during.length <= 5 + Math.ceil(OUTAGE_MS / PROBE_INTERVAL_MS),
				`${during.length} requests to Model 1 during the outage`,
			);
			assert.ok(back, 'Model 1 used again');
			assert.ok(back - recoveredAt <= 30_000, `used again ${back - recoveredAt} ms after`);
			assert.equal(served.at(-1), 1, 'the last messages are Model 1 again');
		},
	);

	test(
		'a reasoning model whose first token always takes 15-25 s: cut on its first two messages, then given its time; its breaker never opens',
		{ timeout: 360_000 },
		async (t) => {
			const firstTokens = [18_000, 22_000, 15_000, 25_000, 20_000, 17_000];
			vendors.script(
				'thinker',
				firstTokens.map((firstDelayMs) => ({
					stream: { firstDelayMs, text: ['thought ', 'through'] },
				})),
			);
			vendors.script('thinkSpare', [{ stream: { text: ['spare ', 'answer'] } }]);
			const answers = [];
			for (let k = 0; k < firstTokens.length; k++) answers.push(await ask('think', k));
			t.diagnostic(
				`n8n ${major}: answered by ${answers.map((a) => (a.text.startsWith('thought') ? 'the reasoning model' : 'the spare')).join(', ')} in ${answers.map((a) => a.ms).join(', ')} ms`,
			);
			// The fixed deadline (8 s) cuts the first; twice the deadline that cut it, the second.
			assert.deepEqual(
				answers.map((a) => a.text),
				['spare answer', 'spare answer', ...Array(4).fill('thought through')],
			);
			assert.ok(answers[0].ms >= FIRST_CHUNK_DEADLINE_MS && answers[0].ms < 15_000);
			// Every message asked the reasoning model: its breaker never skipped it.
			assert.equal(requestsTo('thinker').length, firstTokens.length);
		},
	);

	test(
		'a model that sends a chunk every 400 ms: never cut over 20 messages',
		{ timeout: 360_000 },
		async (t) => {
			const words = Array.from({ length: 12 }, (_, i) => `s${i} `);
			vendors.script('steady', [{ stream: { firstDelayMs: 400, gapMs: 400, text: words } }]);
			vendors.script('steadySpare', [{ stream: { text: ['spare'] } }]);
			const ms = [];
			for (let k = 0; k < 20; k++) {
				const { text, ms: took } = await ask('steady', k);
				assert.equal(text, words.join(''), `message ${k}`);
				ms.push(took);
			}
			t.diagnostic(`n8n ${major}: 20 answers in ${Math.min(...ms)}-${Math.max(...ms)} ms each`);
			assert.equal(requestsTo('steady').length, 20);
			assert.equal(requestsTo('steadySpare').length, 0, 'never cut');
		},
	);
});
