// Report Outcome: per item, the guarded node's result recorded against the ticket of its Check
// Provider node (found through item pairing, or given), with the Check's chain and store.
import { forVersion } from '../plan/versionDefaults';
import { type IDataObject, type IExecuteFunctions, NodeOperationError } from 'n8n-workflow';
import type { Ticket } from '../engine';
import { readItemPlan } from '../params';
import { CounterDeltas, warnAll } from '../counters';
import { eachItem, FAILED, GO, openEngine, stores, type Outputs } from './common';
import { guardedOutcome } from './guardedOutcome';
import { reportedData } from '../resilience';
import { correlationId } from '../errorItem';
import { checkNodeName, pairedTicket, ticketText, type Found } from './pairing';
import { reportItem, TicketRefused } from './report';

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
	const counters = new CounterDeltas();
	await eachItem(ctx, out, async (i) => {
		const given = givenTicket(ctx, i);
		const found = given ?? pairedTicket(ctx, i, checkNode);
		const plan = readItemPlan(reader, i, 2, false);
		// As its check read it: from 2.1 the call held a slot of the fleet's learned limit.
		forVersion(plan.config, 'guard', ctx.getNode().typeVersion, ctx.getWorkflow().id);
		const engine = openEngine(ctx, i, plan);
		const outcome = guardedOutcome(items[i], fromOutput);
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
				outcome,
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
		const names = plan.requests.map((q) => q.name);
		counters.add(
			plan.scope,
			names,
			names.map((n) => (n === name ? r.counters : {})),
			r.committed,
		);
		// The engine's verdict, not the guarded node's output: a 503 on its main output failed.
		const meta = reportedData(r, found.ticket, correlationId(ctx, i), {
			storeFallback: store.degraded,
			storeWarning: store.warning,
			casRetries: r.casRetries,
			droppedWrites: r.dropped ? [r.dropped] : [],
		});
		out[r.served ? GO : FAILED].push({
			json: { ...items[i].json, _resilience: meta },
			pairedItem: { item: i },
		});
	});
	warnAll(out, await counters.write(s.rows));
	return out;
}
