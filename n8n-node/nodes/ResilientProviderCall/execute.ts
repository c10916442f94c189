// What every version of the node runs: the operation, then each item through the engine's item
// loop onto success, deferred or failed. Version differences are in reading the parameters.
import {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import { loadEngine, type Engine, type EngineModule } from '../../lib/engine';
import {
	configError,
	parametersAreStatic,
	planForItem,
	readItemPlan,
	type ItemPlan,
	type NodeVersion,
} from '../../lib/params';
import { runItem, type ItemResult } from '../../lib/runItem';
import { itemStore, sharedStore, storeSettings } from '../../lib/store/open';
import { Cancelled, callProvider } from '../../lib/transport';
import { redact, redactDeep, readSecrets } from '../../lib/secrets';
import { runsAsTool, toolResult } from '../../lib/toolResult';
import { providerState, resetProviders } from '../../lib/operations';
import { CounterDeltas, warnAll } from '../../lib/counters';
import { providerMetrics } from '../../lib/metrics';
import {
	assertUrlAllowed,
	credentialSecrets,
	loadCredentials,
	type LoadedCredentials,
} from '../../lib/auth';
import { presetAnswer } from '../../lib/presets';

const SUCCESS = 0;
const DEFERRED = 1;
const FAILED = 2;

export async function executeNode(
	this: IExecuteFunctions,
	version: NodeVersion,
): Promise<INodeExecutionData[][]> {
	try {
		return await callChain.call(this, version);
	} catch (error) {
		// A node-level error (a bad parameter, credential or store setting) under continue-on-fail:
		// n8n would pass the input items on unchanged, as if they had succeeded. Every item leaves
		// on `failed` with the message instead.
		// Anything else (a store or engine fault) reaches n8n as a NodeOperationError too.
		if (!(error instanceof NodeOperationError))
			throw new NodeOperationError(this.getNode(), error as Error);
		if (!this.continueOnFail() || this.getExecutionCancelSignal?.()?.aborted) throw error;
		const executionId = this.getExecutionId();
		return [
			[],
			[],
			this.getInputData().map((item, i) => ({
				json: {
					...item.json,
					reason: 'node_error',
					error: error.message,
					_resilience: {
						outcome: 'failed',
						reason: 'node_error',
						correlationId: `${executionId}:${i}`,
					},
				},
				pairedItem: { item: i },
			})),
		];
	}
}

async function callChain(
	this: IExecuteFunctions,
	version: NodeVersion,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const out: INodeExecutionData[][] = [[], [], []];
	const node = this.getNode();
	const mod: EngineModule = loadEngine(node);
	const secrets = await readSecrets(this);
	// Version 2: n8n's own credentials of the types the chain uses, read once per execution; their
	// secret values are hidden from outputs and errors like the named secrets.
	let credentials: LoadedCredentials = {};
	if (version === 2 && this.getNodeParameter('operation', 0, 'callChain') === 'callChain')
		credentials = await loadCredentials(
			this,
			(this.getNodeParameter('credentialTypes', 0, []) as string[]) ?? [],
		);
	const hidden = { ...secrets, ...credentialSecrets(credentials) };
	const storeCfg = storeSettings(this);
	const shared = await sharedStore(this, storeCfg);
	const rawConcurrency = this.getNodeParameter('itemConcurrency', 0, 1);
	const concurrency = Number(rawConcurrency);
	if (!Number.isSafeInteger(concurrency) || concurrency < 1 || concurrency > 1000) {
		throw new NodeOperationError(
			node,
			`Node: "Item Concurrency" (itemConcurrency) must be a whole number from 1 to 1000, got ${JSON.stringify(String(rawConcurrency).slice(0, 50))}`,
		);
	}
	const warnings: string[] = [];
	if (node.retryOnFail) {
		const tries = node.maxTries ?? 3;
		warnings.push(
			`n8n's Retry On Fail is on for this node: its ${tries} tries multiply this node's own retries (3 x 5 = 15 calls per item). Switch it off.`,
		);
		this.logger.warn(`resilient-provider-call: ${warnings[0]}`);
	}
	const operation = this.getNodeParameter('operation', 0, 'callChain') as string;
	// Get Metrics is version 2's (version 1 is frozen).
	const operations =
		version >= 2
			? ['callChain', 'getState', 'getMetrics', 'reset']
			: ['callChain', 'getState', 'reset'];
	if (!operations.includes(operation)) {
		throw new NodeOperationError(
			node,
			`Node: "Operation" must be ${operations.slice(0, -1).join(', ')} or reset, got ${JSON.stringify(String(operation).slice(0, 50))}`,
		);
	}
	if (operation === 'getState' || operation === 'getMetrics' || operation === 'reset') {
		const plan = readItemPlan(this, 0, version);
		let engine: Engine;
		try {
			engine = new mod.Engine(plan.config);
		} catch (e) {
			throw configError(this, 0, plan, e as Error);
		}
		const store = itemStore(shared, plan.scope, storeCfg, this.logger);
		let items: INodeExecutionData[];
		try {
			items =
				operation === 'getMetrics'
					? await providerMetrics(node, engine, store, plan)
					: operation === 'getState'
						? await providerState(
								engine,
								store,
								plan,
								store.degraded ? 'memory (store unavailable)' : storeCfg.kind,
							)
						: await resetProviders(this, store, plan);
		} finally {
			engine.free();
		}
		return [items, [], []];
	}
	const counters = new CounterDeltas();
	const engines = new Map<string, Engine>();
	const cancel = this.getExecutionCancelSignal?.();
	const executionId = this.getExecutionId();

	// Without expressions every item has the first item's plan but for its keys: read it once
	// (reading parameters per item was ~5 % of the node's time per item in a profile).
	const isStatic = parametersAreStatic(node.parameters);
	let firstPlan: { plan: ItemPlan; engine: Engine } | undefined;
	const one = async (i: number) => {
		let plan: ItemPlan | undefined;
		try {
			plan = firstPlan
				? planForItem(firstPlan.plan, items[i].json)
				: readItemPlan(this, i, version);
			let engine = firstPlan?.engine;
			if (!engine) {
				const key = JSON.stringify(plan.config);
				engine = engines.get(key);
				if (!engine) {
					try {
						engine = new mod.Engine(plan.config);
					} catch (e) {
						throw configError(this, i, plan, e as Error);
					}
					engines.set(key, engine);
				}
				if (isStatic) firstPlan = { plan, engine };
			}
			for (const r of plan.requests) {
				if (r.credentialType) assertUrlAllowed(node, r.name, r.url, r.credentialType, credentials);
				if (r.secretName && secrets[r.secretName] === undefined) {
					throw new NodeOperationError(
						node,
						`Provider "${r.name}": secret "${r.secretName}" is not in the Resilient Provider Secrets credential`,
						{ itemIndex: i },
					);
				}
				// A line break in a header value is refused or silently stripped by HTTP clients (axios
				// sends "Bearer xX-Injected: 1"): the provider would get a mangled key. Never send it.
				// eslint-disable-next-line no-control-regex
				if (r.secretName && /[\u0000-\u0008\u000a-\u001f\u007f]/.test(secrets[r.secretName])) {
					throw new NodeOperationError(
						node,
						`Provider "${r.name}": secret "${r.secretName}" holds a line break or control character, which a header cannot carry (the value is not shown)`,
						{ itemIndex: i },
					);
				}
			}
			const result = await runItem({
				call: (req, headers, deadline, signal) =>
					callProvider(this, req, headers, deadline, signal, credentials),
				logger: this.logger,
				engine,
				store: itemStore(shared, plan.scope, storeCfg, this.logger),
				plan,
				secrets,
				correlationId: `${executionId}:${i}`,
				cancel,
			});
			place(
				out,
				items[i],
				i,
				plan,
				{ ...result, body: redactDeep(result.body, hidden) },
				warnings,
				`${executionId}:${i}`,
			);
			counters.add(
				plan.scope,
				plan.requests.map((r) => r.name),
				result.counters,
				result.transitions,
			);
		} catch (error) {
			if (error instanceof Cancelled)
				throw new NodeOperationError(node, 'Execution cancelled', { itemIndex: i });
			if (!this.continueOnFail()) {
				if (error instanceof NodeOperationError) throw error;
				throw new NodeOperationError(node, redact((error as Error).message, hidden), {
					itemIndex: i,
				});
			}
			out[FAILED].push({
				json: {
					...items[i].json,
					_resilience: {
						outcome: 'failed',
						reason: 'node_error',
						correlationId: `${executionId}:${i}`,
					},
					error: redact((error as Error).message, hidden),
				},
				pairedItem: { item: i },
			});
		}
	};

	// A small pool: `concurrency` items in flight, each leaving on exactly one output.
	let next = 0;
	const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
		while (next < items.length) await one(next++);
	});
	await Promise.all(lanes);
	// Counters: one write per scope per execution, never on the per-call path. Checked: a write
	// that failed, or went to this process's memory (fail-open), is a warning on every item.
	warnAll(out, await counters.write((scope) => itemStore(shared, scope, storeCfg, this.logger)));
	for (const e of engines.values()) e.free();
	// Keep input order within each output.
	for (const o of out)
		o.sort(
			(a, b) => (a.pairedItem as { item: number }).item - (b.pairedItem as { item: number }).item,
		);
	return runsAsTool(node) ? toolResult(out) : out;
}

