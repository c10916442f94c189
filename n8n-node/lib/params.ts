// Reads the node's parameters for one item into the engine's ChainConfig plus the request of
// each provider. Bad input is a NodeOperationError naming the field and the provider.
import { createHash } from 'crypto';
import { IDataObject, IExecuteFunctions, NodeOperationError } from 'n8n-workflow';
import type { ChainConfig } from './engine';

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
}

export interface ItemPlan {
  config: ChainConfig;
  requests: ProviderRequest[];
  keys: (string | null)[];
  scope: string;
  onExhaustion: 'deferred' | 'default';
  defaultValue: IDataObject;
}

const MAX_JSON = 1_000_000;

export function readItemPlan(ctx: IExecuteFunctions, i: number): ItemPlan {
  const node = ctx.getNode();
  const fail = (message: string, description?: string): never => {
    throw new NodeOperationError(node, message, { itemIndex: i, description });
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
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`${where}: "${field}" must be a JSON object`);
    return v as IDataObject;
  };

  const list = (ctx.getNodeParameter('providers.provider', i, []) as IDataObject[]) ?? [];
  if (list.length === 0) fail('Add at least one provider to the chain ("Providers")');
  const retry = ctx.getNodeParameter('retryPolicy', i, {}) as IDataObject;
  const breaker = ctx.getNodeParameter('breaker', i, {}) as IDataObject;
  const scopeMode = ctx.getNodeParameter('stateScope', i, 'provider') as string;
  const item = ctx.getInputData()[i]?.json ?? {};

  const requests: ProviderRequest[] = list.map((p, k) => {
    const name = String(p.name ?? '').trim();
    const where = `Provider "${name || `#${k + 1}`}" (providers[${k}])`;
    const url = String(p.url ?? '').trim();
    if (!/^https?:\/\/[^\s/]+/i.test(url)) fail(`${where}: "URL" must start with http:// or https://, got "${url.slice(0, 100)}"`);
    const headers = object('Headers (JSON)', p.headersJson, where);
    for (const [h, v] of Object.entries(headers)) {
      if (String(v).length > 8192) fail(`${where}: header "${h.slice(0, 50)}" is longer than 8 KB`);
    }
    return {
      name,
      method: String(p.method ?? 'GET'),
      url,
      qs: object('Query (JSON)', p.queryJson, where),
      headers,
      body: json('Body (JSON)', p.bodyJson, where, true),
      secretName: String(p.secretName ?? '').trim(),
      secretHeader: String(p.secretHeader ?? 'Authorization').trim() || 'Authorization',
      requiredPath: String(p.requiredPath ?? '').trim(),
    };
  });

  const num = (v: unknown): number | undefined => (v === undefined || v === '' || v === null ? undefined : Number(v));
  const optional = (v: unknown): number | null => (num(v) ? Number(v) : null); // 0 = node default
  const config: ChainConfig = {
    providers: list.map((p, k) => ({
      name: requests[k].name,
      method: requests[k].method,
      max_attempts: optional(p.maxAttempts),
      deadline_ms: optional(p.deadlineMs),
      threshold: optional(p.threshold),
      open_ms: optional(p.openMs),
      rate_limit: num(p.rateLimitRequests)
        ? { requests: Number(p.rateLimitRequests), period_ms: Number(p.rateLimitPeriodMs ?? 60000), burst: Number(p.rateLimitBurst ?? 1) }
        : null,
      max_in_flight: optional(p.maxInFlight),
    })),
  };
  const set = <K extends keyof ChainConfig>(key: K, v: unknown) => {
    if (v !== undefined && v !== '') (config as unknown as Record<string, unknown>)[key] = v;
  };
  set('strategy', retry.strategy);
  set('base_ms', num(retry.baseMs));
  set('cap_ms', num(retry.capMs));
  set('max_attempts', num(retry.maxAttempts));
  set('deadline_ms', num(retry.deadlineMs));
  set('budget_ms', num(retry.budgetMs));
  set('retry_after_cap_ms', num(retry.retryAfterCapMs));
  set('defer_spread_ms', num(retry.deferSpreadMs));
  set('retry_statuses', retry.retryStatuses);
  set('health_statuses', retry.healthStatuses);
  set('count_429', retry.count429);
  set('retry_unsafe_methods', retry.retryUnsafeMethods);
  set('trip_rule', breaker.tripRule);
  set('threshold', num(breaker.threshold));
  set('window_ms', num(breaker.windowMs));
  set('failure_rate', num(breaker.failureRate));
  set('min_calls', num(breaker.minCalls));
  set('open_ms', num(breaker.openMs));
  set('open_growth', num(breaker.openGrowth));
  set('open_max_ms', num(breaker.openMaxMs));
  set('half_open_probes', num(breaker.halfOpenProbes));
  set('successes_to_close', num(breaker.successesToClose));

  // Idempotency-Key for POST/PATCH: stable across re-runs of the same item (a deferred item
  // re-queued later sends the same key), different per provider.
  const addKey = retry.addIdempotencyKey !== false;
  const keyBase = String(retry.idempotencyKey ?? '');
  const keys = requests.map((r) => {
    if (!addKey || (r.method !== 'POST' && r.method !== 'PATCH')) return null;
    const basis = keyBase !== '' ? `${keyBase}:${r.name}` : `${JSON.stringify(item)}:${r.name}`;
    return createHash('sha256').update(basis).digest('hex').slice(0, 32);
  });

  const onExhaustion = ctx.getNodeParameter('onExhaustion', i, 'deferred') as 'deferred' | 'default';
  const defaultValue = onExhaustion === 'default' ? object('Default Value (JSON)', ctx.getNodeParameter('defaultValueJson', i, '{}'), 'Node') : {};
  const scope = scopeMode === 'workflow' ? `wf:${ctx.getWorkflow().id ?? 'unsaved'}` : 'global';
  return { config, requests, keys, scope, onExhaustion, defaultValue };
}

/** Turns the engine's `invalid_config` error into a message naming the provider and field. */
export function configError(ctx: IExecuteFunctions, i: number, plan: Pick<ItemPlan, 'requests'>, error: Error & { code?: string; field?: string }): NodeOperationError {
  const m = /^providers\[(\d+)\]\.(.+)$/.exec(error.field ?? '');
  const where = m ? `Provider "${plan.requests[Number(m[1])]?.name ?? m[1]}" (providers[${m[1]}]) ` : '';
  return new NodeOperationError(ctx.getNode(), `Invalid parameter: ${where}${m ? m[2] : error.field ?? ''}`, {
    itemIndex: i,
    description: error.message,
  });
}
