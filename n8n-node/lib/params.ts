// Reads the node's parameters for one item into the engine's ChainConfig plus the request of
// each provider. Bad input is a NodeOperationError naming the field and the provider.
import { createHash } from 'crypto';
import { IDataObject, IExecuteFunctions, NodeOperationError } from 'n8n-workflow';
import type { ChainConfig } from './engine';
import type { PresetKind } from './presets';
import { extrasV2, readRowsV2 } from './providerRowsV2';

export interface ProviderRequest {
	name: string;
	method: string;
	url: string;
	qs: IDataObject;
	headers: IDataObject;
	body: unknown;
	secretName: string;
	secretHeader: string;
	requiredPath: string;
	/** Version 2: the n8n credential type that authenticates this provider (lib/auth.ts). */
	credentialType?: string;
	/** Version 2: put before the secret's value (an LLM preset's scheme, e.g. "Bearer "). */
	secretPrefix?: string;
	/** Version 2: the LLM preset that built this request and reads its answer. */
	preset?: PresetKind;
	/** Version 2: the vendor's answer body beside the one answer shape. */
	includeRawResponse?: boolean;
}

/** The node's version: how its parameters are laid out. */
export type NodeVersion = 1 | 2;

export interface ItemPlan {
	config: ChainConfig;
	requests: ProviderRequest[];
	keys: (string | null)[];
	/** How this item's Idempotency-Keys are made (the same for every item of a static plan). */
	keyRule: KeyRule;
	scope: string;
	onExhaustion: 'deferred' | 'default';
	defaultValue: IDataObject;
}

interface KeyRule {
	add: boolean;
	/** The *Idempotency Key* parameter; empty: the item's JSON. */
	base: string;
}

const MAX_JSON = 1_000_000;

/** Whether the node's parameters hold no expression (n8n marks one with a leading "="): then
 * every item's plan is the first item's but for its Idempotency-Keys, read once per execution. */
export function parametersAreStatic(parameters: object): boolean {
	return !JSON.stringify(parameters).includes('"=');
}

/** The plan of another item of a static node: the same chain, this item's keys. */
export function planForItem(plan: ItemPlan, item: IDataObject): ItemPlan {
	return { ...plan, keys: idempotencyKeys(plan.requests, plan.keyRule, item) };
}

// Idempotency-Key per provider: stable across re-runs of the same item (a deferred item re-queued
// later sends the same key), different per provider. Which methods send it is the engine's rule
// (POST and PATCH), so every provider gets one.
function idempotencyKeys(requests: ProviderRequest[], rule: KeyRule, item: IDataObject) {
	if (!rule.add) return requests.map(() => null);
	const basis = rule.base !== '' ? rule.base : JSON.stringify(item);
	return requests.map((r) =>
		createHash('sha256').update(`${basis}:${r.name}`).digest('hex').slice(0, 32),
	);
}