function place(
	out: INodeExecutionData[][],
	input: INodeExecutionData,
	i: number,
	plan: ItemPlan,
	r: ItemResult,
	warnings: string[],
	correlationId: string,
) {
	const meta: IDataObject = {
		outcome: r.end.kind === 'done' ? 'success' : r.end.kind === 'defer' ? 'deferred' : 'failed',
		provider: r.end.kind === 'done' ? r.end.name : null,
		fallback: r.end.kind === 'done' ? r.end.fallback : false,
		attempts: r.attempts,
		skipped: r.skipped,
		transitions: r.transitions,
		sleptMs: r.sleptMs,
		totalMs: r.totalMs,
		correlationId,
	};
	if (r.storeFallback) meta.storeFallback = r.storeFallback;
	if (warnings.length || r.storeFallback)
		meta.warnings = [
			...warnings,
			...(r.storeFallback
				? [`state store unavailable (${r.storeFallback}): this item used this process's memory`]
				: []),
		];
	const pairedItem = { item: i };
	if (r.end.kind === 'done') {
		const body = answerOf(plan, r.end.name, r.body);
		const json =
			body !== null && typeof body === 'object' && !Array.isArray(body)
				? { ...(body as IDataObject) }
				: { data: body as IDataObject };
		out[SUCCESS].push({ json: { ...json, _resilience: meta }, pairedItem });
		return;
	}
	if (r.end.kind === 'defer') {
		meta.reason = r.end.reason;
		meta.retry_at = new Date(r.end.retry_at_ms).toISOString();
		if (plan.onExhaustion === 'default') {
			out[SUCCESS].push({
				json: { ...plan.defaultValue, _resilience: { ...meta, outcome: 'degraded' } },
				pairedItem,
			});
		} else {
			out[DEFERRED].push({
				json: { ...input.json, retry_at: meta.retry_at, reason: r.end.reason, _resilience: meta },
				pairedItem,
			});
		}
		return;
	}
	meta.reason = r.end.reason;
	out[FAILED].push({
		json: { ...input.json, reason: r.end.reason, _resilience: meta },
		pairedItem,
	});
}

/** What a provider's answer puts on `success`: an LLM preset's answer in the one shape (the
 * vendor's body beside it only under Include Raw Response), any other body as it came. */
function answerOf(plan: ItemPlan, provider: string, body: unknown): unknown {
	const req = plan.requests.find((q) => q.name === provider);
	if (!req?.preset) return body;
	const answer = presetAnswer(req.preset, body, provider);
	return req.includeRawResponse ? { ...answer, raw: body } : answer;
}
