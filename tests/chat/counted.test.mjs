// The chat model's calls are counted as Call Chain's items are: the engine's counters of each
// model call, one checked write, in the store its chain uses. Ten calls over a dead primary and a
// live fallback, outside n8n (the package installed as n8n installs it); the counters read back
// from that package's own memory store equal what the loopback vendors accepted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { n8nInstall, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { loadInstalledChatModel, n8nRequire, supplyContext, loopbackOpenAI } from './support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const KEYS = { openai: 'sk-count', anthropic: 'a', gemini: 'g' };
let vendors, loaded, ChatOpenAI, MemoryStore;

before(async () => {
	const install = n8nInstall(major);
	loaded = loadInstalledChatModel(install);
	({ ChatOpenAI } = n8nRequire(install)('@langchain/openai'));
	({ MemoryStore } = createRequire(path.join(loaded.pkgDir, 'package.json'))(
		path.join(loaded.pkgDir, 'dist/lib/store/memory.js'),
	));
	vendors = await startLlmVendors(KEYS);
});
after(async () => vendors?.close());

const openai = (id) =>
	loopbackOpenAI(ChatOpenAI, vendors, id, { apiKey: KEYS.openai, maxRetries: 0 });

test('ten chat calls, primary always 500: calls_total per model equals what its vendor accepted', async (t) => {
	const [dead, live] = [`dead-${uid()}`, `live-${uid()}`];
	vendors.script(dead, [500]);
	const ctx = supplyContext(
		{
			numberInputs: 2,
			providers: { provider: [{ name: dead }, { name: live }] },
			retryPolicy: { baseMs: 10, capMs: 20 },
			stateStore: 'memory',
			stateScope: 'provider',
		},
		[openai(dead), openai(live)],
	);
	const { response: model } = await new loaded.ResilientChatModel().supplyData.call(ctx, 0);
	for (let i = 0; i < 10; i++) await model.invoke(`question ${i}`);
	const sent = [vendors.accepted(dead), vendors.accepted(live)];
	assert.ok(sent[0] >= 1 && sent[0] < 10, `control: the breaker opened (${sent})`);
	const counters = await new MemoryStore('global').readCounters([dead, live]);
	t.diagnostic(`vendors accepted ${sent}; counters ${JSON.stringify(counters)}`);
	assert.equal(counters[dead].calls, sent[0], JSON.stringify(counters));
	assert.equal(counters[live].calls, sent[1], JSON.stringify(counters));
	assert.equal(counters[dead].failures, sent[0], 'every call to the dead model failed');
	assert.equal(counters[live].failures ?? 0, 0);
	// Each call tried the dead model once (Fail Over First) until its breaker opened, then
	// skipped it: a rejection each.
	assert.equal(counters[dead].rejections, 10 - sent[0], JSON.stringify(counters));
	assert.equal(counters[dead].transitions, 1, 'the breaker opened once');
});
