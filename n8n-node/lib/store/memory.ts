// In-memory store: shared by every execution in this n8n process, not across queue-mode workers.
import type { BreakerRow, GateRow, InFlightRow, ProviderView, Writes } from '../engine';
import type { Snapshot, StateStore } from './types';

type Rows = { breaker?: BreakerRow; gate?: GateRow; in_flight?: InFlightRow };
const KINDS = ['breaker', 'gate', 'in_flight'] as const;

export class MemoryStore implements StateStore {
  private rows = new Map<string, Rows>();

  async read(keys: string[]): Promise<Snapshot> {
    return { now: Date.now(), views: keys.map((k) => ({ ...(this.rows.get(k) ?? {}) }) as ProviderView) };
  }

  async write(keys: string[], writes: Writes): Promise<boolean> {
    const key = keys[writes.provider];
    const current = this.rows.get(key) ?? {};
    for (const kind of KINDS) {
      const next = writes[kind];
      if (next && next.version !== (current[kind]?.version ?? 0) + 1) return false;
    }
    const updated: Rows = { ...current };
    for (const kind of KINDS) {
      const next = writes[kind];
      if (next) (updated as Record<string, unknown>)[kind] = next;
    }
    this.rows.set(key, updated);
    return true;
  }

  async now(): Promise<number> {
    return Date.now();
  }

  async reset(key: string): Promise<void> {
    this.rows.delete(key);
  }
}

/** One per n8n process, so every execution of every workflow shares it. */
export const processMemoryStore = new MemoryStore();
