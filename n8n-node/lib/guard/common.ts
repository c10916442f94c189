// What the guard's two operations share: their outputs, the engine per chain (the package's one cache), the stores (rows
// and tickets) and the per-item loop in which a failure under continue-on-fail leaves on
// `failed` rather than stopping the node.
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { itemFailed } from '../errorItem';
import { engineFor } from '../engineCache';
import { configError, type ItemPlan } from '../params';
import { itemStore, sharedStore, sharedTickets, storeSettings } from '../store/open';
import type { FailoverStore } from '../store/failover';
import { FailoverTickets } from '../store/ticketsFailover';

export const GO = 0;
export const DEFERRED = 1;
export const FAILED = 2;

export type Outputs = INodeExecutionData[][];

/** The engine of item `i`'s chain, from the package's one engine cache. */
export function openEngine(ctx: IExecuteFunctions, i: number, plan: ItemPlan) {
	return engineFor(ctx.getNode(), plan.config, (err) => configError(ctx, i, plan, err));
}

/** `settings`: whose store settings (Report Outcome: its Check node's); credentials are `ctx`'s. */
export async function stores(ctx: IExecuteFunctions, settings: IExecuteFunctions = ctx) {
	const cfg = storeSettings(settings);
	const shared = await sharedStore(ctx, cfg);
	const tickets = await sharedTickets(ctx, cfg);
	return {
		cfg,
		rows: (scope: string) => itemStore(shared, scope, cfg, ctx.logger),
		tickets: (scope: string) => (store: FailoverStore) =>
			new FailoverTickets(tickets(scope), scope, store, cfg.timeoutMs),
	};
}

/** Per item; a failure goes to `failed` under continue-on-fail, else stops the node. */
export async function eachItem(
	ctx: IExecuteFunctions,
	out: Outputs,
	one: (i: number) => Promise<void>,
): Promise<void> {
	const items = ctx.getInputData();
	for (let i = 0; i < items.length; i++) {
		try {
			await one(i);
		} catch (error) {
			out[FAILED].push(itemFailed(ctx, i, error));
		}
	}
}

/** Counters per scope and provider, written once per execution (as Call Chain does). */
