// One item's conversation with the engine and the store, each exchange written once: a poll (or a
// hedge) decided on rows read and written with compare-and-set, an outcome recorded and its write
// committed, a call abandoned. It keeps what the item's result reports: the transitions its
// writes made, the races lost, the writes the engine dropped, the serving answer's body.
import type { IDataObject } from 'n8n-workflow';
import type { End, Item, Polled, Recorded, Transition } from './engine';
import { ROW_SEPARATOR } from './engineConstants';
import type { CallResult } from './attempt';
import type { CallStep } from './hedgedCalls';
import type { ItemContext } from './itemContext';
import type { ItemResult } from './itemResult';
import { logAttempt } from './attemptLog';
import { skipView, transitionView } from './resilience';
import { compareAndSet, newTally } from './store/compareAndSet';

export class ItemConversation {
	private readonly started = Date.now();
	private readonly transitions: IDataObject[] = [];
	private readonly tally = newTally();
	private readonly dropped: string[] = [];
	/** The last answer's body: when the engine says `done`, the one that served (an aborted call
	 * hands none over). */
	private body: unknown;
	/** That answer's JSON as the Answer Check parsed it. */
	private parsed: unknown;
	/** The engine was told its rows are this process's memory now (the shared store failed). */
	private onMemory = false;

	/** `keys`: each provider's name, then its key's where the chain has Key Quotas (`keyRow()`). */
	constructor(
		private readonly c: ItemContext,
		readonly item: Item,
		private readonly keys: string[],
	) {}

	/** The next step, decided on the rows read now (a lost race: read and decide again). */
	poll(): Promise<Polled> {
		return this.decide(true, (now, rows) => this.item.poll(now, rows));
	}

	/** A hedge, decided on fresh rows: the grant to rows already read is the next item's. */
	hedge(): Promise<Polled> {
		return this.decide(false, (now, rows, again) => this.item.hedge(now, rows, again));
	}

	/** A decision on the rows read now, written with compare-and-set; `granted`: it may take
	 * rows already read (readAhead.ts). */
	private async decide(
		granted: boolean,
		ask: (now: number, rows: string, again: boolean) => Polled,
	): Promise<Polled> {
		const { engine, store } = this.c;
		const { value } = await compareAndSet(
			engine,
			store,
			this.keys,
			true,
			this.tally,
			async (again) => {
				const snap = await store.read(this.keys, granted);
				this.sayWhereRowsAre();
				const polled = ask(snap.now, snap.rows.join(ROW_SEPARATOR), again);
				// A lost race writes nothing, but the pool's line moved on: its wake stands.
				this.c.line?.wake(polled.wake);
				return polled;
			},
		);
		if (value.writes) this.note(value.writes.provider, value.transition);
		return value;
	}

	/** One call's outcome to the engine, logged, its writes committed. */
	async outcome(step: CallStep, result: CallResult): Promise<Recorded> {
		this.body = result.body;
		this.parsed = result.parsed;
		const rec = this.item.outcome(await this.c.store.now(), result.outcome, step.hedging?.call);
		this.c.line?.wake(rec.wake);
		logAttempt(this.c, step, result.outcome, rec.attempt);
		await this.commit(rec);
		return rec;
	}

	/** A call closed because another's answer won, its writes committed. */
	async abandon(call: number): Promise<Recorded> {
		const rec = this.item.abandon(await this.c.store.now(), call);
		this.c.line?.wake(rec.wake);
		await this.commit(rec);
		return rec;
	}

	/** The execution was cancelled: each call out is abandoned and its writes committed, so its
	 * holds (Max In Flight's lease, a probe's, the fleet's share, the window's slot) are given back
	 * now rather than when their leases end. Best effort: the cancel still ends the item. */
	async cancelled(): Promise<void> {
		for (const call of this.item.cancelled()) await this.abandon(call).catch(() => undefined);
	}

	/** Write what an outcome did to the provider's rows; on a lost race the engine records the
	 * same outcome again on the provider's fresh rows (only its rows can have changed under it). */
	private async commit(first: Recorded): Promise<void> {
		const key = first.writes ? this.keys[first.writes.provider] : '';
		const done = await compareAndSet(
			this.c.engine,
			this.c.store,
			this.keys,
			false,
			this.tally,
			async (again) => {
				if (!again) return first;
				// The provider's rows, and the key's after them (the engine reads what follows the
				// providers as the key's).
				const snap = await this.c.store.read([
					key,
					...this.keys.slice(this.c.plan.requests.length),
				]);
				this.sayWhereRowsAre();
				return this.item.rerecord(snap.now, snap.rows.join(ROW_SEPARATOR));
			},
		);
		if (done.dropped) this.dropped.push(done.dropped);
		else if (done.value.writes) this.note(done.value.writes.provider, done.value.transition);
	}

	/** Once the store fell back to this process's memory, the engine hears it (once): its
	 * worker's calls then keep to the safe share of each fleet limit it last knew. */
	private sayWhereRowsAre(): void {
		if (this.onMemory || this.c.store.degraded === undefined) return;
		this.onMemory = true;
		this.item.onMemory();
	}

	private note(provider: number, t?: Transition): void {
		if (t) this.transitions.push(transitionView(this.keys[provider], t));
	}

	/** The item's result at its end. */
	finish(end: End): ItemResult {
		const { keys, c } = this;
		return {
			end: end.step,
			body: end.step.kind === 'done' ? this.body : undefined,
			parsed: end.step.kind === 'done' ? this.parsed : undefined,
			attempts: end.report.attempts as unknown as IDataObject[],
			skipped: end.report.skipped.map((s) => skipView(keys, s)),
			transitions: this.transitions,
			sleptMs: end.report.slept_ms,
			totalMs: Date.now() - this.started,
			storeFallback: c.store.degraded,
			storeWarning: c.store.warning,
			casRetries: this.tally.lost,
			droppedWrites: this.dropped,
			counters: end.counters,
			committed: this.tally.committed,
			windows: end.windows && Object.fromEntries(keys.map((k, p) => [k, end.windows?.[p]])),
			route: end.report.route && {
				routing: end.report.route.routing,
				order: end.report.route.order.map((p) => keys[p]),
			},
		};
	}
}
