// Reads the node's parameters for one item into the engine's ChainConfig plus the request of
// each provider. Bad input is a NodeOperationError naming the field and the provider. The parts:
// checked field values (plan/fields.ts), the Retry Policy and Breaker table (plan/policyTable.ts),
// Idempotency-Keys (plan/idempotencyKeys.ts), the state scope (plan/scope.ts), the engine's
// config errors reworded (plan/configError.ts).
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { ChainConfig } from './engine';
import type { PresetKind } from './presets';
import { extrasV2, readRowsV2 } from './providerRowsV2';
import { fieldReader } from './plan/fields';
import { readTokenLimit } from './plan/tokenLimit';
import { readKeyQuotas } from './plan/keyQuotas';
import { applyPolicy } from './plan/policyTable';
import { forVersion, versionDefaults } from './plan/versionDefaults';
import { idempotencyKeys, type KeyRule } from './plan/idempotencyKeys';
import { SCOPE_MODES, scopeName, type ScopeMode } from './plan/scope';
import { readAnswerCheck, type AnswerCheckPlan } from './plan/answerCheck';

export { configError } from './plan/configError';

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
	/** This attempt is the engine's repair round (set per attempt, never on the plan). */
	repair?: boolean;
	/** This attempt continues a broken stream (set per attempt, never on the plan). */
	continuation?: boolean;
	/** Version 2, a custom provider: the dot path to the usage its answer reports (empty: the
	 * answer's root, read as the LLM vendors' usage shapes). */
	usagePath?: string;
}

/** The node's typeVersion: how its parameters are laid out (1, or 2 and after) and, through the
 * engine's version table, what it does where the user set nothing. */
export type NodeVersion = number;

export interface ItemPlan {
	config: ChainConfig;
	requests: ProviderRequest[];
	keys: (string | null)[];
	/** How this item's Idempotency-Keys are made (the same for every item of a static plan). */
	keyRule: KeyRule;
	scope: string;
	onExhaustion: 'deferred' | 'default';
	defaultValue: IDataObject;
	/** Version 2: what a served answer must be (Answer Check). */
	answerCheck?: AnswerCheckPlan;
}

/** Whether the node's parameters hold no expression (n8n marks one with a leading "="): then
 * every item's plan is the first item's but for its Idempotency-Keys, read once per execution. */
export function parametersAreStatic(parameters: object): boolean {
	return !JSON.stringify(parameters).includes('"=');
}

/** The plan of another item of a static node: the same chain, this item's keys. */
export function planForItem(plan: ItemPlan, item: IDataObject): ItemPlan {
	return { ...plan, keys: idempotencyKeys(plan.requests, plan.keyRule, item) };
}

