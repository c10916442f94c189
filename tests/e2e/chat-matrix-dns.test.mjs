// The chat-model matrix under a DNS resolver outage (issue 28: "an EAI_AGAIN / ECONNREFUSED is
// retried"), in real n8n (N8N_MAJOR=2: 2.41.1 on Node 24; 1: 1.123.81 on Node 20), the package
// installed as n8n's community installer does. `n8n execute` runs in a mount namespace whose
// resolv.conf names a DNS server that is not there (as tests/e2e/resolver-outage.test.mjs): a
// hostname fails as Node reports a resolver outage (getaddrinfo EAI_AGAIN), an IP address still
// connects. Per model node M of tests/e2e/chat-matrix.test.mjs whose address a user sets, one
// Basic LLM Chain (ITEMS items) over a Resilient Chat Model (Fail Over First off, 2 attempts)
// over [M whose credential names an unresolvable host (the vendor's port), M on its loopback
// vendor by IP]. Asserted per node from the sub-node's run data: every call tried Model 1 twice
// (retried in place: the engine read the failure as transient) with the code the engine read
// through M's client, then Model 2 answered; at the vendor, Model 2 got one request per call.
// All nodes' chains run in ONE execution.
//
// Not run: Groq Chat Model (reached through GROQ_BASE_URL, process-wide: Model 1 and Model 2
// cannot have different hosts). The nodes the matrix cannot point at a loopback vendor
// (Mistral, Cohere, Vertex, Databricks, Alibaba, Bedrock on n8n 1) are not run either.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { n8nInstall, n8nInstance, uid } from '../support/n8n.mjs';
import { startLlmVendors } from '../support/llm-vendors.mjs';
import { chatWorkflow, llmChain, resilientOver } from '../support/chat-workflows.mjs';
import { matrixModels } from '../support/chat-matrix-models.mjs';
import { installLikeN8n } from './clean-checkout.mjs';
import { packWorktree } from '../chat/support.mjs';

const major = Number(process.env.N8N_MAJOR ?? 2);
const run8 = uid();
const KEYS = {
	openai: `sk-md-${run8}`,
	anthropic: 'unused',
	gemini: `g-md-${run8}`,
	ollama: `ol-md-${run8}`,
	azure: `az-md-${run8}`,
	aws: `AKIAMD${run8.toUpperCase()}`,
};
const ITEMS = 2;
const RETRY = {
	baseMs: 50,
	capMs: 200,
	maxAttempts: 2,
	deadlineMs: 30_000,
	budgetMs: 60_000,
	// Off: Model 1's failure is retried in place first, so its attempts show the engine read it
	// as transient (a permanent error is not repeated).
	failOverFirst: false,
};

const LC = '@n8n/n8n-nodes-langchain';
const MODELS = matrixModels(KEYS, run8);
// Not Groq: its address is process-wide (below).
const here = Object.entries(MODELS).filter(([, m]) => m.majors.includes(major) && !m.byModel);

/** What the engine reads the resolver outage as through the node's client: Node's getaddrinfo
 * code, or FETCH_FAILED through Google's Gemini SDK, which rethrows Node's "fetch failed" with
 * its message alone (the cause, and its code, gone). */
const outageAs = (m) => (m.dialect === 'gemini' ? 'FETCH_FAILED' : 'EAI_AGAIN');
/** A hostname only DNS could answer (none is in /etc/hosts): in the namespace, none resolves. */
const downHost = (key) => `${key.toLowerCase()}.llm-resolver-outage.example`;
const vid = (key, i) => `${key}Dns${i}`;
let vendors, run, log;
const names = {};

