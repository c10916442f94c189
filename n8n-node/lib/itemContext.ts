// What one item's run through the engine is given: how to call a provider, where to log, the
// engine, the item's store and plan, and what the caller asks of the item (streamed, a provider
// preferred, more items waiting).
import type { IDataObject, Logger } from 'n8n-workflow';
import type { Engine, StreamStep } from './engine';
import type { ItemPlan, ProviderRequest } from './params';
import type { FailoverStore } from './store/failover';
import type { CallResult } from './attempt';
import type { Line } from './line';
import type { Miss } from './answerCheck/repair';
import type { TokenFacts } from './tokens/requestFacts';

export interface ItemContext {
	/** One HTTP attempt (n8n's helper in the node; any real HTTP client in store tests). */
	call: (
		req: ProviderRequest,
		headers: IDataObject,
		deadlineMs: number,
		cancel?: AbortSignal,
		/** A streamed item's limits for this attempt (the engine's; absent when not streamed). */
		stream?: StreamStep,
		/** A streamed call runs this before its first committing chunk reaches the caller, with
		 * the ms since it started (its time to first chunk); false: another call of a hedging
		 * item committed first, hand nothing over. */
		claim?: (afterMs: number) => boolean,
	) => Promise<CallResult>;
	logger: Logger;
	engine: Engine;
	store: FailoverStore;
	plan: ItemPlan;
	secrets: Record<string, string>;
	correlationId: string;
	cancel?: AbortSignal;
	/** The item's calls are streamed (the chat model under a root node that streams). */
	streamed?: boolean;
	/** A provider the engine tries first while admissible (the chat model's earlier rounds). */
	prefer?: number;
	/** Item Concurrency Auto: the execution's line for this item's chain (its pool of windows). */
	line?: Line;
	/** More items of this execution wait (Call Chain): read their rows while this call is out. */
	more?: () => boolean;
	/** Each provider's last answer off the schema, for its repair round (Call Chain's presets). */
	misses?: Map<number, Miss>;
	/** What the item's request is to each provider with token limits: that provider's estimate. */
	tokens?: Array<TokenFacts | undefined>;
}
