// The guard's two operations around another n8n node's call: Check Provider (which provider may
// be called now; outputs go / deferred / failed) and Report Outcome (record that call; outputs
// success / - / failed). Every input item leaves on one output; bad input is a NodeOperationError
// naming the field (under continue-on-fail: the item on `failed` with the message).
import {
	type IDataObject,
	type IExecuteFunctions,
	type INodeExecutionData,
	NodeOperationError,
} from 'n8n-workflow';
import { loadEngine, type Engine, type Ticket } from '../engine';
import { configError, readItemPlan, type ItemPlan } from '../params';
import { StoreUnavailable } from '../store/failover';
import { itemStore, sharedStore, sharedTickets, storeSettings } from '../store/open';
import { MemoryTickets } from '../store/tickets';
import { checkItem } from './check';
import { guardedResult } from './guardedResult';
import { checkNodeName, pairedTicket, ticketText, type Found } from './pairing';
import { reportItem, TicketRefused } from './report';

const GO = 0;
const DEFERRED = 1;
const FAILED = 2;

type Outputs = INodeExecutionData[][];

function openEngine(ctx: IExecuteFunctions, i: number, plan: ItemPlan, cache: Map<string, Engine>) {
	const key = JSON.stringify(plan.config);
	let e = cache.get(key);
	if (!e) {
		try {
			e = new (loadEngine(ctx.getNode()).Engine)(plan.config);
		} catch (err) {
			throw configError(ctx, i, plan, err as Error);
		}
		cache.set(key, e);
	}
	return e;
}

/** `settings`: whose store settings (Report Outcome: its Check node's); credentials are `ctx`'s. */
async function stores(ctx: IExecuteFunctions, settings: IExecuteFunctions = ctx) {
	const cfg = storeSettings(settings);
	const shared = await sharedStore(ctx, cfg);
	const tickets = await sharedTickets(ctx, cfg);
	return {
		cfg,
		rows: (scope: string) => itemStore(shared, scope, cfg, ctx.logger),
		tickets: (scope: string) => (degraded: boolean) =>
			degraded ? new MemoryTickets(`fallback:${scope}`) : tickets(scope),
	};
}

/** Per item; a failure goes to `failed` under continue-on-fail, else stops the node. */
async function eachItem(
	ctx: IExecuteFunctions,
	out: Outputs,
	one: (i: number) => Promise<void>,
): Promise<void> {
	const items = ctx.getInputData();
	for (let i = 0; i < items.length; i++) {
		try {
			await one(i);
		} catch (error) {
			if (!ctx.continueOnFail()) {
				if (error instanceof NodeOperationError) throw error;
				throw new NodeOperationError(ctx.getNode(), error as Error, { itemIndex: i });
			}
			out[FAILED].push({
				json: {
					...items[i].json,
					error: (error as Error).message,
					_resilience: { outcome: 'failed', reason: 'node_error' },
				},
				pairedItem: { item: i },
			});
		}
	}
}

