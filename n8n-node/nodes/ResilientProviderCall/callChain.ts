// The Call Chain operation: each item through the engine's item loop, `concurrency` at a time,
// onto success, deferred or failed; the counters written once per scope at the end.
import { IExecuteFunctions, INodeExecutionData, NodeOperationError } from 'n8n-workflow';
import type { Engine } from '../../lib/engine';
import { engineFor } from '../../lib/engineCache';
import {
	configError,
	parametersAreStatic,
	planForItem,
	readItemPlan,
	type ItemPlan,
	type NodeVersion,
} from '../../lib/params';
import { runItem } from '../../lib/itemLoop';
import { itemStore, type SharedStore, type StoreSettings } from '../../lib/store/open';
import { readAheadScopes } from '../../lib/store/readAhead';
import { callProvider } from '../../lib/transport';
import { redactDeep } from '../../lib/secrets';
import { correlationId as correlationOf, itemFailed } from '../../lib/errorItem';
import { planTokenFacts } from '../../lib/tokens/requestFacts';
import { versionDefaults } from '../../lib/plan/versionDefaults';
import { CounterDeltas, warnAll } from '../../lib/counters';
import type { LoadedCredentials } from '../../lib/auth';
import { assertRequestSecrets } from '../../lib/requestSecrets';
import { eachInPool } from '../../lib/itemPool';
import { linesFor, type Line } from '../../lib/line';
import { leaveSeats } from '../../lib/fleetSeats';
import { FAILED, inInputOrder, placeItem } from './placeItem';

export interface CallChainContext {
	version: NodeVersion;
	secrets: Record<string, string>;
	credentials: LoadedCredentials;
	/** Every value to hide from outputs and errors: the secrets' and the credentials'. */
	hidden: Record<string, string>;
	storeCfg: StoreSettings;
	shared: SharedStore;
}

export async function callChain(
	this: IExecuteFunctions,
	c: CallChainContext,
): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const out: INodeExecutionData[][] = [[], [], []];
	const node = this.getNode();
	const { lanes, lineFor } = itemConcurrency(this, c.version);
	const warnings = nodeWarnings(this);
	const counters = new CounterDeltas();
	const cancel = this.getExecutionCancelSignal?.();

	// Without expressions every item has the first item's plan but for its keys: read it once
	// (reading parameters per item was ~5 % of the node's time per item in a profile).
	const isStatic = parametersAreStatic(node.parameters);
	let firstPlan: { plan: ItemPlan; engine: Engine } | undefined;
	// A shared store reads the next item's rows while this item's call is out (readAhead.ts).
	const shared = c.shared && readAheadScopes(c.shared);
	let begun = 0;
	const more = () => begun < items.length;
	// The chains this execution called, each with a scope and its row keys (its shares given back).
	const seated = new Map<Engine, ItemPlan>();
	const one = async (i: number) => {
		begun++;
		const correlationId = correlationOf(this, i);
		try {
			let plan: ItemPlan;
			let engine: Engine;
			if (firstPlan) {
				plan = planForItem(firstPlan.plan, items[i].json);
				engine = firstPlan.engine;
			} else {
				const read = readItemPlan(this, i, c.version);
				plan = read;
				engine = engineFor(node, plan.config, (e) => configError(this, i, read, e));
				if (isStatic) firstPlan = { plan, engine };
			}
			assertRequestSecrets(node, i, plan, c.secrets, c.credentials);
			if (!seated.has(engine)) seated.set(engine, plan);
			const result = await runItem({
				call: (req, headers, deadline, signal) =>
					callProvider(this, req, headers, deadline, signal, c.credentials),
				logger: this.logger,
				engine,
				store: itemStore(shared, plan.scope, c.storeCfg, this.logger),
				plan,
				secrets: c.secrets,
				correlationId,
				cancel,
				more,
				line: lineFor?.(engine),
				tokens: planTokenFacts(plan),
			});
			const shown = { ...result, body: redactDeep(result.body, c.hidden) };
			placeItem(out, items[i], i, plan, shown, warnings, correlationId);
			const names = plan.requests.map((r) => r.name);
			counters.add(plan.scope, names, result.counters, result.committed);
		} catch (error) {
			out[FAILED].push(itemFailed(this, i, error, c.hidden));
		}
	};
	await eachInPool(items.length, lanes, one);
	for (const [engine, plan] of seated) {
		const store = itemStore(c.shared, plan.scope, c.storeCfg, this.logger);
		const keys = plan.requests.map((r) => r.name);
		await leaveSeats(engine, store, keys, this.logger);
	}
	// Counters: one write per scope per execution, never on the per-call path. Checked: a write
	// that failed, or went to this process's memory (fail-open), is a warning on every item.
	warnAll(
		out,
		await counters.write((scope) => itemStore(c.shared, scope, c.storeCfg, this.logger)),
	);
	inInputOrder(out);
	return out;
}

/** How many items run at once: a fixed number, or (version 2.1's Auto) up to Max Item Concurrency
 * lanes whose calls wait in line for each provider's window (the engine's pool, one per chain). */
function itemConcurrency(
	ctx: IExecuteFunctions,
	version: NodeVersion,
): { lanes: number; lineFor?: (engine: Engine) => Line } {
	const whole = (name: string, label: string, fallback: number, max: number) => {
		const raw = ctx.getNodeParameter(name, 0, fallback);
		const n = Number(raw);
		if (!Number.isSafeInteger(n) || n < 1 || n > max)
			throw new NodeOperationError(
				ctx.getNode(),
				`Node: "${label}" (${name}) must be a whole number from 1 to ${max}, got ${JSON.stringify(String(raw).slice(0, 50))}`,
			);
		return n;
	};
	// Version 2.0 has no Item Concurrency mode: its default (fixed) from the version's table.
	const defaults = versionDefaults('callChain', version);
	const mode = ctx.getNodeParameter('itemConcurrencyMode', 0, defaults.item_concurrency);
	if (mode !== 'auto' && mode !== 'fixed')
		throw new NodeOperationError(
			ctx.getNode(),
			`Node: "Item Concurrency" (itemConcurrencyMode) must be auto or fixed, got ${JSON.stringify(String(mode).slice(0, 50))}`,
		);
	if (mode === 'fixed') return { lanes: whole('itemConcurrency', 'Item Concurrency', 1, 1000) };
	const ceiling = whole(
		'maxItemConcurrency',
		'Max Item Concurrency',
		defaults.max_item_concurrency,
		10_000,
	);
	return { lanes: ceiling, lineFor: linesFor(ceiling) };
}

/** Said on every item: n8n's Retry On Fail around this node multiplies its calls. */
function nodeWarnings(ctx: IExecuteFunctions): string[] {
	const node = ctx.getNode();
	if (!node.retryOnFail) return [];
	const tries = node.maxTries ?? 3;
	const warning = `n8n's Retry On Fail is on for this node: its ${tries} tries multiply this node's own retries (3 x 5 = 15 calls per item). Switch it off.`;
	ctx.logger.warn(`resilient-provider-call: ${warning}`);
	return [warning];
}