/** `urlRequired`: false for the guard, whose URL is only a parameter handed to the guarded node. */
export function readItemPlan(
	ctx: IExecuteFunctions,
	i: number,
	version: NodeVersion = 1,
	urlRequired = true,
): ItemPlan {
	// getNode() copies the node: only when there is an error to report (this runs per item).
	const fail = (message: string, description?: string): never => {
		throw new NodeOperationError(ctx.getNode(), message, { itemIndex: i, description });
	};
	const json = (field: string, raw: unknown, where: string, allowEmpty: boolean): unknown => {
		if (raw === undefined || raw === null) return allowEmpty ? undefined : {};
		if (typeof raw === 'object') return raw;
		const text = String(raw).trim();
		if (text === '') return allowEmpty ? undefined : {};
		if (text.length > MAX_JSON) fail(`${where}: "${field}" is larger than 1 MB`);
		try {
			return JSON.parse(text);
		} catch (e) {
			return fail(`${where}: "${field}" is not valid JSON`, (e as Error).message);
		}
	};
	const object = (field: string, raw: unknown, where: string): IDataObject => {
		const v = json(field, raw, where, false);
		if (typeof v !== 'object' || v === null || Array.isArray(v))
			fail(`${where}: "${field}" must be a JSON object`);
		return v as IDataObject;
	};

	const rows = (ctx.getNodeParameter('providers.provider', i, []) as IDataObject[]) ?? [];
	if (rows.length === 0) fail('Add at least one provider to the chain ("Providers")');
	// Version 2 lays a row out differently (kind, authentication, options): read into version 1's
	// fields plus what version 2 adds.
	const list = version === 2 ? readRowsV2(ctx, i, rows, fail) : rows;
	const retry = ctx.getNodeParameter('retryPolicy', i, {}) as IDataObject;
	const breaker = ctx.getNodeParameter('breaker', i, {}) as IDataObject;
	const scopeMode = ctx.getNodeParameter('stateScope', i, 'provider') as string;
	const item = ctx.getInputData()[i]?.json ?? {};

	const requests: ProviderRequest[] = list.map((p, k) => {
		const name = String(p.name ?? '').trim();
		const where = `Provider "${name || `#${k + 1}`}" (providers[${k}])`;
		const url = String(p.url ?? '').trim();
		if ((urlRequired || url !== '') && !/^https?:\/\/[^\s/]+/i.test(url))
			fail(`${where}: "URL" must start with http:// or https://, got "${url.slice(0, 100)}"`);
		const headers = object('Headers (JSON)', p.headersJson, where);
		for (const [h, v] of Object.entries(headers)) {
			if (String(v).length > 8192) fail(`${where}: header "${h.slice(0, 50)}" is longer than 8 KB`);
		}
		const body = json('Body (JSON)', p.bodyJson, where, true);
		const method = String(p.method ?? 'GET');
		return {
			name,
			// Auto (version 2): POST when a body is set, else GET. Whether POST is retried is the
			// engine's rule (Idempotency-Key).
			method: version === 2 && method === 'auto' ? (body !== undefined ? 'POST' : 'GET') : method,
			url,
			qs: object('Query (JSON)', p.queryJson, where),
			headers,
			body,
			secretName: String(p.secretName ?? '').trim(),
			secretHeader: String(p.secretHeader ?? 'Authorization').trim() || 'Authorization',
			requiredPath: String(p.requiredPath ?? '').trim(),
			...(version === 2 ? extrasV2(p) : {}),
		};
	});

	// Numbers: a value that is not a whole number (text, NaN, 1.5, 1e300) is an error naming the
	// field, never a silent default; ranges are the engine's to check (it names the field too).
	const num = (v: unknown, field: string, where: string, whole = true): number | undefined => {
		if (v === undefined || v === '' || v === null) return undefined;
		const n =
			typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
		if (!Number.isFinite(n) || (whole && !Number.isSafeInteger(n))) {
			fail(
				`${where}: "${field}" must be ${whole ? 'a whole number' : 'a number'}, got ${JSON.stringify(String(v).slice(0, 50))}`,
			);
		}
		return n;
	};
	const bool = (v: unknown, field: string): boolean | undefined => {
		if (v === undefined || v === '' || v === null) return undefined;
		if (typeof v !== 'boolean')
			fail(
				`Retry Policy: "${field}" must be true or false, got ${JSON.stringify(String(v).slice(0, 50))}`,
			);
		return v as boolean;
	};
	const text = (v: unknown): string | undefined =>
		v === undefined || v === null || v === '' ? undefined : String(v);
	const config: ChainConfig = {
		providers: list.map((p, k) => {
			const where = `Provider "${requests[k].name || `#${k + 1}`}" (providers[${k}])`;
			// Handed over as set: 0 or absent means the node's value (or no rate limit), the engine's rule.
			const field = (name: string) => num(p[name], name, where);
			return {
				name: requests[k].name,
				method: requests[k].method,
				max_attempts: field('maxAttempts'),
				deadline_ms: field('deadlineMs'),
				threshold: field('threshold'),
				open_ms: field('openMs'),
				rate_limit: {
					requests: field('rateLimitRequests'),
					period_ms: field('rateLimitPeriodMs'),
					burst: field('rateLimitBurst'),
				},
				max_in_flight: field('maxInFlight'),
				tier: field('tier'),
				weight: num(p.weight, 'weight', where, false),
			};
		}),
	};
	const set = <K extends keyof ChainConfig>(key: K, v: unknown) => {
		if (v !== undefined && v !== '') (config as unknown as Record<string, unknown>)[key] = v;
	};
	const R = 'Retry Policy';
	const B = 'Breaker';
	set('routing', text(retry.routing));
	set('strategy', text(retry.strategy));
	set('base_ms', num(retry.baseMs, 'baseMs', R));
	set('cap_ms', num(retry.capMs, 'capMs', R));
	set('max_attempts', num(retry.maxAttempts, 'maxAttempts', R));
	set('deadline_ms', num(retry.deadlineMs, 'deadlineMs', R));
	set('budget_ms', num(retry.budgetMs, 'budgetMs', R));
	set('retry_after_cap_ms', num(retry.retryAfterCapMs, 'retryAfterCapMs', R));
	set('defer_spread_ms', num(retry.deferSpreadMs, 'deferSpreadMs', R));
	set('retry_statuses', text(retry.retryStatuses));
	set('health_statuses', text(retry.healthStatuses));
	set('count_429', bool(retry.count429, 'count429'));
	set('retry_unsafe_methods', bool(retry.retryUnsafeMethods, 'retryUnsafeMethods'));
	set(
		'next_provider_when_input_too_long',
		bool(retry.nextProviderWhenInputTooLong, 'nextProviderWhenInputTooLong'),
	);
	set('first_chunk_deadline_ms', num(retry.firstChunkDeadlineMs, 'firstChunkDeadlineMs', R));
	set('stream_idle_ms', num(retry.streamIdleMs, 'streamIdleMs', R));
	set('fail_over_first', bool(retry.failOverFirst, 'failOverFirst'));
	set('retry_budget_percent', num(retry.retryBudgetPercent, 'retryBudgetPercent', R));
	set('retry_budget_floor_per_s', num(retry.retryBudgetFloorPerS, 'retryBudgetFloorPerS', R));
	set('retry_budget_window_ms', num(retry.retryBudgetWindowMs, 'retryBudgetWindowMs', R));
	set('hedge', text(retry.hedge));
	set('hedge_delay_ms', num(retry.hedgeDelayMs, 'hedgeDelayMs', R));
	set('hedge_min_ms', num(retry.hedgeMinMs, 'hedgeMinMs', R));
	set('hedge_max_ms', num(retry.hedgeMaxMs, 'hedgeMaxMs', R));
	set('max_hedges', num(retry.maxHedges, 'maxHedges', R));
	set('trip_rule', text(breaker.tripRule));
	set('threshold', num(breaker.threshold, 'threshold', B));
	set('window_ms', num(breaker.windowMs, 'windowMs', B));
	set('failure_rate', num(breaker.failureRate, 'failureRate', B, false));
	set('min_calls', num(breaker.minCalls, 'minCalls', B));
	set('open_ms', num(breaker.openMs, 'openMs', B));
	set('open_growth', num(breaker.openGrowth, 'openGrowth', B, false));
	set('open_max_ms', num(breaker.openMaxMs, 'openMaxMs', B));
	set('half_open_probes', num(breaker.halfOpenProbes, 'halfOpenProbes', B));
	set('successes_to_close', num(breaker.successesToClose, 'successesToClose', B));

	const keyRule: KeyRule = {
		add: bool(retry.addIdempotencyKey, 'addIdempotencyKey') !== false,
		base: String(retry.idempotencyKey ?? ''),
	};
	const keys = idempotencyKeys(requests, keyRule, item);

	const onExhaustion = ctx.getNodeParameter('onExhaustion', i, 'deferred') as
		'deferred' | 'default';
	if (onExhaustion !== 'deferred' && onExhaustion !== 'default')
		fail(
			`Node: "On Exhaustion" must be deferred or default, got ${JSON.stringify(String(onExhaustion).slice(0, 50))}`,
		);
	if (scopeMode !== 'provider' && scopeMode !== 'workflow')
		fail(
			`Node: "State Scope" must be provider or workflow, got ${JSON.stringify(String(scopeMode).slice(0, 50))}`,
		);
	const defaultValue =
		onExhaustion === 'default'
			? object('Default Value (JSON)', ctx.getNodeParameter('defaultValueJson', i, '{}'), 'Node')
			: {};
	const scope = scopeMode === 'workflow' ? `wf:${ctx.getWorkflow().id ?? 'unsaved'}` : 'global';
	return { config, requests, keys, keyRule, scope, onExhaustion, defaultValue };
}

/** Turns the engine's `invalid_config` error into a message naming the provider, the field and
 * what is wrong with it (the message alone survives n8n's continue-on-fail). */
export function configError(
	ctx: IExecuteFunctions,
	i: number,
	plan: Pick<ItemPlan, 'requests'>,
	error: Error & { code?: string; field?: string },
): NodeOperationError {
	const field = error.field ?? '';
	const m = /^providers\[(\d+)\]\.(.+)$/.exec(field);
	const where = m
		? `Provider "${plan.requests[Number(m[1])]?.name || `#${Number(m[1]) + 1}`}" (providers[${m[1]}]) `
		: '';
	const at = field ? error.message.indexOf(`${field}: `) : -1;
	const why = at >= 0 ? error.message.slice(at + field.length + 2) : error.message;
	return new NodeOperationError(
		ctx.getNode(),
		`Invalid parameter: ${where}${m ? m[2] : field}: ${why}`.slice(0, 500),
		{
			itemIndex: i,
			description: `${m ? `providers[${m[1]}].${m[2]}` : field}: ${why}`.slice(0, 2000),
		},
	);
}