export async function checkProvider(ctx: IExecuteFunctions): Promise<Outputs> {
	const out: Outputs = [[], [], []];
	const items = ctx.getInputData();
	const s = await stores(ctx);
	const engines = new Map<string, Engine>();
	const executionId = ctx.getExecutionId();
	await eachItem(ctx, out, async (i) => {
		const plan = readItemPlan(ctx, i, 2, false);
		const engine = openEngine(ctx, i, plan, engines);
		const names = plan.requests.map((r) => r.name);
		const store = s.rows(plan.scope);
		const lease = `${executionId}:${i}:${Math.random().toString(36).slice(2, 10)}`;
		const input = items[i].json;
		const pairedItem = { item: i };
		let c;
		try {
			c = await checkItem(engine, store, s.tickets(plan.scope), names, lease, plan.scope);
		} catch (error) {
			if (!(error instanceof StoreUnavailable)) throw error;
			const item = engine.item(await store.now(), lease, '');
			const end = item.deferNow(await store.now(), 'store_unavailable');
			item.free();
			if (end.step.kind !== 'defer') throw error;
			const retry_at = new Date(end.step.retry_at_ms).toISOString();
			out[DEFERRED].push({
				json: {
					...input,
					retry_at,
					reason: end.step.reason,
					_resilience: { outcome: 'deferred', reason: end.step.reason, retry_at },
				},
				pairedItem,
			});
			return;
		}
		const meta: IDataObject = {
			skipped: c.skipped.map((k) => ({
				provider: names[k.provider],
				reason: k.reason,
				until: new Date(k.until_ms).toISOString(),
			})),
			transitions: c.transition
				? [
						{
							provider: names[c.transition.provider],
							from: c.transition.from,
							to: c.transition.to,
							at: new Date(c.transition.at_ms).toISOString(),
						},
					]
				: [],
			correlationId: `${executionId}:${i}`,
		};
		if (store.degraded) meta.storeFallback = store.degraded;
		const d = c.decision;
		if (d.kind === 'go') {
			const r = plan.requests[d.provider];
			out[GO].push({
				json: {
					...input,
					// What the guarded node needs: {{ $json.provider.url }}, .name, .index, …
					provider: {
						name: d.name,
						index: d.provider,
						url: r.url,
						method: r.method,
						query: r.qs,
						headers: r.headers,
						body: r.body as IDataObject,
					},
					_resilience: {
						outcome: 'go',
						provider: d.name,
						probe: d.ticket.probe,
						ticket: d.ticket,
						...meta,
					},
				},
				pairedItem,
			});
		} else if (d.kind === 'defer') {
			const retry_at = new Date(d.retry_at_ms).toISOString();
			out[DEFERRED].push({
				json: {
					...input,
					retry_at,
					reason: d.reason,
					_resilience: { outcome: 'deferred', reason: d.reason, retry_at, ...meta },
				},
				pairedItem,
			});
		} else {
			out[FAILED].push({
				json: {
					...input,
					reason: d.reason,
					_resilience: { outcome: 'failed', reason: d.reason, ...meta },
				},
				pairedItem,
			});
		}
	});
	for (const e of engines.values()) e.free();
	return out;
}

/** Report Outcome reads the chain from its Check node: one chain, set once. Values that are
 * expressions are evaluated for the item at hand. */
function checkPlanReader(ctx: IExecuteFunctions, params: IDataObject): IExecuteFunctions {
	const read = (path: string, i: number, fallback: unknown): unknown => {
		let v: unknown = params;
		for (const part of path.split('.')) v = (v as IDataObject | undefined)?.[part];
		if (v === undefined) return fallback;
		return resolve(v, i);
	};
	const resolve = (v: unknown, i: number): unknown => {
		if (typeof v === 'string' && v.startsWith('=')) return ctx.evaluateExpression(v, i);
		if (Array.isArray(v)) return v.map((x) => resolve(x, i));
		if (v && typeof v === 'object')
			return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x, i)]));
		return v;
	};
	const shim = Object.create(ctx) as IExecuteFunctions;
	(shim as { getNodeParameter: unknown }).getNodeParameter = read;
	return shim;
}

/** The "Ticket" field, when set: a ticket object (or its JSON text) instead of the pairing. */
function givenTicket(ctx: IExecuteFunctions, i: number): Found | undefined {
	const raw = ctx.getNodeParameter('ticket', i, '') as unknown;
	if (raw === '' || raw === undefined || raw === null) return undefined;
	let v = raw;
	if (typeof raw === 'string') {
		try {
			v = JSON.parse(raw);
		} catch (e) {
			throw new NodeOperationError(
				ctx.getNode(),
				`Report Outcome: "Ticket" (ticket) is not valid JSON: ${(e as Error).message}`,
				{ itemIndex: i },
			);
		}
	}
	if (typeof v !== 'object' || v === null || Array.isArray(v))
		throw new NodeOperationError(
			ctx.getNode(),
			'Report Outcome: "Ticket" (ticket) must be a ticket object from Check Provider (_resilience.ticket)',
			{ itemIndex: i },
		);
	return { ticket: v as Ticket, text: ticketText(v as Ticket) };
}