/** `urlRequired`: false for the guard, whose URL is only a parameter handed to the guarded node. */
export function readItemPlan(
	ctx: IExecuteFunctions,
	i: number,
	version: NodeVersion = 1,
	urlRequired = true,
): ItemPlan {
	const read = fieldReader(ctx, i);
	const { fail } = read;
	const rows = (ctx.getNodeParameter('providers.provider', i, []) as IDataObject[]) ?? [];
	if (rows.length === 0) fail('Add at least one provider to the chain ("Providers")');
	// Version 2 lays a row out differently (kind, authentication, options): read into version 1's
	// fields plus what version 2 adds.
	const list = version >= 2 ? readRowsV2(ctx, i, rows, fail) : rows;
	const retryPolicy = ctx.getNodeParameter('retryPolicy', i, {}) as IDataObject;
	const breaker = ctx.getNodeParameter('breaker', i, {}) as IDataObject;
	const scopeMode = ctx.getNodeParameter('stateScope', i, 'provider') as ScopeMode;
	const item = ctx.getInputData()[i]?.json ?? {};

	const requests: ProviderRequest[] = list.map((p, k) => {
		const name = String(p.name ?? '').trim();
		const where = `Provider "${name || `#${k + 1}`}" (providers[${k}])`;
		const url = String(p.url ?? '').trim();
		if ((urlRequired || url !== '') && !/^https?:\/\/[^\s/]+/i.test(url))
			fail(`${where}: "URL" must start with http:// or https://, got "${url.slice(0, 100)}"`);
		const headers = read.object('Headers (JSON)', p.headersJson, where);
		for (const [h, v] of Object.entries(headers)) {
			if (String(v).length > 8192) fail(`${where}: header "${h.slice(0, 50)}" is longer than 8 KB`);
		}
		const body = read.json('Body (JSON)', p.bodyJson, where, true);
		const method = String(p.method ?? 'GET');
		return {
			name,
			// Auto (version 2): POST when a body is set, else GET. Whether POST is retried is the
			// engine's rule (Idempotency-Key).
			method: version >= 2 && method === 'auto' ? (body !== undefined ? 'POST' : 'GET') : method,
			url,
			qs: read.object('Query (JSON)', p.queryJson, where),
			headers,
			body,
			secretName: String(p.secretName ?? '').trim(),
			secretHeader: String(p.secretHeader ?? 'Authorization').trim() || 'Authorization',
			requiredPath: String(p.requiredPath ?? '').trim(),
			...(version >= 2 ? extrasV2(p) : {}),
			usagePath: String(p.usagePath ?? '').trim(),
		};
	});

	const config: ChainConfig = {
		providers: list.map((p, k) => {
			const where = `Provider "${requests[k].name || `#${k + 1}`}" (providers[${k}])`;
			// Handed over as set: 0 or absent means the node's value (or no rate limit), the engine's rule.
			const field = (name: string) => read.num(p[name], name, where);
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
				weight: read.num(p.weight, 'weight', where, false),
				token_limit: readTokenLimit(p, read, where),
			};
		}),
	};
	applyPolicy(config, { retryPolicy, breaker }, read);
	config.key_quotas = readKeyQuotas(ctx, i, read);
	// What the version does where the user set nothing (2.1: items wait in line, the fleet's limit),
	// applied by the engine.
	const defaults = versionDefaults('callChain', version);
	forVersion(config, 'callChain', version, ctx.getWorkflow().id);
	const answerCheck =
		version >= 2
			? readAnswerCheck(
					ctx.getNodeParameter('answerCheck', i, {}) as IDataObject,
					defaults,
					config,
					fail,
				)
			: undefined;
	// The repair round asks an LLM preset again; any other provider could only be sent the same.
	if (answerCheck?.repair)
		config.providers.forEach((p, k) => (p.repairs = requests[k].preset !== undefined));

	const keyRule: KeyRule = {
		add: read.bool(retryPolicy.addIdempotencyKey, 'addIdempotencyKey', 'Retry Policy') !== false,
		base: String(retryPolicy.idempotencyKey ?? ''),
	};
	const keys = idempotencyKeys(requests, keyRule, item);

	const onExhaustion = ctx.getNodeParameter('onExhaustion', i, 'deferred') as
		'deferred' | 'default';
	if (onExhaustion !== 'deferred' && onExhaustion !== 'default')
		fail(
			`Node: "On Exhaustion" must be deferred or default, got ${JSON.stringify(String(onExhaustion).slice(0, 50))}`,
		);
	if (!SCOPE_MODES.includes(scopeMode))
		fail(
			`Node: "State Scope" must be provider or workflow, got ${JSON.stringify(String(scopeMode).slice(0, 50))}`,
		);
	const defaultValue =
		onExhaustion === 'default'
			? read.object(
					'Default Value (JSON)',
					ctx.getNodeParameter('defaultValueJson', i, '{}'),
					'Node',
				)
			: {};
	const scope = scopeName(scopeMode, ctx.getWorkflow().id);
	return { config, requests, keys, keyRule, scope, onExhaustion, defaultValue, answerCheck };
}
