// Drives one item through the engine's step machine: read rows, poll, write, call, record.
// All decisions come from the engine; this file only moves bytes between it, the store and HTTP.
import { IDataObject, IExecuteFunctions, sleep } from 'n8n-workflow';
import type { Effect, EngineModule, Engine, Step, Transition, Writes } from './engine';
import type { ItemPlan } from './params';
import type { StateStore } from './store/types';
import { Cancelled, callProvider, missingPath } from './transport';

/** Lost compare-and-set races tolerated per write before giving up (bounded: no livelock). */
const MAX_RACES = 20;

export interface ItemResult {
  end: Extract<Step, { kind: 'done' | 'defer' | 'fail' }>;
  body?: unknown;
  status?: number;
  attempts: IDataObject[];
  skipped: IDataObject[];
  transitions: IDataObject[];
  sleptMs: number;
  totalMs: number;
}

export interface ItemContext {
  ctx: IExecuteFunctions;
  engineModule: EngineModule;
  engine: Engine;
  store: StateStore;
  plan: ItemPlan;
  secrets: Record<string, string>;
  correlationId: string;
  cancel?: AbortSignal;
}

export async function runItem(c: ItemContext): Promise<ItemResult> {
  const { ctx, engine, store, plan } = c;
  const keys = plan.requests.map((r) => `${plan.scope}:${r.name}`);
  const transitions: IDataObject[] = [];
  const noteTransition = (provider: number, t: Transition | null) => {
    if (t) transitions.push({ provider: plan.requests[provider].name, from: t.from, to: t.to, at: new Date(t.at_ms).toISOString() });
  };
  const started = Date.now();
  const first = await store.now();
  const item = engine.item(first, `${c.correlationId}:${Math.random().toString(36).slice(2, 10)}`, plan.keys);
  let body: unknown;
  let status: number | undefined;
  try {
    for (let races = 0; ; ) {
      const snap = await store.read(keys);
      const poll = item.poll(snap.now, snap.views);
      if (poll.writes && !(await store.write(keys, poll.writes))) {
        if (++races > MAX_RACES) throw new Error(`state store: ${MAX_RACES} compare-and-set races lost in a row`);
        continue; // nothing committed: re-read and poll again
      }
      races = 0;
      if (poll.writes) noteTransition(poll.writes.provider, poll.transition);
      const step = poll.step;
      if (step.kind === 'sleep') {
        await cancellableSleep(step.ms, c.cancel);
        continue;
      }
      if (step.kind !== 'call') {
        const report = item.report();
        return {
          end: step,
          body,
          status,
          attempts: report.attempts.map((a) => ({ ...a })) as unknown as IDataObject[],
          skipped: report.skipped.map((s) => ({ provider: plan.requests[s.provider].name, reason: s.reason, until: new Date(s.until_ms).toISOString() })),
          transitions,
          sleptMs: report.slept_ms,
          totalMs: Date.now() - started,
        };
      }
      const req = plan.requests[step.provider];
      const headers: IDataObject = {};
      if (step.idempotency_key) headers['Idempotency-Key'] = step.idempotency_key;
      if (req.secretName) headers[req.secretHeader] = c.secrets[req.secretName];
      const result = await callProvider(ctx, req, headers, step.deadline_ms, c.cancel);
      let outcome = result.outcome;
      if (outcome.kind === 'status' && outcome.status < 400 && req.requiredPath && missingPath(result.body, req.requiredPath)) {
        outcome = { kind: 'check_failed', check: `required_path:${req.requiredPath}` };
      }
      const effect = item.onOutcome(await store.now(), outcome, false);
      if (outcome.kind === 'status' && outcome.status < 400 && outcome.kind === 'status') {
        body = result.body;
        status = outcome.status;
      }
      logAttempt(ctx, c, step, outcome, item.report().attempts.at(-1));
      await recordEffect(c, keys, effect, noteTransition);
    }
  } finally {
    item.free();
  }
}

async function recordEffect(c: ItemContext, keys: string[], effect: Effect, note: (p: number, t: Transition | null) => void) {
  for (let races = 0; races <= MAX_RACES; races++) {
    const snap = await c.store.read([keys[effect.provider]]);
    const rec = c.engine.record(snap.views[0], effect, snap.now);
    if (!rec.writes) return; // unchanged: nothing to write (the healthy steady state)
    const w: Writes = { ...rec.writes, provider: 0 };
    if (await c.store.write([keys[effect.provider]], w)) {
      note(effect.provider, rec.transition);
      return;
    }
  }
  throw new Error(`state store: ${MAX_RACES} compare-and-set races lost in a row`);
}

async function cancellableSleep(ms: number, cancel?: AbortSignal) {
  if (!cancel) return sleep(ms);
  if (cancel.aborted) throw new Cancelled();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cancel.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new Cancelled());
    };
    cancel.addEventListener('abort', onAbort, { once: true });
  });
}

function logAttempt(ctx: IExecuteFunctions, c: ItemContext, step: Extract<Step, { kind: 'call' }>, outcome: { kind: string; status?: number; code?: string; check?: string }, log: { wait_ms: number; retry_after: boolean } | undefined) {
  const req = c.plan.requests[step.provider];
  let url = req.url;
  try {
    const u = new URL(req.url);
    url = `${u.origin}${u.pathname}`; // no query string: it may hold keys
  } catch {
    /* validated earlier */
  }
  ctx.logger.info('resilient-provider-call attempt', {
    url,
    method: req.method,
    provider: req.name,
    status: outcome.kind === 'status' ? outcome.status : undefined,
    code: outcome.kind === 'error' ? outcome.code : outcome.kind === 'check_failed' ? 'CHECK_FAILED' : undefined,
    attempt: step.attempt,
    probe: step.probe,
    waitMs: log?.wait_ms ?? 0,
    retryAfter: log?.retry_after ?? false,
    correlationId: c.correlationId,
  });
}