export async function reportOutcome(ctx: IExecuteFunctions): Promise<Outputs> {
	const out: Outputs = [[], [], []];
	const items = ctx.getInputData();
	const named = String(ctx.getNodeParameter('checkNode', 0, '') ?? '').trim();
	const checkNode = checkNodeName(ctx, named);
	const checkParams = (ctx
		.getParentNodes(ctx.getNode().name, { includeNodeParameters: true })
		.find((p) => p.name === checkNode)?.parameters ?? {}) as IDataObject;
	const ownStore = String(ctx.getNodeParameter('stateStore', 0, 'memory'));
	const checkStore = String(checkParams.stateStore ?? 'memory');
	if (checkStore !== ownStore)
		throw new NodeOperationError(
			ctx.getNode(),
			`Report Outcome: "State Store" (stateStore) is ${ownStore} here but ${checkStore} on Check node "${checkNode}": tickets and breaker rows are in the Check's store, so set the same store and credential`,
		);
	const reader = checkPlanReader(ctx, checkParams);
	// The Check's store options (key prefix, table), this node's credential.
	const s = await stores(ctx, reader);
	// n8n runs this node once per incoming connection: all items came from one output.
	const source = ctx.getInputSourceData(0);
	const fromOutput = source?.previousNodeOutput ?? 0;
	const engines = new Map<string, Engine>();
	const counters = new Map<string, Record<string, Record<string, number>>>();
	await eachItem(ctx, out, async (i) => {
		const given = givenTicket(ctx, i);
		const found = given ?? pairedTicket(ctx, i, checkNode);
		const plan = readItemPlan(reader, i, 2, false);
		const engine = openEngine(ctx, i, plan, engines);
		const result = guardedResult(items[i], fromOutput);
		const store = s.rows(plan.scope);
		let r;
		try {
			r = await reportItem(
				engine,
				store,
				s.tickets(plan.scope),
				plan.requests.map((q) => q.name),
				found.ticket,
				found.text,
				plan.scope,
				result.outcome,
			);
		} catch (error) {
			if (error instanceof TicketRefused)
				throw new NodeOperationError(
					ctx.getNode(),
					`Report Outcome: the ticket of item ${i} ("Ticket" (ticket): ${given ? 'as given' : `_resilience.ticket of Check node "${checkNode}"`}, provider "${String(found.ticket.name).slice(0, 100)}") is refused: ${error.message}`,
					{ itemIndex: i },
				);
			throw error;
		}
		const name = found.ticket.name;
		const scope = (counters.get(plan.scope) ?? {}) as Record<string, Record<string, number>>;
		const c = (scope[name] ??= {});
		c.calls = (c.calls ?? 0) + 1;
		if (r.attempt.health === 'failure') c.failures = (c.failures ?? 0) + 1;
		if (r.transition) c.transitions = (c.transitions ?? 0) + 1;
		counters.set(plan.scope, scope);
		const meta: IDataObject = {
			outcome: result.failed ? 'failed' : 'success',
			reported: true,
			provider: name,
			probe: found.ticket.probe,
			health: r.attempt.health,
			observed:
				result.outcome.kind === 'status'
					? { status: result.outcome.status, from: result.from }
					: { code: result.outcome.code, from: result.from },
			transitions: r.transition
				? [
						{
							provider: name,
							from: r.transition.from,
							to: r.transition.to,
							at: new Date(r.transition.at_ms).toISOString(),
						},
					]
				: [],
		};
		out[result.failed ? FAILED : GO].push({
			json: { ...items[i].json, _resilience: meta },
			pairedItem: { item: i },
		});
	});
	for (const [scope, deltas] of counters)
		await s
			.rows(scope)
			.addCounters(deltas)
			.catch(() => undefined);
	for (const e of engines.values()) e.free();
	return out;
}

export function isGuardOperation(op: unknown): op is 'checkProvider' | 'reportOutcome' {
	return op === 'checkProvider' || op === 'reportOutcome';
}

/** A guard operation; a node-level error (a bad parameter, store or pairing setting) under
 * continue-on-fail puts every item on `failed` with the message (n8n would pass them on as if
 * they had succeeded), as Call Chain does. */
export async function guardNode(
	ctx: IExecuteFunctions,
	operation: 'checkProvider' | 'reportOutcome',
): Promise<Outputs> {
	try {
		return operation === 'checkProvider' ? await checkProvider(ctx) : await reportOutcome(ctx);
	} catch (error) {
		if (!(error instanceof NodeOperationError))
			throw new NodeOperationError(ctx.getNode(), error as Error);
		if (!ctx.continueOnFail()) throw error;
		return [
			[],
			[],
			ctx.getInputData().map((item, i) => ({
				json: {
					...item.json,
					reason: 'node_error',
					error: error.message,
					_resilience: { outcome: 'failed', reason: 'node_error' },
				},
				pairedItem: { item: i },
			})),
		];
	}
}
