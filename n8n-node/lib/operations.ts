// Get Provider State and Reset Provider: the same store, read or cleared; the state gauge comes
// from the engine's own admission decision (seed 002: 0 closed, 1 half-open, 2 open).
import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import type { BreakerRow, Engine } from './engine';
import type { ItemPlan } from './params';
import type { StateStore } from './store/types';

const GAUGE_NAMES = ['closed', 'half_open', 'open'];

export async function providerState(engine: Engine, store: StateStore, plan: ItemPlan, storeKind: string): Promise<INodeExecutionData[]> {
  const names = plan.requests.map((r) => r.name);
  const snap = await store.read(names);
  const counters = await store.readCounters(names);
  return names.map((name, i) => {
    const view = snap.views[i];
    const b = view.breaker;
    const d = engine.admit(i, b ?? ({} as BreakerRow), snap.now, 'inspect').decision;
    const gauge = d.kind === 'skip' ? (d.reason === 'half_open_busy' ? 1 : d.reason === 'rate_limited' ? 0 : 2) : (b?.phase ?? 'closed') === 'closed' ? 0 : 1;
    const iso = (ms?: number) => (ms ? new Date(ms).toISOString() : null);
    const c = counters[name] ?? {};
    const json: IDataObject = {
      provider: name,
      scope: plan.scope,
      store: storeKind,
      state: GAUGE_NAMES[gauge],
      state_gauge: gauge,
      open_until: b?.phase === 'open' ? iso(b.open_until_ms) : null,
      trips: b?.trips ?? 0,
      recent_failures: b?.failures?.length ?? 0,
      last_failure: b?.last_failure ?? null,
      probes_in_flight: (b?.probes ?? []).filter((l) => l.until_ms > snap.now).length,
      gate_closed_until: view.gate && view.gate.closed_until_ms > snap.now ? iso(view.gate.closed_until_ms) : null,
      in_flight: (view.in_flight?.leases ?? []).filter((l) => l.until_ms > snap.now).length,
      counters: {
        calls: c.calls ?? 0, failures: c.failures ?? 0, rejections: c.rejections ?? 0, transitions: c.transitions ?? 0,
        retries: c.retries ?? 0, rate_limited_429: c.rate_limited_429 ?? 0, give_ups: c.give_ups ?? 0,
      },
    };
    return { json, pairedItem: { item: 0 } };
  });
}

export async function resetProviders(ctx: IExecuteFunctions, store: StateStore, plan: ItemPlan): Promise<INodeExecutionData[]> {
  const only = String(ctx.getNodeParameter('resetProviders', 0, '') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const names = plan.requests.map((r) => r.name).filter((n) => only.length === 0 || only.includes(n));
  for (const n of names) await store.reset(n);
  return names.map((provider) => ({ json: { provider, scope: plan.scope, reset: true }, pairedItem: { item: 0 } }));
}

/** Sum items' counters per scope and provider, with the transitions they caused. */
export function addCounters(into: Map<string, Record<string, Record<string, number>>>, plan: ItemPlan, counters: Record<string, number>[], transitions: IDataObject[]) {
  const scope = into.get(plan.scope) ?? {};
  counters.forEach((c, i) => {
    const p = (scope[plan.requests[i].name] ??= {});
    for (const [k, v] of Object.entries(c)) p[k] = (p[k] ?? 0) + v;
  });
  for (const t of transitions) {
    const p = (scope[String(t.provider)] ??= {});
    p.transitions = (p.transitions ?? 0) + 1;
  }
  into.set(plan.scope, scope);
}