before(async () => {
	vendors = await startLlmVendors(KEYS);
	const n8n = n8nInstance(n8nInstall(major), { extensions: null });
	installLikeN8n(packWorktree(), n8n.home);
	const creds = [];
	const nodes = [];
	const models = [];
	const roots = [];
	let row = 0;
	for (const [key, m] of here) {
		const y = 400 * row++;
		names[key] = [1, 2].map((i) => `${key}-dns${i}-${run8}`);
		const input = (i) => {
			const id = vid(key, i);
			// Model 1: the vendor's URL with the unresolvable host, the vendor's port kept.
			const url = i === 1 ? vendors.url(id).replace('127.0.0.1', downHost(key)) : vendors.url(id);
			const cred = {
				id: `md${row}x${i}${key}`
					.replace(/[^A-Za-z0-9]/g, '')
					.padEnd(16, '0')
					.slice(0, 16),
				name: `${key} dns ${i}`,
				...m.cred(url),
			};
			creds.push(cred);
			return {
				id: `${key}dns${i}`,
				name: `${key} dns ${i}`,
				type: m.type,
				typeVersion: m.version[major],
				position: [400 + 200 * i, y + 200],
				parameters: m.parameters(id),
				credentials: { [cred.type]: { id: cred.id, name: cred.name } },
			};
		};
		const sub = resilientOver(
			`${key} resilient`,
			{
				numberInputs: 2,
				providers: { provider: names[key].map((name) => ({ name })) },
				breaker: { threshold: 50 },
				retryPolicy: RETRY,
			},
			[700, y + 100],
			`${key} chain`,
			[input(1), input(2)],
		);
		nodes.push(llmChain(`${key} chain`, [700, y]), ...sub.nodes);
		models.push(...sub.models);
		roots.push(`${key} chain`);
		vendors.script(vid(key, 1), ['ok']);
		vendors.script(vid(key, 2), ['ok']);
	}
	n8n.importCredentials(creds);
	const wf = chatWorkflow(`matrixdns${run8}`, { items: ITEMS, roots, nodes, models });
	n8n.importWorkflow(wf);
	const started = Date.now();
	({ run, log } = await n8n.execute(wf.id, { resolverDown: true, timeoutMs: 180_000 }));
	console.log(
		`n8n ${major}: the resolver-outage matrix's execution (${here.length} model nodes, ${ITEMS} items each) took ${Date.now() - started} ms`,
	);
	assert.ok(run, `n8n produced run data: ${log.slice(-3000)}`);
});
after(async () => vendors?.close());

test(`Groq Chat Model on n8n ${major}, its address unresolvable`, {
	skip: 'GROQ_BASE_URL is process-wide: no unresolvable Model 1 beside a reachable Model 2',
});

const path = (e) => e?.attempts?.map((a) => [a.name, a.outcome]);

for (const [key, m] of here)
	test(`${m.type}@${m.version[major]}, Model 1's host does not resolve: the engine reads ${outageAs(m)}, retries it, and Model 2 serves all ${ITEMS} items`, () => {
		const data = run.data.resultData.runData;
		const items = data[`${key} chain`]?.[0]?.data?.main?.[0] ?? [];
		const entries = (data[`${key} resilient`] ?? []).map(
			(t) => t.data?.ai_languageModel?.[0]?.[0]?.json,
		);
		const raw = JSON.stringify(data[`${key} resilient`]?.[0] ?? null).slice(0, 2000);
		const [one, two] = [1, 2].map((i) => vid(key, i));
		const ok = `${two} says hi`;
		console.log(
			`n8n ${major} ${m.type}@${m.version[major]}: resolver outage: Model 2 served ${items.filter((i) => i.json.text === ok).length}/${ITEMS}, ` +
				`Model 2 got ${vendors.accepted(two)} requests; attempts ${JSON.stringify(path(entries[0]))}`,
		);
		assert.deepEqual(
			items.map((i) => i.json.text ?? i.json.error),
			Array(ITEMS).fill(ok),
			raw,
		);
		assert.equal(entries.length, ITEMS, raw);
		const [down, up] = names[key];
		for (const e of entries)
			assert.deepEqual(
				path(e),
				[
					[down, outageAs(m)],
					[down, outageAs(m)],
					[up, '200'],
				],
				raw,
			);
		const seen = vendors.arrivals.filter((a) => a.id === one || a.id === two);
		assert.ok(
			seen.every((a) => a.id === two && a.dialect === m.dialect && a.accepted),
			`only Model 2's vendor is reached, in ${m.dialect}, with the credential's key: ${JSON.stringify(seen.map((a) => [a.id, a.dialect, a.accepted]))}`,
		);
		assert.equal(vendors.accepted(two), ITEMS, 'one request per call');
	});
